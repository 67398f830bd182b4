// Package shellcmd analyses a shell command before it runs: it parses the
// command with mvdan.cc/sh (Bash dialect), resolves quoting and escapes the way
// the shell would, and reports whether the command is hard blocked and whether
// it only reads.
//
// The package is pure and deterministic: no I/O, no clock, no environment. A
// Temporal workflow calls it while deciding, so the same command must give the
// same Verdict on every replay.
//
// # What is looked through
//
// Every simple command is analysed, wherever it sits: lists (; && || &),
// pipelines, subshells, { } blocks, if/while/for/case bodies, function bodies,
// $(...), backticks and <(...) process substitutions, here-documents, and the
// values of assignments. Brace expansion ({a,b}) is applied to arguments.
// A command run through a wrapper is analysed again as its own command:
//
//	env [-i] [-u NAME] [NAME=value...] cmd   env -S 'script'
//	sudo [opts] cmd     doas [opts] cmd      command cmd     builtin cmd
//	exec [-cl] [-a name] cmd                 nice [-n N] cmd nohup cmd
//	timeout [opts] DURATION cmd              time [opts] cmd stdbuf [opts] cmd
//	ionice [opts] cmd   xargs [opts] cmd     busybox cmd
//	sh|bash|zsh|dash|ksh|mksh|ash -c 'script' (the script is parsed again)
//	eval args...        watch [opts] args... (their arguments form a script)
//
// A command named by a path (/bin/rm, ./rm) is matched by its base name.
//
// # The hard block list (DefaultConfig)
//
//	rm-root          rm -r/-R/--recursive of /, /*, ~, ~/*, $HOME, ${HOME}, $HOME/*
//	                 (after path cleaning, so //, /. and /.. count), and any rm
//	                 with --no-preserve-root
//	mkfs             mkfs, mkfs.* and mke2fs
//	dd-device        dd with of=/dev/... other than null, zero, full, stdout,
//	                 stderr, tty, fd/N
//	fork-bomb        a function that runs itself in a pipeline or in the
//	                 background, e.g. :(){ :|:& };:
//	chmod-root       chmod/chown/chgrp -R of / or /*
//	pipe-to-shell    a shell or interpreter (sh, bash, zsh, python, perl, ruby,
//	                 node, eval, source, ...) fed by curl or wget through a pipe,
//	                 or run with a curl/wget command substitution in its words
//	                 (bash -c "$(curl ...)", bash <(curl ...), $(curl ...))
//	block-device     a writing redirection (>, >>, >|, <>, &>, &>>) or tee onto a
//	                 block device (/dev/sd*, hd*, vd*, xvd*, nvme*, mmcblk*,
//	                 disk*, dm-*, md*, loop*, mapper/*, mem, kmem, port)
//	power            shutdown, reboot, halt, poweroff, init/telinit 0|6,
//	                 systemctl poweroff|reboot|halt|kexec
//
// The analysis itself fails closed: a command that does not parse, or that
// nests scripts (bash -c inside bash -c ...) deeper than 8 levels, is blocked
// with a reason asking for a simpler command.
//
// Not caught, by design of a static check: commands whose name or target only
// exists at run time ($CMD -rf /, rm -rf "$DIR/" with DIR empty), scripts run
// from files, and aliases. Those are never read-only, so they still need
// approval unless a rule allows them.
//
// # Read-only commands
//
// A command is read-only only when every simple command in it is on this list
// with acceptable arguments, none is named by a path outside /bin, /usr/bin,
// /usr/local/bin, it has no variable assignment, and no redirection writes to
// anything but /dev/null, /dev/stdout, /dev/stderr or another descriptor:
//
//	ls cat head tail wc grep egrep fgrep pwd echo stat du df which cut tr
//	basename dirname true false test [ cd
//	rg            without --pre
//	find          without -exec, -execdir, -ok, -okdir, -delete, -fprint*, -fls
//	file          without -C/--compile
//	sort          without -o/--output/--compress-program
//	uniq          with at most one file operand (a second one is written)
//	git           status, diff, log, show (no --output, --ext-diff), rev-parse,
//	              branch with no arguments or only -a -v -vv -r --all --verbose
//	              --remotes --show-current; global options only -C DIR,
//	              --no-pager, -P, --no-optional-locks (git -c can run programs)
//	go            vet (no -vettool, -toolexec), list (no -export, -compiled,
//	              -toolexec), version, env (no -w, -u). go test is not
//	              read-only: it builds, writes caches and runs code
//	command -v/-V NAME
//
// Wrappers keep a command read-only when what they run is: env (without
// assignments), command, builtin, exec, nice, timeout, time (without -o),
// stdbuf, ionice, xargs, busybox, sh -c, eval, watch. sudo, doas and nohup never
// are. Anything else, including an unknown command, a function call, a
// command name that is computed ($(...), $VAR) or an empty command, is not
// read-only.
package shellcmd
