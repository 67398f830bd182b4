package checkout

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/longrun/longrun/gitsafe"
	"github.com/stretchr/testify/require"
)

// The worker's secrets, as the tests below put them in its environment:
// none may reach git or anything git starts.
var workerSecrets = map[string]string{
	"OPENAI_API_KEY":         "sk-canary-openai",
	"AWS_SECRET_ACCESS_KEY":  "canary-aws-secret",
	"AWS_ACCESS_KEY_ID":      "canary-aws-id",
	"GITHUB_TOKEN":           "canary-github-token",
	"LONGRUN_NOTIFY_SECRET":  "canary-notify-secret",
	"GIT_CONFIG_PARAMETERS":  "'core.fsmonitor'='/bin/false'",
	"GIT_EXTERNAL_DIFF":      "/bin/false",
	"LONGRUN_TEST_HOST_STEP": "setup",
}

// hostile is a place outside every repository where evil.sh, the program
// every hostile key names, leaves its traces: a line in canary per run,
// and its whole environment in env.<pid>.
type hostile struct {
	dir, evil, hooks string
}

func newHostile(t *testing.T) hostile {
	t.Helper()
	h := hostile{dir: t.TempDir()}
	h.evil = filepath.Join(h.dir, "evil.sh")
	h.hooks = filepath.Join(h.dir, "hooks")
	script := fmt.Sprintf("#!/bin/sh\necho \"ran: $LONGRUN_TEST_HOST_STEP $0 $*\" >> %s/canary\nenv > %s/env.$$\ncat 2>/dev/null\nexit 0\n", h.dir, h.dir)
	require.NoError(t, os.WriteFile(h.evil, []byte(script), 0o755))
	require.NoError(t, os.MkdirAll(h.hooks, 0o755))
	for _, hook := range []string{"pre-commit", "post-commit", "post-checkout", "post-index-change", "reference-transaction",
		"pre-push", "post-merge", "prepare-commit-msg", "commit-msg", "pre-auto-gc", "post-rewrite", "fsmonitor-watchman"} {
		require.NoError(t, os.Symlink(h.evil, filepath.Join(h.hooks, hook)))
	}
	// An attributes file git reads through core.attributesFile, and a
	// file the configuration includes.
	require.NoError(t, os.WriteFile(filepath.Join(h.dir, "attributes"), []byte("* filter=evil diff=evil merge=evil\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(h.dir, "included.cfg"), []byte(fmt.Sprintf(
		"[filter \"inc\"]\n\tclean = %[1]s\n\tsmudge = %[1]s\n\tprocess = %[1]s\n[diff \"inc\"]\n\ttextconv = %[1]s\n\tcommand = %[1]s\n[merge \"inc\"]\n\tdriver = %[1]s\n",
		h.evil)), 0o644))
	return h
}

// config is a repository configuration setting every key that makes git
// run a program to evil.sh, and asking git to go into submodules.
func (h hostile) config(filter string) string {
	return fmt.Sprintf(`[core]
	fsmonitor = %[1]s
	hooksPath = %[2]s
	attributesFile = %[3]s/attributes
	sshCommand = %[1]s
	askPass = %[1]s
	pager = %[1]s
	editor = %[1]s
[credential]
	helper = !%[1]s
[diff]
	external = %[1]s
	ignoreSubmodules = none
[status]
	submoduleSummary = true
[submodule]
	recurse = true
[commit]
	gpgSign = true
[gpg]
	program = %[1]s
[filter "%[4]s"]
	clean = %[1]s
	smudge = %[1]s
	process = %[1]s
	required = true
[diff "%[4]s"]
	textconv = %[1]s
	command = %[1]s
[merge "%[4]s"]
	driver = %[1]s
[include]
	path = %[3]s/included.cfg
`, h.evil, h.hooks, h.dir, filter)
}

// check fails when evil.sh ran, saying in which step, and when any of its
// environment dumps holds a secret of the worker.
func (h hostile) check(t *testing.T, step string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(h.dir, "canary")); err == nil {
		t.Fatalf("%s: a program the repository names ran on the host:\n%s", step, b)
	}
	dumps, _ := filepath.Glob(filepath.Join(h.dir, "env.*"))
	for _, d := range dumps {
		b, err := os.ReadFile(d)
		require.NoError(t, err)
		for name, v := range workerSecrets {
			require.NotContains(t, string(b), v, "%s: %s reached a program git started", step, name)
		}
	}
	require.Empty(t, dumps, step)
}

