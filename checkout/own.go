package checkout

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/longrun/longrun/gitsafe"
)

// A session's checkout is a repository of its own, not a worktree of the
// person's. A worktree shares its repository's object store: every
// checkpoint and closing commit of one session was an object every other
// session's sandbox could read (git cat-file --batch-all-objects), however
// well their refs were hidden. The session's repository borrows the
// person's objects instead (objects/info/alternates: nothing is copied,
// and the sandbox binds the person's object store read-only), and keeps
// its own objects and refs (its branch, its checkpoints) where no other
// session's sandbox reaches. The person's repository holds nothing of a
// running session but BaseRef, a ref to the person's own base commit so
// that their git gc cannot prune what the session borrows; at its close
// the branch is fetched into the person's repository, where people have
// always found it.

// BasePrefix is where the person's repository keeps a running session's
// base: refs/longrun/bases/<name>, removed at its close or discard.
const BasePrefix = "refs/longrun/bases/"

// BaseRef is the ref that keeps the base of the checkout named name in the
// person's repository while the session runs.
func BaseRef(name string) string { return BasePrefix + name }

// ownRepo reports whether the checkout at dir is a repository of its own
// (a .git directory) rather than a worktree of the person's (a .git file,
// as checkouts made before were).
func ownRepo(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil && fi.IsDir()
}

// ownPlan is what createOwn makes a checkout from, read of the person's
// repository by Create: the commit its branch starts at (the branch the
// person's repository has for it, or the base), the person's object
// store it borrows, its object format, its exclude file and the settings
// copied from it (personSettings).
type ownPlan struct {
	start, objects, format, exclude string
	settings                        [][2]string
}

// initOwn makes tmp a new, empty repository whose HEAD names branch,
// in the object format of the person's repository: what createOwn fills.
// Whatever was at tmp (an attempt killed half-way) goes first. git init
// runs once per object format and state directory, into a template
// (initTemplate); each checkout after that is a copy of what git made
// there, with its own HEAD: one git process less at every session's
// start. Anything amiss with the template, and git init runs as before.
func initOwn(ctx context.Context, stateDir, tmp, branch, format string) error {
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if tpl, err := initTemplate(ctx, stateDir, format); err == nil && plainRefName(branch) {
		if err := copyTemplate(tpl, tmp, branch); err == nil {
			return nil
		}
		if err := os.RemoveAll(tmp); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	_, err := git(ctx, tmp, nil, "init", "--quiet", "--object-format="+format, "--initial-branch="+branch, tmp)
	return err
}

// initTemplate is the directory holding the .git that git init makes for
// object format in this state directory, made the first time it is
// asked for (beside its place, then renamed: a concurrent start finds
// either none or a whole one). Its sample hooks are left out: they never
// run (the worker's git names no hooks directory of the repository's),
// and each is a file more to copy at every start.
func initTemplate(ctx context.Context, stateDir, format string) (string, error) {
	if !plainRefName(format) || strings.Contains(format, "/") {
		return "", fmt.Errorf("object format %q", format)
	}
	tpl := filepath.Join(stateDir, "git-init", format)
	if wholeTemplate(tpl) {
		return tpl, nil
	}
	if err := os.RemoveAll(tpl); err != nil { // none, or one that lost a part
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(tpl), 0o700); err != nil {
		return "", err
	}
	made, err := os.MkdirTemp(filepath.Dir(tpl), "."+format+".new-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(made)
	if _, err := git(ctx, made, nil, "init", "--quiet", "--object-format="+format, "--initial-branch=template", made); err != nil {
		return "", err
	}
	hooks := filepath.Join(made, ".git", "hooks")
	if err := os.RemoveAll(hooks); err != nil {
		return "", err
	}
	if err := os.Mkdir(hooks, 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(made, tpl); err != nil {
		if wholeTemplate(tpl) {
			return tpl, nil // made by a concurrent start
		}
		return "", err
	}
	return tpl, nil
}

// wholeTemplate reports whether tpl holds what every repository git
// init makes has: HEAD, config, objects and refs.
func wholeTemplate(tpl string) bool {
	for _, name := range []string{"HEAD", "config", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(tpl, ".git", name)); err != nil {
			return false
		}
	}
	return true
}

// copyTemplate makes tmp a copy of the template's .git (directories and
// regular files only, with their permissions), its HEAD naming branch.
func copyTemplate(tpl, tmp, branch string) error {
	src := filepath.Join(tpl, ".git")
	dst := filepath.Join(tmp, ".git")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(to, info.Mode().Perm())
		case d.Type().IsRegular():
			return copyFile(p, to, info.Mode().Perm())
		default:
			return fmt.Errorf("template %s: %s is not a file or a directory", tpl, rel)
		}
	})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dst, "HEAD"), []byte("ref: refs/heads/"+branch+"\n"), 0o644)
}

