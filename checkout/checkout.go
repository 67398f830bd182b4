// Package checkout gives a session a checkout of its own: a repository of
// its own on the branch longrun/<session>, under the worker's state
// directory, from the base the person chose, borrowing the person's
// objects and brought into the person's repository at its close
// (own.go). Sessions then never edit the same files, the person's own
// checkout is never where the agent writes, and what a session changed is
// one branch (Diff, Apply, Discard). It is plain Go
// over the git command: the worker's activities create and finish
// checkouts, the starter's diff, apply and discard read them.
package checkout

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/longrun/longrun/checkout/record"
	"github.com/longrun/longrun/gitsafe"
)

// BranchPrefix is where session branches live: longrun/<session>.
const BranchPrefix = "longrun/"

// Dir is the directory under the worker's state directory that holds its
// checkouts, one per session: never inside a workspace.
const Dir = "checkouts"

// ErrNotGit marks a working directory that is not inside a git
// repository: such a session gets a copy instead (CreateCopy).
var ErrNotGit = errors.New("not a git repository")

// Info is a session's checkout, as its history records it (package
// record holds it, so the workflow reads it without linking git).
type Info = record.Info

// Sanitize makes a session id into one component that is a valid git ref
// name and a directory name: letters, digits, '.', '_' and '-', no "..",
// no leading '.' or '-', no trailing '.' or ".lock". An id that had to
// change gets a short hash of the original appended, so two ids that
// differ only in the characters replaced still get different branches.
func Sanitize(id string) string {
	var b strings.Builder
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := b.String()
	for strings.Contains(s, "..") {
		s = strings.ReplaceAll(s, "..", ".")
	}
	s = strings.TrimLeft(s, ".-")
	for strings.HasSuffix(s, ".") || strings.HasSuffix(s, ".lock") {
		s = strings.TrimSuffix(strings.TrimSuffix(s, "."), ".lock")
	}
	if len(s) > 100 {
		s = s[:100]
	}
	if s != id || s == "" {
		sum := sha256.Sum256([]byte(id))
		if s != "" {
			s += "-"
		}
		s += hex.EncodeToString(sum[:4])
	}
	return s
}

// Branch is the branch of a session.
func Branch(session string) string { return BranchPrefix + Sanitize(session) }

