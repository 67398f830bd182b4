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
// A command named by a path (/bin/rm, ./rm) is matched by its base name. A
// wrapper's options are parsed as its getopt parses them, abbreviated long
// options included, so that an option's value is never taken for the wrapped
// command (timeout --kill-aft 1 5 rm -rf /); when a wrapper has an option the
// analysis does not know, every later word that could be a program is also
// checked against the block list as the start of a command.
//
// # The hard block list (DefaultConfig)
//
//	rm-root          rm -r/-R/--recursive of /, /*, /.*, a glob one level
//	                 under / matching a system directory (/u*, /[a-z]*), ~,
//	                 ~/*, ~/.*, $HOME, ${HOME}, $HOME/* (after path cleaning,
//	                 so //, /., /.. and ~/.. count); rm -r fed its operands
//	                 by xargs (the targets are unknown and may be /); and
//	                 any rm with --no-preserve-root
//	find-root        find on /, ~ or $HOME with -delete, -exec, -execdir, -ok
//	                 or -okdir; find fed by xargs with no expression of its own
//	mkfs             mkfs, mkfs.* and mke2fs
//	dd-device        dd with of=/dev/... other than null, zero, full, stdout,
//	                 stderr, tty, fd/N
//	fork-bomb        a function that runs itself in a pipeline or in the
//	                 background, e.g. :(){ :|:& };:
//	chmod-root       chmod/chown/chgrp -R of / or /*, or fed by xargs
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
// The rules see the normalised command. Quotes and escapes are removed
// (r""m, "rm", \rm and $'\x72m' are rm). Long options count in any
// abbreviation GNU getopt accepts (rm --recur, rm --no-pres): for blocking,
// abbreviations are expanded; for allowing (below) they never are. A
// command name holding a glob (/bin/r[m], /???/rm) is checked as every
// program a rule or a wrapper knows that the pattern matches. A computed
// command name ($(echo rm), $CMD) is checked as each of rm, chmod, chown,
// chgrp, dd and find, so "$(echo rm) -rf /" is blocked.
//
// The analysis itself fails closed: a command that does not parse, or that
// nests scripts (bash -c inside bash -c ...) deeper than 8 levels, is blocked
// with a reason asking for a simpler command.
//
// Not caught, by design of a static check: targets that only exist at run
// time (rm -rf "$DIR/" with DIR empty, find $DIR -delete), scripts run from
// files, and aliases. Those are never read-only, so they still need approval
// unless a rule allows them.
//
// # Read-only commands
//
// The read-only check is an allowlist: a command is auto-allowed only when the
// analysis understands all of it. A command is read-only only when every
// simple command in it
//
//   - is a program from the list below, named plainly or by a path in /bin,
//     /usr/bin or /usr/local/bin, never by a glob or a computed name;
//   - has only static words: no $VAR, ${...}, $(...), `...`, <(...),
//     $((...)) or extglob anywhere in it, and no unquoted glob at the start
//     of a word before "--" (a file named "--output=x" would become an
//     option);
//   - uses only options from that program's own table, parsed as GNU getopt
//     parses them: short options letter by letter in clusters (sort -uo x is
//     -u -o x), knowing which letters take a value (sort -Sfoo is -S foo),
//     options after operands included, "--" ending them. An unknown option
//     asks, and so does a long option not written out in full (sort
//     --outp=F, --compress-prog): abbreviations are never expanded into an
//     allowed option;
//   - is not arithmetic, a declaration or a coprocess: (( )), let,
//     for ((...)), declare, export, local, coproc;
//   - has no variable assignment, and no redirection writing anywhere but
//     /dev/null, /dev/stdout, /dev/stderr or another descriptor, nor one
//     whose target is computed or a glob.
//
// The programs and what their tables leave out (readonly.go, find.go,
// git.go hold the tables):
//
//	echo true false          any arguments
//	test [                   any static arguments without "$" or "`" (bash
//	                         expands test -v 'a[$(cmd)]'); [[ ]] likewise
//	ls cat head tail wc grep egrep fgrep pwd stat du df which cut tr basename
//	dirname cd               their documented reading and formatting options
//	rg                       not --pre, --pre-glob, --hostname-bin, -z
//	file                     not -C/--compile, -p, -z/-Z
//	sort                     not -o/--output, --compress-program, -T
//	uniq                     at most one file operand (a second one is written)
//	find                     only the predicates -name -iname -path -ipath
//	                         -wholename -regex -iregex -regextype -type -xtype
//	                         -maxdepth -mindepth -newer -newerXY -size -mtime
//	                         -mmin -atime -perm -user -group -links -empty
//	                         -print -print0 -printf -ls -prune -quit -not ! ( )
//	                         -o -a -and -or , and the like (find.go); no -exec,
//	                         -execdir, -ok, -okdir, -delete, -fprint*, -fls;
//	                         leading options only -H -L -P
//	git                      status, diff, log, show, rev-parse, branch (listing
//	                         only) with their tables; before the subcommand only
//	                         --no-pager, -P, --no-optional-locks: -C, --git-dir,
//	                         --work-tree, --exec-path, -c, --namespace ask.
//	                         Not --output, --ext-diff, --textconv, -O,
//	                         --no-index, --submodule, --show-signature
//	go                       version, env (no -w, -u), vet (no -vettool), list
//	                         (no -export, -compiled, -toolexec, -mod); go test
//	                         is not read-only: it builds, writes caches and runs
//	                         code
//	command -v/-V NAME
//
// Wrappers keep a command read-only when every option of theirs is known and
// harmless and what they run is read-only: env (no NAME=value, -C, and -S only
// with a script without "\" or "$", since env -S splits and expands it
// itself), command, builtin, exec, nice, timeout, time (no -o/-a), stdbuf,
// ionice (no -p/-P/-u), sh/bash/... -c with a static script and no option but
// -e -u -x -v -n (-l and -i read startup files), and xargs only when it runs no command (it then runs echo).
// xargs running a command is never read-only: it appends words the analysis
// cannot see (echo -delete | xargs find . -name v). eval, watch, sudo, doas,
// nohup and busybox never are. Anything else, including an unknown command, a
// function call or an empty command, is not read-only.
package shellcmd