// plainGit runs git for a test's own setup, with nothing of anyone's
// configuration.
func plainGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// nestedRepo makes a repository at dir whose own configuration sets
// every program-running key (filter "nest", applied to all its files by
// its .gitattributes), with one commit of f.txt, and then touches its
// files so any status there has to run the clean filter to compare them.
func nestedRepo(t *testing.T, h hostile, dir string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	plainGit(t, dir, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("nested\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("* filter=nest diff=nest merge=nest\n"), 0o644))
	plainGit(t, dir, "add", "f.txt", ".gitattributes")
	plainGit(t, dir, "commit", "-q", "-m", "nested")
	appendConfig(t, filepath.Join(dir, ".git", "config"), h.config("nest"))
	return plainGit(t, dir, "rev-parse", "HEAD")
}

func appendConfig(t *testing.T, file, cfg string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(cfg)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// touchAll gives every file under dir a new modification time, so git
// must read (and so filter) each to know whether it changed.
func touchAll(t *testing.T, dir string, when string) {
	t.Helper()
	cmd := exec.Command("find", dir, "-type", "f", "-not", "-path", "*/.git/*", "-exec", "touch", "-d", when, "{}", "+")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
}

// gitlinks are the gitlinks of commit's tree in repo: path -> commit.
func gitlinks(t *testing.T, repo, commit string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range strings.Split(plainGit(t, repo, "ls-tree", "-r", "--full-tree", commit), "\n") {
		meta, path, ok := strings.Cut(l, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 && f[0] == gitlinkMode {
			out[path] = f[2]
		}
	}
	return out
}

func setSecrets(t *testing.T) {
	for k, v := range workerSecrets {
		t.Setenv(k, v)
	}
}

// TestHostGitRunsNothingOfTheRepository: a person's repository whose
// .git/config, an included file, core.attributesFile and .gitattributes
// name evil.sh for every key that makes git run a program, with a
// submodule sub/ (a gitlink in the base, the way git add records one)
// whose own .git/config does the same, and a repository the session
// makes in its checkout (vendor/lib/.git, likewise hostile): every git
// the worker runs on the host over the session's files (Create,
// checkpoints in both modes, Stats, Diff, bundle, push to the remote,
// restore from it and from the bundle, Apply clean and conflicting, the
// close with its push and fetch, Discard) runs none of it, and none
// of the worker's secrets is in the environment of anything git starts.
// A checkpoint and the close record no gitlink the base does not have.
func TestHostGitRunsNothingOfTheRepository(t *testing.T) {
	setSecrets(t)
	ctx := context.Background()
	h := newHostile(t)
	step := func(s string) { t.Setenv("LONGRUN_TEST_HOST_STEP", s) }

	repo := t.TempDir()
	plainGit(t, repo, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "b.inc"), []byte("inc\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".gitattributes"), []byte("*.txt filter=evil diff=evil merge=evil\n*.inc filter=inc diff=inc merge=inc\n"), 0o644))
	subHead := nestedRepo(t, h, filepath.Join(repo, "sub"))
	plainGit(t, repo, "add", "a.txt", "b.inc", ".gitattributes", "sub") // sub as a gitlink
	plainGit(t, repo, "commit", "-q", "-m", "base")
	require.Equal(t, map[string]string{"sub": subHead}, gitlinks(t, repo, "HEAD"))
	appendConfig(t, filepath.Join(repo, ".git", "config"), h.config("evil"))
	touchAll(t, repo, "2030-01-01")
	h.check(t, "setup")

	step("create")
	in, err := Create(ctx, repo, t.TempDir(), "hostile", "")
	require.NoError(t, err)
	h.check(t, "create")

	// The session: changes files the filters cover, fills the submodule
	// with a clone at the base's commit (as a command with the network
	// could), and makes a repository of its own.
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "a.txt"), []byte("one\ntwo\nthree\nfour\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "b.inc"), []byte("inc2\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "new.txt"), []byte("new\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "AGENTS.md"), []byte("obey\n"), 0o644)) // a control file: the close resets it
	require.NoError(t, os.Remove(filepath.Join(in.Dir, "sub")))
	plainGit(t, t.TempDir(), "clone", "-q", filepath.Join(repo, "sub"), filepath.Join(in.Dir, "sub"))
	appendConfig(t, filepath.Join(in.Dir, "sub", ".git", "config"), h.config("nest"))
	nestedRepo(t, h, filepath.Join(in.Dir, "vendor", "lib"))
	touchAll(t, in.Dir, "2031-01-01")
	h.check(t, "session")

	step("checkpoint full")
	c1, err := Checkpoint(ctx, in, "")
	require.NoError(t, err)
	h.check(t, "checkpoint full")
	require.Equal(t, map[string]string{"sub": subHead}, gitlinks(t, in.Dir, c1), "the checkpoint records only the base's gitlink")
	require.Empty(t, plainGit(t, in.Dir, "ls-tree", "-r", "--name-only", c1, "vendor"), "nor the nested repository's files")
	require.Contains(t, plainGit(t, in.Dir, "ls-tree", "-r", "--name-only", c1), "new.txt")

	step("checkpoint paths")
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "a.txt"), []byte("one\ntwo\nthree\nfour\nfive\n"), 0o644))
	touchAll(t, in.Dir, "2032-01-01")
	c2, err := CheckpointPaths(ctx, in, c1, []string{"a.txt"})
	require.NoError(t, err)
	require.NotEqual(t, c1, c2)
	nestedRepo(t, h, filepath.Join(in.Dir, "more", "nested"))
	c3, err := CheckpointPaths(ctx, in, c2, []string{"more/nested/f.txt", "more/nested/.gitattributes"})
	require.NoError(t, err)
	h.check(t, "checkpoint paths")
	for _, c := range []string{c2, c3} {
		require.Equal(t, map[string]string{"sub": subHead}, gitlinks(t, in.Dir, c))
	}

	step("stats and diff")
	st, err := Stats(ctx, in.Dir, in.Base)
	require.NoError(t, err)
	require.Equal(t, 3, st.Files, "a.txt, b.inc, new.txt: %+v", st)
	patch, err := Diff(ctx, in)
	require.NoError(t, err)
	require.Contains(t, patch, "+five")
	require.NotContains(t, patch, "Subproject commit")
	h.check(t, "stats and diff")

	step("bundle and push")
	bundleFile := filepath.Join(t.TempDir(), "c.bundle")
	require.NoError(t, BundleCheckpoint(ctx, in, c3, bundleFile))
	remote := t.TempDir()
	plainGit(t, remote, "init", "-q", "--bare")
	require.NoError(t, PushCheckpoint(ctx, in.Dir, remote, in.Name, c3))
	h.check(t, "bundle and push")

	step("restore")
	r1, err := Restore(ctx, in, t.TempDir(), remote, c3)
	require.NoError(t, err)
	r2, err := RestoreBundle(ctx, in, t.TempDir(), []string{repo}, bundleFile, c3)
	require.NoError(t, err)
	for _, r := range []Info{r1, r2} {
		require.FileExists(t, filepath.Join(r.Dir, "new.txt"))
		require.NoError(t, RemoveRestored(r))
	}
	h.check(t, "restore")

	step("apply")
	other := filepath.Join(t.TempDir(), "o")
	plainGit(t, t.TempDir(), "clone", "-q", repo, other)
	appendConfig(t, filepath.Join(other, ".git", "config"), h.config("evil"))
	// An untracked file the filter covers: Apply's look at the working
	// tree hashes it.
	require.NoError(t, os.WriteFile(filepath.Join(other, "untracked.txt"), []byte("u\n"), 0o644))
	require.NoError(t, Apply(ctx, other, patch))
	// A conflicting one: git apply --3way merges a.txt (merge=evil).
	require.NoError(t, os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\nTWO\nthree\nfour\nsix\n"), 0o644))
	require.Error(t, Apply(ctx, repo, patch))
	h.check(t, "apply")

	step("close")
	closed, err := CloseTo(ctx, in, "hostile session", remote)
	require.NoError(t, err)
	require.NoError(t, FetchBranch(ctx, repo, remote, in.Branch))
	h.check(t, "close")
	require.Contains(t, closed.LeftOut, "AGENTS.md")
	require.NotEmpty(t, closed.Commit)
	require.Equal(t, map[string]string{"sub": subHead}, gitlinks(t, repo, closed.Commit), "the branch records only the base's gitlink")
	require.Contains(t, closed.LeftOut, "vendor/lib/", "the nested repository is reported as left out")
	require.Contains(t, closed.LeftOut, "more/nested/")

	step("discard")
	require.NoError(t, Discard(ctx, in))
	h.check(t, "discard")
}

// TestHostGitDropsAGitlinkLeftInTheIndex: a repository the session made
// that is in the checkout's index as a gitlink already, as git add
// records one (a worker killed between a close's add and its drop leaves
// that): the first checkpoint (its index copied from the checkout's),
// Stats, Diff and the close take it out of the index before their git
// add, so git never goes into it and no commit records it.
func TestHostGitDropsAGitlinkLeftInTheIndex(t *testing.T) {
	setSecrets(t)
	ctx := context.Background()
	h := newHostile(t)
	repo, in := oneFileCheckout(t, "left")

	head := nestedRepo(t, h, filepath.Join(in.Dir, "sub"))
	plainGit(t, in.Dir, "update-index", "--add", "--cacheinfo", gitlinkMode+","+head+",sub")
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "a.txt"), []byte("b\n"), 0o644))
	touchAll(t, in.Dir, "2031-01-01")
	h.check(t, "setup")

	t.Setenv("LONGRUN_TEST_HOST_STEP", "checkpoint")
	c1, err := Checkpoint(ctx, in, "")
	require.NoError(t, err)
	h.check(t, "checkpoint")
	require.Empty(t, gitlinks(t, in.Dir, c1))

	t.Setenv("LONGRUN_TEST_HOST_STEP", "stats and diff")
	touchAll(t, in.Dir, "2032-01-01")
	_, err = Stats(ctx, in.Dir, in.Base)
	require.NoError(t, err)
	_, err = Diff(ctx, in)
	require.NoError(t, err)
	h.check(t, "stats and diff")

	t.Setenv("LONGRUN_TEST_HOST_STEP", "close")
	closed, err := Close(ctx, in, "done")
	require.NoError(t, err)
	h.check(t, "close")
	require.Empty(t, gitlinks(t, repo, closed.Commit))
	require.Contains(t, closed.LeftOut, "sub/")
}

