package shellcmd

import (
	"strings"
)

// wrap describes what a wrapper command runs.
type wrap struct {
	// inner is the index in Argv where the wrapped command starts; 0 when
	// the wrapper runs no command of its own arguments.
	inner int
	// script is shell source the wrapper runs (bash -c, eval), if any.
	script *string
	// extra is a second reading of script to analyse for the block list
	// only (env -S splits words on "\_" where the shell does not).
	extra *string
	// readOnly is set when the wrapper itself changes nothing and every one
	// of its options is known exactly, so the whole is read-only when what
	// it runs is.
	readOnly bool
	// appends is set when the wrapper adds arguments the analysis cannot
	// see to the command it runs (xargs).
	appends bool
	// uncertain is set when the wrapper has an option the analysis does not
	// know, whose value may have been taken for the command: every later
	// word is then also checked against the block list as a command.
	uncertain bool
}

// shells run a script given with -c.
var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true,
}

// wrapperOpt is what the analysis knows of a wrapper's options.
type wrapperOpt struct {
	// spec lists every option the wrapper has that takes a value, so that
	// its value is never taken for the wrapped command, and the harmless
	// flags.
	spec optSpec
	// unsafe options change what the wrapped command does or writes: the
	// whole is then not read-only.
	unsafe []string
}

// wrappers holds the options of each wrapper that takes them. Options absent
// here (or abbreviated) make the wrapper not read-only; for the block list the
// wrapped command is still found.
var wrappers = map[string]wrapperOpt{
	"sudo":    {spec: opts("AbBEeHiKklNnPSsVv", "aCcDgpRrTtUu", "h", "user=", "group=", "host=", "chdir=", "chroot=", "prompt=", "role=", "type=", "close-from=", "other-user=", "command-timeout=", "preserve-env=?")},
	"doas":    {spec: opts("Lns", "uC", "")},
	"command": {spec: opts("pvV", "", "")},
	"exec":    {spec: opts("cl", "a", "")},
	"nice":    {spec: gnu(opts("0123456789", "n", "", "adjustment="))},
	"nohup":   {spec: gnu(opts("", "", ""))},
	"timeout": {spec: gnu(opts("v", "sk", "", "signal=", "kill-after=", "foreground", "preserve-status", "verbose"))},
	"time": {spec: opts("apqvV", "fo", "", "append", "portability", "verbose", "quiet", "format=", "output=", "help", "version"),
		unsafe: []string{"-o", "-a", "--output", "--append"}}, // writes a file
	"stdbuf": {spec: gnu(opts("", "ioe", "", "input=", "output=", "error="))},
	"ionice": {spec: opts("tVh", "cnpPu", "", "class=", "classdata=", "pid=", "pgid=", "uid=", "ignore", "help", "version"),
		unsafe: []string{"-p", "-P", "-u", "--pid", "--pgid", "--uid"}}, // changes other processes
	"xargs": {spec: gnu(opts("0oprtx", "adEILnPs", "eil", "null", "arg-file=", "delimiter=", "eof=?",
		"replace=?", "max-lines=?", "max-args=", "max-procs=", "max-chars=", "no-run-if-empty",
		"verbose", "exit", "show-limits", "open-tty", "interactive", "process-slot-var=")),
		unsafe: []string{"-p", "--interactive", "-o", "--open-tty"}},
	"watch": {spec: gnu(opts("bceptgxwr", "nq", "d", "interval=", "equexit=", "beep", "color",
		"no-color", "differences=?", "errexit", "exec", "precise", "no-title", "no-wrap", "chgexit", "no-rerun"))},
}

// skip finds the wrapped command of wrapper name; strict is false when an
// option is unknown, abbreviated or unsafe, unknown when one is not known at
// all.
func skip(name string, args []string) (inner int, strict, unknown bool) {
	w := wrappers[name]
	inner, strict, seen, unknown := w.spec.skipOptions(args)
	for _, o := range seen {
		for _, u := range w.unsafe {
			if o == u {
				strict = false
			}
		}
	}
	return inner, strict, unknown
}

// unwrap reports whether cmd is a wrapper and what it runs.
func unwrap(cmd Command) (wrap, bool) {
	if cmd.Dynamic {
		return wrap{}, false
	}
	args := cmd.Argv
	switch cmd.Name {
	case "env":
		return unwrapEnv(args), true
	case "sudo", "doas", "nohup":
		// sudo and doas change the user; nohup writes nohup.out.
		inner, _, unknown := skip(cmd.Name, args)
		return wrap{inner: inner, uncertain: unknown}, true
	case "command":
		inner, strict, unknown := skip(cmd.Name, args)
		end := inner
		if end == 0 {
			end = len(args)
		}
		for _, a := range args[1:end] {
			if a == "-v" || a == "-V" || (strings.HasPrefix(a, "-") && strings.ContainsAny(a, "vV")) {
				return wrap{readOnly: strict}, true // only says what a name is
			}
		}
		return wrap{inner: inner, readOnly: strict, uncertain: unknown}, true
	case "builtin":
		return wrap{inner: 1, readOnly: true}, true
	case "busybox":
		// Its applets take options of their own, not those in the tables.
		return wrap{inner: 1}, true
	case "exec", "nice", "stdbuf", "ionice", "time":
		inner, strict, unknown := skip(cmd.Name, args)
		return wrap{inner: inner, readOnly: strict, uncertain: unknown}, true
	case "timeout":
		inner, strict, unknown := skip(cmd.Name, args)
		if inner > 0 {
			inner++ // the duration
		}
		return wrap{inner: inner, readOnly: strict, uncertain: unknown}, true
	case "xargs":
		inner, strict, unknown := skip(cmd.Name, args)
		if inner == 0 || inner >= len(args) {
			return wrap{readOnly: strict, uncertain: unknown}, true // runs echo
		}
		// The command runs with arguments read from standard input, which
		// the analysis cannot see (echo -delete | xargs find . -name v).
		return wrap{inner: inner, appends: true, uncertain: unknown}, true
	case "eval":
		s := strings.Join(args[1:], " ")
		return wrap{script: &s}, true
	case "watch":
		inner, _, unknown := skip(cmd.Name, args)
		if inner == 0 {
			return wrap{uncertain: unknown}, true
		}
		// watch runs its arguments again and again as a script.
		s := strings.Join(args[inner:], " ")
		return wrap{script: &s, uncertain: unknown}, true
	}
	if shells[cmd.Name] {
		return unwrapShell(args), true
	}
	return wrap{}, false
}

