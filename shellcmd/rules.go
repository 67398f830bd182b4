package shellcmd

import (
	"path"
	"slices"
	"strings"
)

// Command is one simple command as the analysis resolved it; block rules
// inspect it. A command a wrapper runs (sudo rm ...) is a Command of its own
// that shares the wrapper's redirections and pipeline.
type Command struct {
	// Argv is the command's arguments with quotes removed; run-time
	// expansions are kept as written ("$HOME", "$(date)").
	Argv []string
	// Name is the base name of Argv[0] ("/bin/rm" is "rm").
	Name string
	// Dynamic is set when the command name only exists at run time ($CMD).
	Dynamic bool
	// Redirects are the redirections of the statement the command is in.
	Redirects []Redirect
	// Upstream names the commands in earlier stages of the pipeline feeding
	// this command's standard input.
	Upstream []string
	// Substituted names the commands run in command or process
	// substitutions within this command's words.
	Substituted []string
	// Func is the function whose body holds the command, if any.
	Func string
	// Piped is set when the command is one stage of a pipeline.
	Piped bool
	// Background is set when the command runs with &.
	Background bool
	// Appended is set when a wrapper (xargs) adds arguments the analysis
	// cannot see to the end of Argv.
	Appended bool
}

// Redirect is one redirection, with its target resolved like a word.
type Redirect struct {
	Op     string // ">", ">>", "<", "&>", ...
	Target string
}

// Rule is one entry of the hard block list.
type Rule struct {
	// Name is a short identifier, e.g. "rm-root".
	Name string
	// Reason says why such a command is refused; it reaches the model.
	Reason string
	// Match reports whether c is blocked by the rule.
	Match func(c Command) bool
}

// Config holds the hard block list. The zero Config blocks nothing but still
// refuses commands it cannot analyse.
type Config struct {
	Block []Rule
}

// DefaultConfig returns the block list documented in the package comment.
func DefaultConfig() Config {
	return Config{Block: []Rule{
		{Name: "rm-root", Reason: "recursively removes the root or home directory", Match: matchRmRoot},
		{Name: "find-root", Reason: "find deletes or runs programs over the root or home directory", Match: matchFindRoot},
		{Name: "mkfs", Reason: "formats a filesystem", Match: matchMkfs},
		{Name: "dd-device", Reason: "dd writes onto a device", Match: matchDDDevice},
		{Name: "fork-bomb", Reason: "a function that spawns itself without end (fork bomb)", Match: matchForkBomb},
		{Name: "chmod-root", Reason: "recursively changes mode or owner of the root directory", Match: matchChmodRoot},
		{Name: "pipe-to-shell", Reason: "runs code downloaded by curl or wget", Match: matchPipeToShell},
		{Name: "block-device", Reason: "writes onto a block device", Match: matchBlockDevice},
		{Name: "power", Reason: "shuts down or reboots the machine", Match: matchPower},
	}}
}

// defaultConfig is built once; rules are plain functions and never change.
var defaultConfig = DefaultConfig()

func matchRmRoot(c Command) bool {
	if c.Name != "rm" {
		return false
	}
	flags, operands := splitOperands(c.Argv[1:])
	if slices.ContainsFunc(flags, func(f string) bool { return isLongPrefix(f, "--no-preserve-root") }) {
		return true
	}
	if !hasFlag(flags, "--recursive", 'r', 'R') {
		return false
	}
	if c.Appended {
		return true // xargs rm -rf: the targets are unknown and may be /
	}
	return slices.ContainsFunc(operands, func(t string) bool { return isRootTarget(t) || isHomeTarget(t) })
}

func matchMkfs(c Command) bool {
	return strings.HasPrefix(c.Name, "mkfs") || c.Name == "mke2fs"
}

func matchDDDevice(c Command) bool {
	if c.Name != "dd" {
		return false
	}
	for _, a := range c.Argv[1:] {
		if t, ok := strings.CutPrefix(a, "of="); ok && strings.HasPrefix(path.Clean(t), "/dev/") && !isHarmlessDevice(t) {
			return true
		}
	}
	return false
}

func matchForkBomb(c Command) bool {
	return c.Func != "" && c.Name == c.Func && (c.Piped || c.Background)
}

func matchChmodRoot(c Command) bool {
	switch c.Name {
	case "chmod", "chown", "chgrp":
	default:
		return false
	}
	flags, operands := splitOperands(c.Argv[1:])
	return hasFlag(flags, "--recursive", 'R') && (c.Appended || slices.ContainsFunc(operands, isRootTarget))
}

// interpreters run code read from standard input or from their arguments.
var interpreters = []string{
	"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh",
	"python", "python2", "python3", "perl", "ruby", "node", "php", "lua",
	"eval", "source", ".",
}