// TestCopyDropsNestedGit: a directory outside git that holds a vendored
// repository (vendor/lib/.git, as an extracted tarball leaves it) whose
// configuration and attributes name evil.sh: its copy leaves that .git
// out and says so (Info.Dropped), and the copy's first commit, a
// checkpoint, the close and the copy's apply run nothing of it.
func TestCopyDropsNestedGit(t *testing.T) {
	setSecrets(t)
	ctx := context.Background()
	h := newHostile(t)
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "main.txt"), []byte("main\n"), 0o644))
	nestedRepo(t, h, filepath.Join(src, "vendor", "lib"))
	touchAll(t, src, "2030-01-01")
	h.check(t, "setup")

	t.Setenv("LONGRUN_TEST_HOST_STEP", "copy")
	in, err := CreateCopy(ctx, src, t.TempDir(), "tarball", DefaultCopyLimit)
	require.NoError(t, err)
	h.check(t, "copy")
	require.Equal(t, []string{"vendor/lib/.git"}, in.Dropped)
	require.NoDirExists(t, filepath.Join(in.Dir, "vendor", "lib", ".git"))
	require.FileExists(t, filepath.Join(in.Dir, "vendor", "lib", "f.txt"), "the files beside it are copied")
	require.Empty(t, gitlinks(t, in.Dir, in.Base))
	require.Contains(t, plainGit(t, in.Dir, "ls-tree", "-r", "--name-only", in.Base), "vendor/lib/f.txt")

	// The session puts a repository back (the tarball extracted again).
	t.Setenv("LONGRUN_TEST_HOST_STEP", "session")
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "vendor", "lib", "f.txt"), []byte("changed\n"), 0o644))
	nestedRepo(t, h, filepath.Join(in.Dir, "vendor", "lib2"))
	touchAll(t, in.Dir, "2031-01-01")

	t.Setenv("LONGRUN_TEST_HOST_STEP", "copy checkpoint and close")
	c1, err := Checkpoint(ctx, in, "")
	require.NoError(t, err)
	require.Empty(t, gitlinks(t, in.Dir, c1))
	closed, err := Close(ctx, in, "done")
	require.NoError(t, err)
	require.Empty(t, gitlinks(t, in.Dir, closed.Commit))
	require.Contains(t, closed.LeftOut, "vendor/lib2/")
	applied, err := ApplyCopy(ctx, in, "")
	require.NoError(t, err)
	require.Equal(t, []string{"vendor/lib/f.txt"}, applied)
	require.NoError(t, Discard(ctx, in))
	h.check(t, "copy checkpoint and close")
}

