package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// noSessionArg lists the commands whose first argument is not a session id,
// so completion offers no ids after them.
var noSessionArg = map[string]bool{"start": true, "list": true, "completion": true, "schedule": true, "checkouts": true}

// subcommands lists the commands that take a subcommand word, with their
// subcommands, so completion offers the words and then each one's flags.
var subcommands = map[string]func() []command{"schedule": scheduleCommands}

func (a *app) cmdCompletion(_ context.Context, fs *flag.FlagSet, args []string) error {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("name one shell: bash or zsh")
	}
	switch pos[0] {
	case "bash":
		return a.writeCompletion(a.stdout, false)
	case "zsh":
		return a.writeCompletion(a.stdout, true)
	default:
		return usagef("unknown shell %q (have: bash, zsh)", pos[0])
	}
}

// commandFlags is every flag a command accepts, found by asking the command
// itself for --help: each command defines its flags before parsing, so the
// completion can never drift from the flags that really exist.
func (a *app) commandFlags(c command) (names []string, takesValue map[string]bool) {
	quiet := &app{stdout: io.Discard, stderr: io.Discard, getenv: a.getenv, dial: a.dial, cfg: a.cfg}
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	quiet.globalFlags(fs)
	// The answer is flag.ErrHelp; the flags are defined by then.
	_ = c.run(quiet, context.Background(), fs, []string{"--help"})
	takesValue = map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) {
		names = append(names, "--"+f.Name)
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !bf.IsBoolFlag() {
			takesValue["--"+f.Name] = true
		}
	})
	sort.Strings(names)
	return names, takesValue
}

// writeCompletion prints a bash completion script (zsh runs it through
// bashcompinit). Session ids are completed from `list --quiet --running`,
// so they come from the same server and environment the command will use.
func (a *app) writeCompletion(w io.Writer, zsh bool) error {
	var b strings.Builder
	fn := "_" + strings.NewReplacer("-", "_", ".", "_").Replace(progName) + "_complete"
	if zsh {
		b.WriteString("autoload -U +X bashcompinit && bashcompinit\n")
	}
	fmt.Fprintf(&b, "# %s completion; load with: source <(%s completion %s)\n", progName, progName, map[bool]string{false: "bash", true: "zsh"}[zsh])
	fmt.Fprintf(&b, "%s() {\n", fn)
	b.WriteString("  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" cmd=\"\" first=\"\" i npos=0\n")

	var cmdNames []string
	valueFlags := map[string]bool{}
	globalNames, globalValues := a.globalFlagNames()
	for f := range globalValues {
		valueFlags[f] = true
	}
	type entry struct {
		name, flags string
		session     bool
	}
	var entries []entry
	for _, c := range commands() {
		cmdNames = append(cmdNames, c.name)
		names, values := a.commandFlags(c)
		for f := range values {
			valueFlags[f] = true
		}
		entries = append(entries, entry{c.name, strings.Join(names, " "), !noSessionArg[c.name]})
	}
	cmdNames = append(cmdNames, "help")
	// For a command with subcommands: the words, each one's flags, and the
	// command that lists the names its subcommands take.
	type subEntry struct{ cmd, words, cases string }
	var subEntries []subEntry
	for _, c := range commands() {
		subs := subcommands[c.name]
		if subs == nil {
			continue
		}
		var words []string
		var cases strings.Builder
		for _, sc := range subs() {
			word := strings.TrimPrefix(sc.name, c.name+" ")
			words = append(words, word)
			names, values := a.commandFlags(sc)
			for f := range values {
				valueFlags[f] = true
			}
			fmt.Fprintf(&cases, "      %s) flags=%q ;;\n", word, strings.Join(names, " "))
		}
		subEntries = append(subEntries, subEntry{c.name, strings.Join(words, " "), cases.String()})
	}
	var vf []string
	for f := range valueFlags {
		vf = append(vf, f)
	}
	sort.Strings(vf)

	// Find the command word, skipping flags and the values they take.
	fmt.Fprintf(&b, "  for ((i=1; i<COMP_CWORD; i++)); do\n")
	fmt.Fprintf(&b, "    case \"${COMP_WORDS[i]}\" in\n")
	fmt.Fprintf(&b, "      %s) ((i++)) ;;\n", strings.Join(vf, "|"))
	fmt.Fprintf(&b, "      -*) ;;\n")
	fmt.Fprintf(&b, "      *) if [[ -z $cmd ]]; then cmd=\"${COMP_WORDS[i]}\"; else [[ $npos == 0 ]] && first=\"${COMP_WORDS[i]}\"; ((npos++)); fi ;;\n")
	fmt.Fprintf(&b, "    esac\n  done\n")
	fmt.Fprintf(&b, "  case \"$prev\" in\n    %s) COMPREPLY=(); return ;;\n  esac\n", strings.Join(vf, "|"))
	fmt.Fprintf(&b, "  if [[ -z $cmd ]]; then\n")
	fmt.Fprintf(&b, "    COMPREPLY=($(compgen -W %q -- \"$cur\")); return\n  fi\n", strings.Join(cmdNames, " ")+" "+strings.Join(globalNames, " "))
	fmt.Fprintf(&b, "  local flags=\"\" session=0\n  case \"$cmd\" in\n")
	for _, e := range entries {
		s := 0
		if e.session {
			s = 1
		}
		fmt.Fprintf(&b, "    %s) flags=%q; session=%d ;;\n", e.name, e.flags, s)
	}
	fmt.Fprintf(&b, "  esac\n")
	for _, e := range subEntries {
		fmt.Fprintf(&b, "  if [[ $cmd == %s ]]; then\n", e.cmd)
		fmt.Fprintf(&b, "    if [[ $npos == 0 && $cur != -* ]]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi\n", e.words)
		fmt.Fprintf(&b, "    case \"$first\" in\n%s    esac\n", e.cases)
		// The name after any subcommand but create and list is an
		// existing one, from the same server the command will use.
		fmt.Fprintf(&b, "    if [[ $npos == 1 && $cur != -* && $first != create && $first != list ]]; then\n")
		fmt.Fprintf(&b, "      COMPREPLY=($(compgen -W \"$(\"${COMP_WORDS[0]}\" %s list --quiet 2>/dev/null)\" -- \"$cur\")); return\n    fi\n  fi\n", e.cmd)
	}
	fmt.Fprintf(&b, "  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\")); return; fi\n")
	fmt.Fprintf(&b, "  if [[ $cmd == completion ]]; then COMPREPLY=($(compgen -W \"bash zsh\" -- \"$cur\")); return; fi\n")
	fmt.Fprintf(&b, "  if [[ $session == 1 && $npos == 0 ]]; then\n")
	fmt.Fprintf(&b, "    COMPREPLY=($(compgen -W \"$(\"${COMP_WORDS[0]}\" list --quiet --running 2>/dev/null)\" -- \"$cur\"))\n")
	fmt.Fprintf(&b, "  fi\n}\n")
	fmt.Fprintf(&b, "complete -F %s %s\n", fn, progName)
	_, err := io.WriteString(w, b.String())
	return err
}

func (a *app) globalFlagNames() (names []string, takesValue map[string]bool) {
	fs := flag.NewFlagSet("global", flag.ContinueOnError)
	cfg := a.cfg
	(&app{cfg: cfg}).globalFlags(fs)
	takesValue = map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) {
		names = append(names, "--"+f.Name)
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !bf.IsBoolFlag() {
			takesValue["--"+f.Name] = true
		}
	})
	return names, takesValue
}
