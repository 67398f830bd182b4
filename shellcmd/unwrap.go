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
	// readOnly is set when the wrapper itself changes nothing, so the whole
	// is read-only when what it runs is.
	readOnly bool
}

// shells run a script given with -c.
var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true,
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
	case "sudo":
		w := skipOptions(args, "ugCDhprtUTR", nil)
		w.readOnly = false
		return w, true
	case "doas":
		w := skipOptions(args, "uC", nil)
		w.readOnly = false
		return w, true
	case "command":
		for _, a := range args[1:] {
			if a == "-v" || a == "-V" {
				return wrap{readOnly: true}, true // only says what a name is
			}
		}
		return skipOptions(args, "", nil), true
	case "builtin", "busybox":
		return wrap{inner: 1, readOnly: true}, true
	case "exec":
		return skipOptions(args, "a", nil), true
	case "nice":
		return unwrapNice(args), true
	case "nohup":
		w := skipOptions(args, "", nil)
		w.readOnly = false // writes nohup.out
		return w, true
	case "timeout":
		w := skipOptions(args, "sk", []string{"--signal", "--kill-after"})
		if w.inner > 0 {
			w.inner++ // the duration
		}
		return w, true
	case "time":
		w := skipOptions(args, "of", []string{"--output", "--format"})
		end := w.inner
		if end == 0 {
			end = len(args)
		}
		for _, a := range args[1:end] {
			if strings.HasPrefix(a, "-o") || strings.HasPrefix(a, "--output") || strings.HasPrefix(a, "-a") || a == "--append" {
				w.readOnly = false
			}
		}
		return w, true
	case "stdbuf":
		return skipOptions(args, "ioe", []string{"--input", "--output", "--error"}), true
	case "ionice":
		return skipOptions(args, "cnpP", []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}), true
	case "xargs":
		w := skipOptions(args, "adEILnPs", []string{"--arg-file", "--delimiter", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"})
		if w.inner == 0 {
			return wrap{readOnly: true}, true // runs echo
		}
		return w, true
	case "eval":
		s := strings.Join(args[1:], " ")
		return wrap{script: &s, readOnly: true}, true
	case "watch":
		w := skipOptions(args, "nq", []string{"--interval", "--equexit"})
		if w.inner == 0 {
			return wrap{}, true
		}
		s := strings.Join(args[w.inner:], " ")
		return wrap{script: &s, readOnly: true}, true
	}
	if shells[cmd.Name] {
		return unwrapShell(args), true
	}
	return wrap{}, false
}

// skipOptions finds where the wrapped command starts after the wrapper's
// options. valued holds the short options that take a separate value,
// longValued the long ones that do unless written with "=".
func skipOptions(args []string, valued string, longValued []string) wrap {
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return wrap{inner: i + 1, readOnly: true}
			}
			return wrap{readOnly: true}
		case strings.HasPrefix(a, "--"):
			for _, l := range longValued {
				if a == l {
					i++
				}
			}
		case len(a) > 1 && a[0] == '-':
			// A cluster like -uroot or -n 5: a valued letter takes the rest
			// of the word, or the next word when it is last.
			for j := 1; j < len(a); j++ {
				if strings.IndexByte(valued, a[j]) >= 0 {
					if j == len(a)-1 {
						i++
					}
					break
				}
			}
		default:
			return wrap{inner: i, readOnly: true}
		}
	}
	return wrap{readOnly: true}
}

func unwrapEnv(args []string) wrap {
	ro := true
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			continue
		case a == "-S" || a == "--split-string":
			if i+1 < len(args) {
				s := strings.Join(args[i+1:], " ")
				return wrap{script: &s, readOnly: ro}
			}
			return wrap{}
		case strings.HasPrefix(a, "--split-string="):
			s := strings.Join(append([]string{strings.TrimPrefix(a, "--split-string=")}, args[i+1:]...), " ")
			return wrap{script: &s, readOnly: ro}
		case strings.HasPrefix(a, "-S"):
			s := strings.Join(append([]string{a[2:]}, args[i+1:]...), " ")
			return wrap{script: &s, readOnly: ro}
		case a == "-u" || a == "-C" || a == "--unset" || a == "--chdir":
			i++
		case strings.HasPrefix(a, "-"):
			// -i, -0, -v, --unset=NAME and other flags.
			if strings.HasPrefix(a, "-u") || strings.HasPrefix(a, "--unset") {
				continue
			}
		case strings.Contains(a, "="):
			ro = false // NAME=value
		default:
			return wrap{inner: i, readOnly: ro}
		}
	}
	return wrap{} // env alone prints the environment, secrets included
}

func unwrapNice(args []string) wrap {
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-n" || a == "--adjustment":
			i++
		case a == "--":
			if i+1 < len(args) {
				return wrap{inner: i + 1, readOnly: true}
			}
			return wrap{readOnly: true}
		case strings.HasPrefix(a, "-"):
			// -5, -n5, --adjustment=5
		default:
			return wrap{inner: i, readOnly: true}
		}
	}
	return wrap{readOnly: true}
}

// unwrapShell finds the script of sh -c 'script'. A shell given a file or
// reading standard input runs something the analysis cannot see.
func unwrapShell(args []string) wrap {
	hasC := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || a == "-":
			i++
			if hasC && i < len(args) {
				return wrap{script: &args[i], readOnly: true}
			}
			return wrap{}
		case a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "--rcfile" || a == "--init-file":
			i++
		case strings.HasPrefix(a, "--"):
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			if a[0] == '-' && strings.IndexByte(a, 'c') > 0 {
				hasC = true
			}
		default:
			if hasC {
				return wrap{script: &args[i], readOnly: true}
			}
			return wrap{} // sh script.sh
		}
	}
	return wrap{} // reads commands from standard input
}