// Create makes the session's checkout of the repository that holds
// workDir: <stateDir>/checkouts/<name>, a repository of its own borrowing
// the person's objects (own.go), on the branch longrun/<session> at base
// ("" is HEAD). It may run again for the same session (an activity
// retry): a checkout already there is returned as it is, and a branch the
// person's repository already has is taken up rather than made again. A
// workDir outside any repository is ErrNotGit; a repository with no
// commit is ErrNoCommit, and a workDir the base does not hold (ignored,
// not committed) ErrNotInBase, both found before anything is made.
func Create(ctx context.Context, workDir, stateDir, session, base string) (Info, error) {
	if stateDir == "" {
		return Info{}, errors.New("create checkout: the worker has no state directory")
	}
	ref := base
	if ref == "" {
		ref = "HEAD"
	}
	p, err := probe(ctx, workDir, ref)
	if err != nil {
		return Info{}, err
	}
	name := Sanitize(session)
	in := Info{
		Repo: p.top, Name: name, Branch: BranchPrefix + name, Base: p.commit, BaseRef: ref,
		Dir: filepath.Join(stateDir, Dir, name), Sub: p.prefix,
	}
	// What else the checkout needs of the person's repository, read at
	// once: whether the base holds the working directory and the branch
	// is there already (one git), and the settings it copies.
	names := []string{"refs/heads/" + in.Branch + "^{commit}"}
	if p.prefix != "" {
		names = append(names, p.commit+":"+p.prefix)
	}
	if err := os.MkdirAll(filepath.Dir(in.Dir), 0o700); err != nil {
		return Info{}, fmt.Errorf("create checkout: %w", err)
	}
	// The new repository is made beside its place (createOwn), and git
	// init needs only the object format and the branch's name: it runs
	// while the person's repository is read, one git process less on the
	// way to the first model call. What it made goes with tmp when the
	// checkout is not made after all.
	tmp := filepath.Join(filepath.Dir(in.Dir), "."+in.Name+".new") // Sanitize never starts a name with '.'
	defer os.RemoveAll(tmp)
	var objs []object
	var lookErr, initErr error
	var wg sync.WaitGroup
	if p.prefix != "" || mayHaveRef(p.common, "refs/heads/"+in.Branch) {
		wg.Go(func() { objs, lookErr = lookObjects(ctx, p.top, names...) })
	} else {
		// No branch of that name (its ref files say so), and the base
		// holds the top: nothing for git cat-file to answer.
		objs = []object{{}}
	}
	wg.Go(func() { initErr = initOwn(ctx, stateDir, tmp, in.Branch, p.format) })
	settings := personSettings(ctx, p.top, p.common)
	wg.Wait()
	if p.prefix != "" && (lookErr != nil || objs[1].typ != "tree") {
		if err := inBase(ctx, p.top, p.prefix, ref, p.commit); err != nil {
			return Info{}, err
		}
	}
	if _, err := os.Stat(filepath.Join(in.Dir, ".git")); err == nil {
		return in, nil // made by an earlier attempt
	}
	if initErr != nil {
		return Info{}, fmt.Errorf("create checkout: %w", initErr)
	}
	start := in.Base
	switch {
	case lookErr != nil:
		if head, err := git(ctx, in.Repo, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+in.Branch+"^{commit}"); err == nil && head != "" {
			start = head
		}
	case objs[0].id != "":
		start = objs[0].id // a branch of that name: taken up, as git worktree add did
	}
	if err := createOwn(ctx, in, tmp, ownPlan{start: start, objects: p.objects, format: p.format, exclude: p.exclude, settings: settings}); err != nil {
		return Info{}, fmt.Errorf("create checkout: %w", err)
	}
	return in, nil
}

// Finish is Close for callers that want only the commit.
func Finish(ctx context.Context, in Info, message string) (string, error) {
	c, err := Close(ctx, in, message)
	return c.Commit, err
}

// Commit records the checkout's changes as a commit on its branch, or
// returns "" when there are none.
func Commit(ctx context.Context, dir, message string) (string, error) {
	if _, err := addAll(ctx, dir, nil); err != nil {
		return "", fmt.Errorf("commit checkout %s: %w", dir, err)
	}
	if _, err := git(ctx, dir, nil, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--cached", "--quiet"); err == nil {
		return "", nil
	}
	if strings.TrimSpace(message) == "" {
		message = "longrun session"
	}
	if _, err := git(ctx, dir, nil, "commit", "--quiet", "--no-verify", "-m", message); err != nil {
		return "", fmt.Errorf("commit checkout %s: %w", dir, err)
	}
	return git(ctx, dir, nil, "rev-parse", "HEAD")
}