// TestGitCmdEnvironment: the one way package checkout starts git builds
// its environment from nothing: none of the worker's variables, git's
// own overrides from the worker's environment (GIT_CONFIG_PARAMETERS,
// GIT_EXTERNAL_DIFF) gone, an empty global configuration and home, and
// the program-running keys set at the highest precedence; a push or
// fetch keeps only the worker's ssh and TLS settings besides.
func TestGitCmdEnvironment(t *testing.T) {
	setSecrets(t)
	t.Setenv("SSH_AUTH_SOCK", "/run/agent.sock")
	dir := newRepo(t)
	for _, mode := range []gitsafe.Mode{gitsafe.HostLocal, gitsafe.HostRemote} {
		cmd, err := gitCmd(context.Background(), mode, dir, []string{"GIT_INDEX_FILE=/x"}, "status")
		require.NoError(t, err)
		env := map[string]string{}
		for _, kv := range cmd.Env {
			k, v, _ := strings.Cut(kv, "=")
			require.NotContains(t, workerSecrets, k, "mode %d", mode)
			env[k] = v
		}
		require.Equal(t, "1", env["GIT_CONFIG_NOSYSTEM"])
		require.Equal(t, "/x", env["GIT_INDEX_FILE"])
		require.Equal(t, "C", env["LC_ALL"])
		keys := map[string]string{}
		for k, v := range env {
			if i, ok := strings.CutPrefix(k, "GIT_CONFIG_KEY_"); ok {
				keys[v] = env["GIT_CONFIG_VALUE_"+i]
			}
		}
		for k, v := range map[string]string{"core.fsmonitor": "false", "core.hooksPath": "/dev/null", "core.attributesFile": "/dev/null",
			"submodule.recurse": "false", "diff.ignoreSubmodules": "all", "status.submoduleSummary": "false"} {
			require.Equal(t, v, keys[k], "mode %d: %s", mode, k)
		}
		if mode == gitsafe.HostLocal {
			require.Equal(t, "/dev/null", env["GIT_CONFIG_GLOBAL"])
			require.NotEqual(t, os.Getenv("HOME"), env["HOME"])
			entries, err := os.ReadDir(env["HOME"])
			require.NoError(t, err)
			require.Empty(t, entries)
			require.Empty(t, env["SSH_AUTH_SOCK"])
			require.Equal(t, "", keys["credential.helper"])
			require.Contains(t, keys, "credential.helper")
		} else {
			require.Equal(t, "/run/agent.sock", env["SSH_AUTH_SOCK"])
		}
	}
}

