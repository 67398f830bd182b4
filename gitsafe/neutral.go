// Package gitsafe keeps git from running what a repository names: the
// programs its configuration, its includes and its attributes can make git
// start (filters, diff and merge drivers, file system monitor, hooks,
// aliases, ssh and credential helpers), which a session controls as soon
// as it can write the repository's files. The sandbox's git (package
// tools) and the worker's own git on the host (package checkout) both take
// their neutralising configuration from here, so the two cannot drift
// apart. Plain Go over files: no process is started here.
package gitsafe

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Limits on reading a repository's git configuration for Overrides: a
// hostile repository must not make the worker read forever (a FIFO, a huge
// file, an include loop) or build an environment larger than exec allows.
const (
	ConfigMaxBytes    = 1 << 20
	configMaxIncludes = 50
	configMaxDepth    = 5
	MaxOverrides      = 500
)

// ExternalDiff replaces an external diff program the repository names
// (diff.external, diff.<driver>.command): git's own diff of the two files
// git hands an external program ($2 the old, $5 the new), so `git diff`
// still shows the change and runs nothing of the repository's. An empty
// value would not do: git 2.39 then tries to run "" and stops.
const ExternalDiff = `f() { git diff --no-index --no-ext-diff --no-textconv -- "$2" "$5"; [ $? -le 1 ]; }; f`

// always are set for every command: the programs a repository can make
// git run on an ordinary `git status`, `git diff` or `git log` (its file
// system monitor, hooks, pager, signature checks). A person who wants
// hooks to run commits outside the agent.
var always = [][2]string{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", "/dev/null"},
	{"core.pager", "cat"},
	{"log.showSignature", "false"},
}

// ifSet are keys that name a program, replaced by something harmless
// when the repository's configuration sets them. Keyed by section.name in
// lower case; the value is the replacement.
var ifSet = map[string]string{
	"diff.external":             ExternalDiff,
	"core.sshcommand":           "ssh",
	"core.askpass":              "",
	"core.gitproxy":             "",
	"core.editor":               "true",
	"sequence.editor":           "true",
	"credential.helper":         "",
	"gpg.program":               "gpg",
	"core.alternaterefscommand": "",
}

// driverKeys are the per-driver keys (section "<name>".key) that name
// a program, and their replacements: filters (run by status, diff, add,
// checkout), diff drivers (diff, log -p), merge drivers, aliases ("!cmd"
// runs a shell), remotes' upload and receive programs, credential
// helpers per URL and signing programs per format.
var driverKeys = map[string]map[string]string{
	"filter":     {"clean": "", "smudge": "", "process": "", "required": "false"},
	"diff":       {"textconv": "cat", "command": ExternalDiff},
	"merge":      {"driver": "false"},
	"remote":     {"uploadpack": "git-upload-pack", "receivepack": "git-receive-pack"},
	"credential": {"helper": ""},
	"gpg":        {"program": "gpg"},
}

// NeutralEnv returns variables that keep git, started anywhere under
// dir, from running a program the repository's configuration names: the
// system configuration is skipped (GIT_CONFIG_NOSYSTEM; the global one is
// the caller's to hide), and GIT_CONFIG_COUNT/KEY/VALUE (git >= 2.31)
// set, with the highest precedence, Overrides(dir). A repository defining
// more than MaxOverrides such keys is refused: an error, and no command
// runs.
func NeutralEnv(dir string) ([]string, error) {
	overrides, err := Overrides(dir)
	if err != nil {
		return nil, err
	}
	return ConfigEnv(overrides), nil
}

// Overrides are always plus a harmless value for every program-naming key
// found in the repository's configuration: the one git would find from
// dir upwards, its worktree and common configuration, submodules'
// configuration in its modules directory, and their includes, all read
// bounded and without following a final symlink.
func Overrides(dir string) ([][2]string, error) {
	overrides := append([][2]string(nil), always...)
	seen := map[string]bool{}
	add := func(key, value string) {
		if !seen[key] {
			seen[key] = true
			overrides = append(overrides, [2]string{key, value})
		}
	}
	r := &configReader{}
	for _, f := range ConfigFiles(dir) {
		r.read(f, 0)
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: refusing to run commands in it, since what was not read could name a program git would run", r.err)
	}
	for _, e := range r.entries {
		if e.sub == "" {
			if v, ok := ifSet[e.section+"."+e.name]; ok {
				add(e.section+"."+e.name, v)
			}
			continue
		}
		if e.section == "alias" {
			continue
		}
		keys := driverKeys[e.section]
		if _, ok := keys[e.name]; !ok {
			continue
		}
		if e.section == "filter" {
			// A neutralised filter must not be required, or every file
			// it covers would fail.
			for _, k := range []string{"clean", "smudge", "process", "required"} {
				add("filter."+e.sub+"."+k, keys[k])
			}
			continue
		}
		add(e.section+"."+e.sub+"."+e.name, keys[e.name])
	}
	// alias.<name> = "!cmd" runs a shell; an empty alias is an error.
	for _, e := range r.entries {
		if e.section == "alias" && e.sub == "" {
			add("alias."+e.name, "")
		}
	}
	if len(overrides) > MaxOverrides {
		return nil, fmt.Errorf("the repository's git configuration names %d programs (more than %d): refusing to run commands in it", len(overrides), MaxOverrides)
	}
	return overrides, nil
}