// Diff is what the session changed against its base, as a patch git apply
// takes (renames as a deletion and an addition, so PatchPaths sees both
// names): the branch, and when the checkout is still there its changes not
// yet committed (untracked files too), read through a temporary index so
// the checkout's own is left as it is.
func Diff(ctx context.Context, in Info) (string, error) {
	if _, err := os.Stat(in.Dir); err != nil {
		return gitRaw(ctx, in.Repo, nil, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--binary", "--no-renames", in.Base, in.Branch, "--")
	}
	idx, err := os.CreateTemp("", "longrun-diff-index-")
	if err != nil {
		return "", fmt.Errorf("diff checkout: %w", err)
	}
	idx.Close()
	os.Remove(idx.Name()) // git makes it; an empty file is not an index
	defer os.Remove(idx.Name())
	env := []string{"GIT_INDEX_FILE=" + idx.Name()}
	if _, err := git(ctx, in.Dir, env, "read-tree", "HEAD"); err != nil {
		return "", fmt.Errorf("diff checkout: %w", err)
	}
	if _, err := addAll(ctx, in.Dir, env); err != nil {
		return "", fmt.Errorf("diff checkout: %w", err)
	}
	return gitRaw(ctx, in.Dir, env, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--binary", "--no-renames", "--cached", in.Base, "--")
}

// ErrConflict marks a diff that does not apply to the person's checkout
// as it is now.
var ErrConflict = errors.New("the session's changes conflict with the checkout")

// Apply applies patch to the checkout at dir as git apply --3way would.
// It first does the whole merge on a copy of dir's index holding its
// working tree as it is now (untracked files too), and refuses with
// ErrConflict, the checkout untouched, when a file would be left with
// conflicts; only a clean merge then touches dir, and it writes the
// merged files itself, beneath the checkout (writeMerged): a symbolic
// link on a changed file's way is refused with ErrLink, never followed.
func Apply(ctx context.Context, dir, patch string) error {
	if strings.TrimSpace(patch) == "" {
		return nil
	}
	top, err := git(ctx, dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	paths, err := patchPaths(ctx, top, patch)
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	root, err := openApplyRoot(top)
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	defer root.Close()
	for _, p := range paths { // before anything else, so the refusal names the link
		if err := root.checkWay(p); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
	}
	idx, err := os.CreateTemp("", "longrun-apply-index-")
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	defer os.Remove(idx.Name())
	real, err := git(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	// A copy keeps the index's file stats, so adding the working tree
	// hashes only what changed.
	b, err := os.ReadFile(real)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("apply: %w", err)
	}
	_, _ = idx.Write(b)
	idx.Close()
	env := []string{"GIT_INDEX_FILE=" + idx.Name()}
	if _, err := addAll(ctx, dir, env); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	if _, err := run(ctx, top, env, patch, "apply", "--3way", "--cached"); err != nil {
		return fmt.Errorf("%w: %v", ErrConflict, err)
	}
	return writeMerged(ctx, root, top, env, paths)
}

// patchPaths lists the files patch touches, from the checkout's top.
func patchPaths(ctx context.Context, top, patch string) ([]string, error) {
	stat, err := gitIn(ctx, top, patch, "apply", "--numstat", "-z")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, rec := range strings.Split(stat, "\x00") {
		if rec == "" {
			continue
		}
		f := strings.SplitN(rec, "\t", 3)
		if len(f) != 3 || f[2] == "" {
			return nil, fmt.Errorf("a patch with renames (%q); it is made without them", rec)
		}
		paths = append(paths, f[2])
	}
	return paths, nil
}

// writeMerged brings the merge Apply did in its index (env) to the
// person's checkout: each file the patch touches is written or removed
// through os.Root (applyRoot), never by git, so no write follows a link
// in the checkout; then the person's index gets the same entries, as
// git apply --3way stages them. Like git apply, it refuses when a file
// the patch touches has unstaged changes.
func writeMerged(ctx context.Context, root *applyRoot, top string, env []string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	// Whole-tree listings filtered here: a pathspec per changed file
	// could pass the argument limit.
	touched := map[string]bool{}
	for _, p := range paths {
		touched[p] = true
	}
	dirty, err := run(ctx, top, nil, "", "diff", "--name-only", "-z")
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	var unstaged []string
	for _, p := range strings.Split(dirty, "\x00") {
		if touched[p] {
			unstaged = append(unstaged, p)
		}
	}
	if len(unstaged) > 0 {
		return fmt.Errorf("%w: not staged in %s: %s (git apply --3way needs the files it changes to match the index)", ErrConflict, top, strings.Join(unstaged, ", "))
	}
	entries, err := run(ctx, top, env, "", "ls-files", "-s", "-z")
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	merged := map[string][2]string{} // path -> mode, blob
	for _, rec := range strings.Split(entries, "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		if f := strings.Fields(meta); ok && touched[p] && len(f) == 3 && f[2] == "0" {
			merged[p] = [2]string{f[0], f[1]}
		}
	}
	for _, p := range paths { // again: the way may have changed during the merge
		if err := root.checkWay(p); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
	}
	var index strings.Builder
	for _, p := range paths { // removals first: a file may become a directory
		if _, ok := merged[p]; !ok {
			if err := root.remove(p); err != nil {
				return fmt.Errorf("apply: %w", err)
			}
			fmt.Fprintf(&index, "0 %s\t%s\x00", strings.Repeat("0", 40), p)
		}
	}
	for _, p := range paths {
		e, ok := merged[p]
		if !ok {
			continue
		}
		// The file as a checkout writes it (line endings, the person's
		// filters), as git apply would; a link's blob is its target.
		args := []string{"cat-file", "--filters", "--path=" + p, e[1]}
		if e[0] == "120000" {
			args = []string{"cat-file", "blob", e[1]}
		}
		body, err := run(ctx, top, nil, "", args...)
		if err != nil {
			return fmt.Errorf("apply: %w", err)
		}
		switch e[0] {
		case "120000":
			err = root.writeLink(p, body)
		case "100755":
			err = root.writeFile(p, strings.NewReader(body), 0o755)
		case "100644":
			err = root.writeFile(p, strings.NewReader(body), 0o644)
		default:
			err = fmt.Errorf("%s: mode %s (a submodule?) is not applied", p, e[0])
		}
		if err != nil {
			return fmt.Errorf("apply: %w", err)
		}
		fmt.Fprintf(&index, "%s %s\t%s\x00", e[0], e[1], p)
	}
	if _, err := run(ctx, top, nil, index.String(), "update-index", "-z", "--index-info"); err != nil {
		return fmt.Errorf("apply: the files are written, staging them failed: %w", err)
	}
	return nil
}

// Discard removes the session's checkout, if it is still there, and its
// branch, checkpoint ref and base ref in the person's repository.
func Discard(ctx context.Context, in Info) error {
	if in.Copy {
		// The copy is a repository of its own under the worker's
		// checkouts: nothing of it is in the directory copied.
		if filepath.Base(filepath.Dir(in.Dir)) != Dir || in.Name == "" || filepath.Base(in.Dir) != in.Name {
			return fmt.Errorf("discard copy %s: not a checkout directory", in.Dir)
		}
		if err := os.RemoveAll(in.Dir); err != nil {
			return fmt.Errorf("discard copy %s: %w", in.Dir, err)
		}
		return nil
	}
	if _, err := os.Stat(in.Dir); err == nil {
		if err := removeCheckout(ctx, in); err != nil {
			return fmt.Errorf("discard checkout %s: %w", in.Dir, err)
		}
	}
	_, _ = git(ctx, in.Repo, nil, "worktree", "prune") // a worktree checkout made before
	if err := dropBaseRef(ctx, in); err != nil {
		return fmt.Errorf("discard checkout %s: %w", in.Dir, err)
	}
	// The checkpoints hold the session's files as they were, whatever
	// leaked into them: they go with the branch.
	for _, ref := range []string{CheckpointRef(in.Name), TurnsRef(in.Name)} {
		if _, err := git(ctx, in.Repo, nil, "update-ref", "-d", ref); err != nil {
			return fmt.Errorf("discard checkpoints %s: %w", ref, err)
		}
	}
	if _, err := git(ctx, in.Repo, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+in.Branch); err != nil {
		return nil // gone already
	}
	if _, err := git(ctx, in.Repo, nil, "branch", "--quiet", "-D", in.Branch); err != nil {
		return fmt.Errorf("discard branch %s: %w", in.Branch, err)
	}
	return nil
}

// gitIdentity names the commits a session's checkout gets.
var gitIdentity = []string{
	"GIT_AUTHOR_NAME=longrun", "GIT_AUTHOR_EMAIL=longrun@localhost",
	"GIT_COMMITTER_NAME=longrun", "GIT_COMMITTER_EMAIL=longrun@localhost",
}

// git runs git in dir and returns its output, trimmed.
func git(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	out, err := gitRaw(ctx, dir, env, args...)
	return strings.TrimSpace(out), err
}

// Git runs a git query in dir (rev-parse and the like) through the one
// door every host git goes through (gitCmd: the repository's program-
// running configuration neutralised), for callers outside this package:
// the CLI reads the person's repository with it when a session starts or
// is applied there. Its output is trimmed.
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	return git(ctx, dir, nil, args...)
}

func gitRaw(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	return run(ctx, dir, env, "", args...)
}

// gitIn runs git with stdin.
func gitIn(ctx context.Context, dir, stdin string, args ...string) (string, error) {
	return run(ctx, dir, nil, stdin, args...)
}

func run(ctx context.Context, dir string, env []string, stdin string, args ...string) (string, error) {
	out, _, err := gitCode(ctx, dir, env, stdin, args...)
	return out, err
}

// gitRemote runs git in dir for a push or fetch to the worker's
// checkpoint remote: with the worker's own ssh and credential settings
// (gitsafe.HostRemote), the repository's programs still neutralised.
func gitRemote(ctx context.Context, dir string, args ...string) (string, error) {
	out, _, err := gitExec(ctx, gitsafe.HostRemote, dir, nil, "", args...)
	return strings.TrimSpace(out), err
}

// gitCode runs git with stdin and gives its exit code too (-1: it did
// not run); an error says what git said.
func gitCode(ctx context.Context, dir string, env []string, stdin string, args ...string) (string, int, error) {
	return gitExec(ctx, gitsafe.HostLocal, dir, env, stdin, args...)
}

func gitExec(ctx context.Context, mode gitsafe.Mode, dir string, env []string, stdin string, args ...string) (string, int, error) {
	cmd, err := gitCmd(ctx, mode, dir, env, args...)
	if err != nil {
		return "", -1, err
	}
	return runCmd(cmd, stdin, args)
}

// gitFrom runs git in dir over another local repository src (a fetch
// from it: git upload-pack then runs in src), with src's program-naming
// keys neutralised as well as dir's.
func gitFrom(ctx context.Context, dir, src string, args ...string) (string, error) {
	cmd, err := gitCmdFor(ctx, gitsafe.HostLocal, dir, []string{src}, nil, args...)
	if err != nil {
		return "", err
	}
	out, _, err := runCmd(cmd, "", args)
	return strings.TrimSpace(out), err
}

// runCmd runs a git command gitCmdFor made, with stdin, and gives its
// output and exit code (-1: it did not run); an error says what git said.
func runCmd(cmd *exec.Cmd, stdin string, args []string) (string, int, error) {
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err == nil {
		return out.String(), 0, nil
	}
	code := -1
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	msg := strings.TrimSpace(errb.String())
	if msg == "" {
		msg = err.Error()
	}
	return out.String(), code, fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
}

// gitCmd is the one way this package starts a process: git with args in
// dir, on the host, over files a session wrote. Its environment is built
// from nothing (gitsafe.HostEnv: none of the worker's variables, an empty
// home and global configuration, the system's skipped) with every key
// that makes git run a program (filters, diff and merge drivers, file
// system monitor, hooks, attributes file, ssh, credentials, submodule
// recursion) overridden at the highest precedence, for the keys the
// repository's configuration and its includes name too; then the
// checkouts' identity and env. A repository whose configuration cannot
// be read within gitsafe's limits is refused: nothing runs.
func gitCmd(ctx context.Context, mode gitsafe.Mode, dir string, env []string, args ...string) (*exec.Cmd, error) {
	return gitCmdFor(ctx, mode, dir, nil, env, args...)
}

// gitCmdFor is gitCmd with the configuration of the repositories at
// others neutralised too (gitsafe.HostEnvFor).
func gitCmdFor(ctx context.Context, mode gitsafe.Mode, dir string, others, env []string, args ...string) (*exec.Cmd, error) {
	base, err := gitsafe.HostEnvFor(dir, mode, others...)
	if err != nil {
		return nil, fmt.Errorf("git %s in %s: %w", strings.Join(args, " "), dir, err)
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(base, gitIdentity...), env...)
	return cmd, nil
}