// TestNestedRepositoryWithoutACommitStopsNothing: a model that runs `git
// init sub2` (allowed by a rule such as `shell:git *`) leaves a nested
// repository with no commit, which makes a plain `git add --all` fail
// ("does not have a commit checked out"): every checkpoint and the close
// would fail and the session's work be lost. It is left out instead,
// deeper ones too, and the close says so.
func TestNestedRepositoryWithoutACommitStopsNothing(t *testing.T) {
	ctx := context.Background()
	repo, in := oneFileCheckout(t, "unborn")

	plainGit(t, in.Dir, "init", "-q", "sub2")
	require.NoError(t, os.MkdirAll(filepath.Join(in.Dir, "x", "y"), 0o755))
	plainGit(t, in.Dir, "init", "-q", "x/y/deep")
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "x", "f.txt"), []byte("f\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "a.txt"), []byte("b\n"), 0o644))

	c1, err := Checkpoint(ctx, in, "")
	require.NoError(t, err, "a nested repository without a commit must not stop the checkpoint")
	require.Empty(t, gitlinks(t, in.Dir, c1))
	closed, err := Close(ctx, in, "done")
	require.NoError(t, err, "nor the close")
	require.Empty(t, gitlinks(t, repo, closed.Commit))
	require.Contains(t, closed.LeftOut, "sub2/")
	require.Contains(t, closed.LeftOut, "x/y/deep/")
	out := plainGit(t, repo, "show", closed.Commit+":x/f.txt")
	require.Equal(t, "f", out, "the files around it are on the branch")
}

// oneFileCheckout is a repository whose base commit holds a.txt ("a"),
// and the session's checkout of it.
func oneFileCheckout(t *testing.T, session string) (string, Info) {
	t.Helper()
	repo := t.TempDir()
	plainGit(t, repo, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644))
	plainGit(t, repo, "add", "a.txt")
	plainGit(t, repo, "commit", "-q", "-m", "base")
	in, err := Create(context.Background(), repo, t.TempDir(), session, "")
	require.NoError(t, err)
	return repo, in
}