// plainRefName reports whether s is letters, digits and "/-_." only, not
// starting with '-' or '.': what BranchPrefix and Sanitize make, and git
// takes as a branch name as it is.
func plainRefName(s string) bool {
	if s == "" || s[0] == '-' || s[0] == '.' || strings.Contains(s, "..") || strings.Contains(s, "//") || strings.Contains(s, "/.") ||
		strings.HasSuffix(s, "/") || strings.HasSuffix(s, ".") || strings.HasSuffix(s, ".lock") {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/') {
			return false
		}
	}
	return true
}

// createOwn makes in.Dir a repository of its own on in.Branch at
// plan.start, from tmp, the empty repository initOwn made beside its
// place: renamed there once written, so an attempt killed half-way
// leaves nothing Create would take for a checkout. BaseRef is set in the
// person's repository while the checkout is written (one git reset
// --hard onto the branch git init named).
func createOwn(ctx context.Context, in Info, tmp string, plan ownPlan) error {
	var baseErr error
	var wg sync.WaitGroup
	wg.Go(func() { _, baseErr = git(ctx, in.Repo, nil, "update-ref", BaseRef(in.Name), in.Base) })
	err := fillOwn(ctx, tmp, plan)
	wg.Wait()
	if baseErr != nil {
		return baseErr
	}
	if err != nil {
		return err
	}
	if err := controlDirs(tmp, in.Sub); err != nil {
		return err
	}
	if err := os.RemoveAll(in.Dir); err != nil { // a directory without .git: nothing of a checkout
		return err
	}
	return os.Rename(tmp, in.Dir)
}

// fillOwn gives the empty repository at tmp the person's object store
// (alternates) and settings, and writes plan.start into it.
func fillOwn(ctx context.Context, tmp string, plan ownPlan) error {
	dotGit := filepath.Join(tmp, ".git")
	if err := os.WriteFile(filepath.Join(dotGit, "objects", "info", "alternates"), []byte(plan.objects+"\n"), 0o644); err != nil {
		return err
	}
	if err := copyPersonSettings(ctx, plan, tmp); err != nil {
		return err
	}
	_, err := git(ctx, tmp, nil, "reset", "--quiet", "--hard", plan.start)
	return err
}

// personSettingKeys are what of the person's configuration decides which
// files a checkout has and how they read: the line-ending settings and
// whether a file's executable bit counts. Nothing that names a program.
var personSettingKeys = []string{"core.autocrlf", "core.eol", "core.safecrlf", "core.fileMode"}

// personSettings are the values personSettingKeys have in the person's
// repository at repo (the last one of a key, as git config --get reads
// it; none empty), by one git config; git's answer is kept for the next
// session on the same repository while nothing it read can have changed
// (settingsKey).
func personSettings(ctx context.Context, repo, common string) [][2]string {
	key, keep := settingsKey(common)
	if keep {
		settingsCache.Lock()
		c, ok := settingsCache.m[common]
		settingsCache.Unlock()
		if ok && c.key.equal(key) {
			return c.settings
		}
	}
	out, code, err := gitCode(ctx, repo, nil, "", "config", "--null", "--get-regexp", `^core\.(autocrlf|eol|safecrlf|filemode)$`)
	if err != nil {
		if keep && code == 1 { // none set: an answer too
			rememberSettings(common, key, nil)
		}
		return nil // none set (exit 1), or none readable: none copied, as before
	}
	last := map[string]string{}
	for _, rec := range strings.Split(out, "\x00") {
		key, value, _ := strings.Cut(rec, "\n") // a key with no value: no newline
		last[strings.ToLower(key)] = strings.TrimSpace(value)
	}
	var settings [][2]string
	for _, key := range personSettingKeys {
		if v := last[strings.ToLower(key)]; v != "" {
			settings = append(settings, [2]string{key, v})
		}
	}
	if keep {
		rememberSettings(common, key, settings)
	}
	return settings
}

