package shellcmd

import (
	"slices"
	"strings"
)

// plainReadOnly commands only read whatever their arguments.
var plainReadOnly = map[string]bool{
	"ls": true, "cat": true, "head": true, "tail": true, "wc": true, "grep": true,
	"egrep": true, "fgrep": true, "pwd": true, "echo": true, "stat": true, "du": true,
	"df": true, "which": true, "cut": true, "tr": true, "basename": true, "dirname": true,
	"true": true, "false": true, "test": true, "[": true, "cd": true,
}

// readOnly classifies one command that is not a wrapper. It errs towards
// "not read-only": a command missing here needs approval, nothing worse.
func readOnly(c Command) bool {
	if c.Dynamic {
		return false
	}
	args := c.Argv[1:]
	switch {
	case plainReadOnly[c.Name]:
		return true
	case c.Name == "rg":
		return !anyPrefix(args, "--pre")
	case c.Name == "find":
		return !slices.ContainsFunc(args, func(a string) bool {
			switch a {
			case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf":
				return true
			}
			return false
		})
	case c.Name == "file":
		return !slices.ContainsFunc(args, func(a string) bool {
			return a == "--compile" || (isShortCluster(a) && strings.Contains(a, "C"))
		})
	case c.Name == "sort":
		return !slices.ContainsFunc(args, func(a string) bool {
			return strings.HasPrefix(a, "--output") || strings.HasPrefix(a, "--compress-program") ||
				(isShortCluster(a) && strings.Contains(a, "o"))
		})
	case c.Name == "uniq":
		_, operands := splitOperands(args)
		return len(operands) <= 1
	case c.Name == "git":
		return gitReadOnly(args)
	case c.Name == "go":
		return goReadOnly(args)
	}
	return false
}

func isShortCluster(a string) bool {
	return len(a) > 1 && a[0] == '-' && a[1] != '-'
}

func anyPrefix(args []string, prefix string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, prefix) })
}

func gitReadOnly(args []string) bool {
	i := gitSubcommand(args)
	if i < 0 {
		return false
	}
	rest := args[i+1:]
	switch args[i] {
	case "status", "rev-parse":
		return true
	case "diff", "log", "show":
		return !anyPrefix(rest, "--output") && !slices.Contains(rest, "--ext-diff")
	case "branch":
		for _, a := range rest {
			switch a {
			case "-a", "--all", "-v", "-vv", "--verbose", "-r", "--remotes", "--show-current":
			default:
				return false
			}
		}
		return true
	}
	return false
}

// gitSubcommand returns the index of the subcommand after the global options
// that cannot run programs, or -1.
func gitSubcommand(args []string) int {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-C":
			i++
		case a == "--no-pager" || a == "-P" || a == "--no-optional-locks":
		case strings.HasPrefix(a, "-"):
			return -1 // -c, --exec-path, --git-dir and the like
		default:
			return i
		}
	}
	return -1
}

func goReadOnly(args []string) bool {
	if len(args) == 0 {
		return false
	}
	rest := args[1:]
	switch args[0] {
	case "version":
		return true
	case "env":
		return !slices.ContainsFunc(rest, func(a string) bool { return a == "-w" || a == "-u" })
	case "vet":
		return !anyFlag(rest, "vettool", "toolexec")
	case "list":
		return !anyFlag(rest, "export", "compiled", "toolexec")
	}
	return false
}

// anyFlag reports whether args set one of the Go-style flags (-name, --name,
// -name=value).
func anyFlag(args []string, names ...string) bool {
	for _, a := range args {
		a = strings.TrimLeft(a, "-")
		a, _, _ = strings.Cut(a, "=")
		if slices.Contains(names, a) {
			return true
		}
	}
	return false
}