// ConfigEnv is the environment that sets overrides with the highest
// precedence (GIT_CONFIG_COUNT/KEY/VALUE), the system configuration
// skipped. For a key given twice the later value wins.
func ConfigEnv(overrides [][2]string) []string {
	env := []string{"GIT_CONFIG_NOSYSTEM=1", fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(overrides))}
	for i, o := range overrides {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, o[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, o[1]))
	}
	return env
}

// ConfigFiles are the configuration files of the repository git finds
// from dir upwards: its config and config.worktree, the common directory's
// config of a linked worktree (.git is then a file "gitdir: ..."), and its
// submodules' configurations.
func ConfigFiles(dir string) []string {
	gitDir := ""
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		// Stat, not Lstat: git follows a .git that is a symlink, so its
		// target's configuration is what must be neutralised. Reading
		// through it is bounded and refuses what is not a regular file.
		if fi, err := os.Stat(p); err == nil {
			switch {
			case fi.IsDir():
				gitDir = p
			case fi.Mode().IsRegular():
				if b, err := ReadBounded(p, 4096); err == nil {
					if g, ok := CutGitdir(string(b)); ok {
						if !filepath.IsAbs(g) {
							g = filepath.Join(d, g)
						}
						gitDir = g
					}
				}
			}
			if gitDir != "" {
				break
			}
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
	files := []string{filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree")}
	if b, err := ReadBounded(filepath.Join(gitDir, "commondir"), 4096); err == nil {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		files = append(files, filepath.Join(common, "config"))
		gitDir = common
	}
	mods, _ := filepath.Glob(filepath.Join(gitDir, "modules", "*", "config"))
	return append(files, mods...)
}

// CutGitdir reads the "gitdir: PATH" of a .git file (a linked worktree
// or a submodule).
func CutGitdir(s string) (string, bool) {
	g, ok := strings.CutPrefix(strings.TrimSpace(s), "gitdir:")
	return strings.TrimSpace(g), ok && strings.TrimSpace(g) != ""
}

// configEntry is one key of a git configuration file: section and name
// in lower case, the subsection as written.
type configEntry struct {
	section, sub, name, value string
}

// configReader collects the entries of configuration files and of the
// files they include, within the limits above.
type configReader struct {
	entries []configEntry
	files   int
	// err is set when a limit was reached: what was not read could name
	// a program, so the caller refuses rather than run half-neutralised.
	err error
}

// read parses one file; include.path and includeIf.<cond>.path are
// followed whatever the condition (reading too much only neutralises more).
func (r *configReader) read(file string, depth int) {
	if depth > configMaxDepth || r.files >= configMaxIncludes {
		r.err = fmt.Errorf("the repository's git configuration includes files more than %d deep or more than %d files", configMaxDepth, configMaxIncludes)
		return
	}
	b, err := ReadBounded(file, ConfigMaxBytes+1)
	if err != nil {
		return // missing, or not a regular file: git reads nothing there either
	}
	if len(b) > ConfigMaxBytes {
		r.err = fmt.Errorf("git configuration %s is larger than %d bytes", file, ConfigMaxBytes)
		return
	}
	r.files++
	section, sub := "", ""
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 64*1024), ConfigMaxBytes)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.LastIndexByte(line, ']')
			if end < 0 {
				continue
			}
			head := strings.TrimSpace(line[1:end])
			rest := strings.TrimSpace(line[end+1:])
			section, sub = parseSection(head)
			if rest == "" || rest[0] == '#' || rest[0] == ';' {
				continue
			}
			line = rest // "[core] fsmonitor = x" on one line
		}
		name, value, _ := strings.Cut(line, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		value = unquoteValue(strings.TrimSpace(value))
		r.entries = append(r.entries, configEntry{section: section, sub: sub, name: name, value: value})
		if name == "path" && (section == "include" || section == "includeif") && value != "" && !strings.HasPrefix(value, "~") {
			if filepath.IsAbs(value) {
				r.read(value, depth+1)
				continue
			}
			// Relative to the file's directory, as named and, when that
			// is through a symlink, as it really is: read both rather
			// than guess which git takes.
			r.read(filepath.Join(filepath.Dir(file), value), depth+1)
			if real, err := filepath.EvalSymlinks(filepath.Dir(file)); err == nil && real != filepath.Dir(file) {
				r.read(filepath.Join(real, value), depth+1)
			}
		}
	}
}

// parseSection splits `section "sub"` and the old `section.sub` (whose
// subsection git lower-cases).
func parseSection(head string) (section, sub string) {
	if name, rest, ok := strings.Cut(head, " "); ok {
		return strings.ToLower(name), unquoteValue(strings.TrimSpace(rest))
	}
	name, rest, _ := strings.Cut(head, ".")
	return strings.ToLower(name), strings.ToLower(rest)
}

// unquoteValue removes a trailing comment and the double quotes of a
// value, and git's backslash escapes; good enough to tell names apart.
func unquoteValue(v string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			b.WriteByte(v[i])
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}

// ReadBounded reads at most limit bytes of a regular file, without
// following a symlink in its last component and without blocking on a
// FIFO a hostile repository put where a configuration file should be.
func ReadBounded(name string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	return io.ReadAll(io.LimitReader(f, limit))
}