// settingsCache is personSettings' answers by the repository's common
// git directory, with the settingsKey they were read at.
var settingsCache = struct {
	sync.Mutex
	m map[string]cachedSettings
}{m: map[string]cachedSettings{}}

type cachedSettings struct {
	key      configKey
	settings [][2]string
}

// configKey is what stands for the content of a repository's
// configuration file: the file itself (device and inode, through
// os.SameFile), its size and its modification time.
type configKey struct {
	info os.FileInfo
	size int64
	mod  time.Time
}

func (k configKey) equal(o configKey) bool {
	return k.info != nil && o.info != nil && os.SameFile(k.info, o.info) && k.size == o.size && k.mod.Equal(o.mod)
}

// settingsKey is the key of the configuration file in common, and
// whether git's answer from it may be kept: the only file git config
// reads for the worker's git is that one (HostEnv skips the system and
// global ones), so the answer holds while it is the same file, unchanged,
// unless it names another file (include, includeIf, a worktree's own
// configuration: extensions.worktreeConfig) or was written in the last
// two seconds (a second write within the file system's clock tick could
// leave its size and time as they were).
func settingsKey(common string) (configKey, bool) {
	if common == "" || !filepath.IsAbs(common) {
		return configKey{}, false
	}
	path := filepath.Join(common, "config")
	info, err := os.Stat(path)
	if err != nil || time.Since(info.ModTime()) < 2*time.Second {
		return configKey{}, false
	}
	// A regular file within gitsafe's bound for configuration, or git is
	// asked every time.
	b, err := gitsafe.ReadBounded(path, gitsafe.ConfigMaxBytes+1)
	if err != nil || len(b) > gitsafe.ConfigMaxBytes {
		return configKey{}, false
	}
	lower := strings.ToLower(string(b))
	if strings.Contains(lower, "include") || strings.Contains(lower, "worktreeconfig") {
		return configKey{}, false
	}
	return configKey{info: info, size: info.Size(), mod: info.ModTime()}, true
}

func rememberSettings(common string, key configKey, settings [][2]string) {
	settingsCache.Lock()
	defer settingsCache.Unlock()
	if len(settingsCache.m) > 1000 {
		settingsCache.m = map[string]cachedSettings{}
	}
	settingsCache.m[common] = cachedSettings{key: key, settings: settings}
}