func isInterpreter(name string) bool {
	if slices.Contains(interpreters, name) {
		return true
	}
	// python3.12, perl5.36 and the like.
	for _, p := range []string{"python", "perl", "ruby", "node", "php", "lua"} {
		if rest, ok := strings.CutPrefix(name, p); ok && rest != "" && strings.Trim(rest, "0123456789.") == "" {
			return true
		}
	}
	return false
}

func isFetcher(name string) bool { return name == "curl" || name == "wget" }

func matchPipeToShell(c Command) bool {
	fetched := slices.ContainsFunc(c.Substituted, isFetcher)
	if c.Dynamic && fetched {
		return true // $(curl ...) run as a command
	}
	if !isInterpreter(c.Name) {
		return false
	}
	return fetched || slices.ContainsFunc(c.Upstream, isFetcher)
}

var blockDevicePrefixes = []string{
	"/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/nvme", "/dev/mmcblk",
	"/dev/disk", "/dev/dm-", "/dev/md", "/dev/loop", "/dev/mapper/", "/dev/sr",
	"/dev/mem", "/dev/kmem", "/dev/port",
}

func isBlockDevice(t string) bool {
	t = path.Clean(t)
	return slices.ContainsFunc(blockDevicePrefixes, func(p string) bool { return strings.HasPrefix(t, p) })
}

func matchBlockDevice(c Command) bool {
	for _, r := range c.Redirects {
		if isWriteOp(r.Op) && isBlockDevice(r.Target) {
			return true
		}
	}
	if c.Name == "tee" {
		_, operands := splitOperands(c.Argv[1:])
		return slices.ContainsFunc(operands, isBlockDevice)
	}
	return false
}

func matchPower(c Command) bool {
	switch c.Name {
	case "shutdown", "reboot", "halt", "poweroff":
		return true
	case "init", "telinit":
		return len(c.Argv) > 1 && (c.Argv[1] == "0" || c.Argv[1] == "6")
	case "systemctl":
		return slices.ContainsFunc(c.Argv[1:], func(a string) bool {
			switch a {
			case "poweroff", "reboot", "halt", "kexec":
				return true
			}
			return false
		})
	}
	return false
}

// splitOperands separates option words from operands; "--" ends options.
func splitOperands(args []string) (flags, operands []string) {
	for i, a := range args {
		if a == "--" {
			return flags, append(operands, args[i+1:]...)
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
		} else {
			operands = append(operands, a)
		}
	}
	return flags, operands
}

// hasFlag reports whether flags hold the long option, or an abbreviation of
// it as GNU getopt accepts (rm --recur), or a short option cluster (-rf, -fR)
// containing one of the letters. Blocking expands abbreviations; the
// read-only check never does.
func hasFlag(flags []string, long string, short ...byte) bool {
	for _, f := range flags {
		if isLongPrefix(f, long) {
			return true
		}
		if strings.HasPrefix(f, "--") {
			continue
		}
		for _, s := range short {
			if strings.IndexByte(f[1:], s) >= 0 {
				return true
			}
		}
	}
	return false
}

// isRootTarget reports whether t names the root directory or everything in it.
func isRootTarget(t string) bool {
	if !strings.HasPrefix(t, "/") {
		return false
	}
	t = path.Clean(t)
	switch t {
	case "/", "/*", "/.*":
		return true
	}
	if path.Dir(t) == "/" && globAt(t) >= 0 {
		// /[a-z]*, /u*: a pattern matching a top-level system directory.
		for _, d := range []string{"/bin", "/boot", "/etc", "/home", "/lib", "/opt", "/root", "/usr", "/var"} {
			if ok, _ := path.Match(t, d); ok {
				return true
			}
		}
	}
	return false
}

// isHomeTarget reports whether t names the home directory, everything in it,
// or a directory above it (~/.., $HOME/../..).
func isHomeTarget(t string) bool {
	const fake = "/h0me/us3r" // where the home is taken to be, two levels deep
	for _, h := range []string{"~", "$HOME", "${HOME}"} {
		rest, ok := strings.CutPrefix(t, h)
		if !ok || (rest != "" && rest[0] != '/') {
			continue
		}
		switch p := path.Clean(fake + rest); p {
		case fake, fake + "/*", fake + "/.*", "/h0me", "/h0me/*", "/h0me/.*":
			return true
		default:
			return isRootTarget(p)
		}
	}
	return false
}

// isHarmlessDevice reports whether writing to t changes nothing on disk.
func isHarmlessDevice(t string) bool {
	switch t = path.Clean(t); t {
	case "/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return true
	}
	return strings.HasPrefix(t, "/dev/fd/")
}

func isWriteOp(op string) bool {
	switch op {
	case ">", ">>", ">|", ">>|", "<>", "&>", "&>>", "&>|", "&>>|", ">&":
		return true
	}
	return false
}