// envLongs are env's long options; envSafe those that keep it read-only.
var (
	envLongs = []string{"ignore-environment", "null", "unset", "chdir", "argv0", "split-string", "debug",
		"help", "version", "default-signal", "ignore-signal", "block-signal", "list-signal-handling"}
	envSafe = map[string]bool{"ignore-environment": true, "null": true, "unset": true, "debug": true,
		"help": true, "version": true}
)

// unwrapEnv finds what env runs. NAME=value, -C and options not in envSafe
// make it not read-only. env -S splits its string itself: "\_" separates
// words and ${VAR} expands, where the shell sees one word, so a script with a
// backslash or a dollar is not read-only and is also analysed with "\_" read
// as a space.
func unwrapEnv(args []string) wrap {
	ro, uncertain := true, false
	for i := 1; i < len(args); i++ {
		a := args[i]
		script, hasScript := "", false
		switch {
		case a == "--":
			if i+1 < len(args) {
				return wrap{inner: i + 1, readOnly: ro}
			}
			return wrap{}
		case strings.HasPrefix(a, "--"):
			name, value, hasValue := strings.Cut(a[2:], "=")
			full := ""
			for _, l := range envLongs {
				if name != "" && strings.HasPrefix(l, name) {
					full = l
					break
				}
			}
			if full != name || !envSafe[full] {
				ro = false
			}
			if full == "" {
				uncertain = true
			}
			switch full {
			case "unset", "chdir", "argv0":
				if !hasValue {
					i++
				}
			case "split-string":
				if hasValue {
					script, hasScript = strings.Join(append([]string{value}, args[i+1:]...), " "), true
				} else if i+1 < len(args) {
					script, hasScript = strings.Join(args[i+1:], " "), true
				} else {
					return wrap{}
				}
			}
		case len(a) > 1 && a[0] == '-':
		letters:
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'i', '0', 'v':
				case 'u', 'C', 'a':
					if a[j] != 'u' {
						ro = false // -C: another directory; -a: another argv[0]
					}
					if j == len(a)-1 {
						i++
					}
					break letters
				case 'S':
					if j < len(a)-1 {
						script, hasScript = strings.Join(append([]string{a[j+1:]}, args[i+1:]...), " "), true
					} else if i+1 < len(args) {
						script, hasScript = strings.Join(args[i+1:], " "), true
					} else {
						return wrap{}
					}
					break letters
				default:
					ro, uncertain = false, true
				}
			}
		case strings.Contains(a, "="):
			ro = false // NAME=value
		default:
			return wrap{inner: i, readOnly: ro, uncertain: uncertain}
		}
		if hasScript {
			w := wrap{script: &script, readOnly: ro && !strings.ContainsAny(script, `\$`)}
			if strings.Contains(script, `\_`) {
				split := strings.ReplaceAll(script, `\_`, " ")
				w.extra = &split
			}
			return w
		}
	}
	return wrap{} // env alone prints the environment, secrets included
}

// unwrapShell finds the script of sh -c 'script'. A shell given a file or
// reading standard input runs something the analysis cannot see. Only -c
// and the flag letters -e -u -x -v -n keep it read-only; -l, -i, -o, -O,
// --rcfile and other options ask.
func unwrapShell(args []string) wrap {
	hasC, ro := false, true
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || a == "-":
			i++
			if hasC && i < len(args) {
				return wrap{script: &args[i], readOnly: ro}
			}
			return wrap{}
		case a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "--rcfile" || a == "--init-file":
			ro = false
			i++
		case strings.HasPrefix(a, "--"):
			ro = false
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			// -e -u -x -v -n change only how the script runs; -i and -l read
			// startup files from the home, -s reads standard input.
			if a[0] == '+' || strings.Trim(a[1:], "cexuvn") != "" {
				ro = false
			}
			if a[0] == '-' && strings.IndexByte(a, 'c') > 0 {
				hasC = true
			}
		default:
			if hasC {
				return wrap{script: &args[i], readOnly: ro}
			}
			return wrap{} // sh script.sh
		}
	}
	return wrap{} // reads commands from standard input
}