// copyPersonSettings gives the session's repository at dir what of the
// person's decides which files a checkout has and how they read: the
// ignore rules of .git/info/exclude and personSettings. The new
// repository's configuration is git init's, so a value that is one word
// (true, input, lf: every value these keys take) is written into it
// here; anything else by git config, which quotes it.
func copyPersonSettings(ctx context.Context, plan ownPlan, dir string) error {
	if b, err := os.ReadFile(plan.exclude); err == nil {
		if err := os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), b, 0o644); err != nil {
			return err
		}
	}
	var core strings.Builder
	for _, kv := range plan.settings {
		if plainWord(kv[1]) {
			fmt.Fprintf(&core, "\t%s = %s\n", strings.TrimPrefix(kv[0], "core."), kv[1])
			continue
		}
		if _, err := git(ctx, dir, nil, "config", kv[0], kv[1]); err != nil {
			return err
		}
	}
	if core.Len() == 0 {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString("[core]\n" + core.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// plainWord reports whether v is letters, digits, '-' and '_' only: a
// git configuration value that needs no quoting.
func plainWord(v string) bool {
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return v != ""
}

// finishOwn ends a checkout that is a repository of its own: its branch,
// and its last checkpoint, are fetched into the person's repository (the
// session's git configuration neutralised as well as the person's: git
// upload-pack runs in it), the checkout is removed, and so is BaseRef.
// Each step may run again (an activity retry).
func finishOwn(ctx context.Context, in Info) error {
	_, err := git(ctx, in.Dir, nil, "rev-parse", "--verify", "--quiet", CheckpointRef(in.Name))
	if err := bringOwn(ctx, in, err == nil); err != nil {
		return err
	}
	return dropOwn(ctx, in)
}

// bringOwn fetches the checkout's branch, its checkpoint ref when it
// has one (checkpoint) and its turns' checkpoints when KeepTurns kept
// them, into the person's repository.
func bringOwn(ctx context.Context, in Info, checkpoint bool) error {
	if in.Repo == "" || in.Repo == in.Dir {
		return errors.New("finish checkout: no person's repository to bring the branch to")
	}
	refspecs := []string{"+refs/heads/" + in.Branch + ":refs/heads/" + in.Branch}
	if checkpoint {
		refspecs = append(refspecs, "+"+CheckpointRef(in.Name)+":"+CheckpointRef(in.Name))
		if _, err := git(ctx, in.Dir, nil, "rev-parse", "--verify", "--quiet", TurnsRef(in.Name)); err == nil {
			refspecs = append(refspecs, "+"+TurnsRef(in.Name)+":"+TurnsRef(in.Name))
		}
	}
	args := append([]string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--end-of-options", in.Dir}, refspecs...)
	if _, err := gitFrom(ctx, in.Repo, in.Dir, args...); err != nil {
		return fmt.Errorf("bring branch %s into %s: %w", in.Branch, in.Repo, err)
	}
	return nil
}

// dropOwn removes a checkout whose branch is in the person's repository,
// and BaseRef there, at once: the branch keeps what BaseRef kept, and
// either, left by an attempt that stopped half-way, is what a retry
// removes (Close finds the checkout gone, or brings its branch again).
func dropOwn(ctx context.Context, in Info) error {
	if !isCheckoutDir(in) {
		return removeOwn(in) // its refusal, BaseRef left
	}
	var removed error
	var wg sync.WaitGroup
	wg.Go(func() { removed = removeOwn(in) })
	dropped := dropBaseRef(ctx, in)
	wg.Wait()
	if removed != nil {
		return removed
	}
	return dropped
}

// removeOwn removes the checkout's directory, once checked to be one of
// the worker's checkouts.
func removeOwn(in Info) error {
	if !isCheckoutDir(in) {
		return fmt.Errorf("remove checkout %s: not a checkout directory", in.Dir)
	}
	if err := os.RemoveAll(in.Dir); err != nil {
		return fmt.Errorf("remove checkout %s: %w", in.Dir, err)
	}
	return nil
}

// isCheckoutDir reports whether in.Dir is where the worker keeps the
// checkout named in.Name: <state>/checkouts/<name>.
func isCheckoutDir(in Info) bool {
	return filepath.Base(filepath.Dir(in.Dir)) == Dir && in.Name != "" && filepath.Base(in.Dir) == in.Name
}

// dropBaseRef removes BaseRef from the person's repository: the branch
// (or nothing) now keeps what it needs.
func dropBaseRef(ctx context.Context, in Info) error {
	if in.Repo == "" || in.Repo == in.Dir || in.Name == "" {
		return nil
	}
	if _, err := os.Stat(in.Repo); err != nil {
		return nil // not on this machine: nothing of it here
	}
	if _, err := git(ctx, in.Repo, nil, "update-ref", "-d", BaseRef(in.Name)); err != nil && !strings.Contains(err.Error(), "not exist") {
		return fmt.Errorf("remove %s: %w", BaseRef(in.Name), err)
	}
	return nil
}

// controlDirs makes the .longrun the checkout lacks, empty, at its top
// and at the session's working directory: the sandbox binds a control
// directory that exists read-only over itself, and cannot protect one
// that does not (bwrap would create it on the host), so without it an
// approved command could create .longrun/ with files in it. An empty
// directory is nothing to git: no checkpoint or close records it.
func controlDirs(top, sub string) error {
	for _, d := range []string{top, filepath.Join(top, filepath.FromSlash(sub))} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue // the working directory is not in the base: nothing to protect there
		}
		p := filepath.Join(d, ".longrun")
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			if err := os.Mkdir(p, 0o755); err != nil {
				return err
			}
		}
	}
	return nil
}
