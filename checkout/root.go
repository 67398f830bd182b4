package checkout

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Directories a session's checkout cannot hold. A checkout is a worktree
// of a commit: what that commit does not hold is not in it, and a session
// working there would see none of it (every call failing on a directory
// that does not exist). Both are found before anything is made, so they
// leave no branch or worktree behind.
var (
	// ErrNoCommit marks a repository with no commit yet: a checkout has
	// no commit to start from.
	ErrNoCommit = errors.New("no commit yet")
	// ErrNotInBase marks a directory the base commit does not hold: one
	// git ignores, or one not committed yet.
	ErrNotInBase = errors.New("not held by the commit a checkout starts from")
)

// CheckRoot says whether sessions can have checkouts of their own under
// root, a worker's workspace root, before any session asks: nil when root
// is outside git (a session gets a copy then: CreateCopy) or when its
// repository's HEAD holds it; ErrNoCommit when the repository has no
// commit yet; ErrNotInBase (saying whether git ignores root or it is just
// not committed) when root is a directory HEAD does not hold.
func CheckRoot(ctx context.Context, root string) error {
	top, prefix, err := locate(ctx, root)
	if errors.Is(err, ErrNotGit) {
		return nil
	}
	if err != nil {
		return err
	}
	commit, err := resolveBase(ctx, top, "")
	if err != nil {
		return err
	}
	return inBase(ctx, top, prefix, "HEAD", commit)
}

// locate finds the repository holding dir: its top directory and dir's
// path below it (slash-separated, "" for the top). A dir outside any
// repository is ErrNotGit.
func locate(ctx context.Context, dir string) (top, prefix string, err error) {
	top, err = git(ctx, dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		if _, statErr := os.Stat(dir); statErr != nil {
			return "", "", fmt.Errorf("create checkout: working directory %s: %w", dir, statErr)
		}
		return "", "", fmt.Errorf("%s: %w", dir, ErrNotGit)
	}
	prefix, err = git(ctx, dir, nil, "rev-parse", "--show-prefix")
	if err != nil {
		return "", "", fmt.Errorf("create checkout: %w", err)
	}
	return top, strings.TrimSuffix(prefix, "/"), nil
}

// personRepo is what Create reads of the person's repository before it
// makes anything: its top directory, the working directory's path below
// it, the base commit, its object store, its exclude file and its object
// format.
type personRepo struct {
	top, prefix, commit      string
	objects, exclude, format string
	// common is the repository's git directory shared by its worktrees,
	// where its refs are.
	common string
}

// probe reads personRepo for the repository holding workDir and the
// base ref, by one git rev-parse where locate, resolveBase and the
// checkout's making took six. When that git fails, locate and
// resolveBase run as they always did, for their errors, and the rest is
// read from the top. A ref with a ':' (rev:path, whose path git reads
// against the directory it runs in) goes that way too, read from the top
// as it always was.
func probe(ctx context.Context, workDir, ref string) (personRepo, error) {
	paths := []string{"--path-format=absolute", "--git-path", "objects", "--git-path", "info/exclude", "--show-object-format", "--git-common-dir"}
	if !strings.Contains(ref, ":") {
		args := append(append([]string{"rev-parse", "--show-toplevel", "--show-prefix"}, paths...), "--verify", "--end-of-options", ref+"^{commit}")
		out, err := gitRaw(ctx, workDir, nil, args...)
		if l := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); err == nil && len(l) == 7 {
			for i := range l {
				l[i] = strings.TrimSpace(l[i]) // as git() reads each
			}
			return personRepo{top: l[0], prefix: strings.TrimSuffix(l[1], "/"), objects: l[2], exclude: l[3], format: l[4], common: l[5], commit: l[6]}, nil
		}
	}
	top, prefix, err := locate(ctx, workDir)
	if err != nil {
		return personRepo{}, err
	}
	commit, err := resolveBase(ctx, top, ref)
	if err != nil {
		return personRepo{}, err
	}
	out, err := gitRaw(ctx, top, nil, append([]string{"rev-parse"}, paths...)...)
	l := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if err == nil && len(l) != 4 {
		err = fmt.Errorf("git rev-parse %s: %d lines, want 4", strings.Join(paths, " "), len(l))
	}
	if err != nil {
		return personRepo{}, fmt.Errorf("create checkout: %w", err)
	}
	return personRepo{top: top, prefix: prefix, commit: commit,
		objects: strings.TrimSpace(l[0]), exclude: strings.TrimSpace(l[1]), format: strings.TrimSpace(l[2]), common: strings.TrimSpace(l[3])}, nil
}

// resolveBase is the commit ref names in the repository top ("" is
// HEAD). A HEAD with no commit behind it is ErrNoCommit: git init was
// run, git commit not yet.
func resolveBase(ctx context.Context, top, ref string) (string, error) {
	if ref == "" {
		ref = "HEAD"
	}
	commit, err := git(ctx, top, nil, "rev-parse", "--verify", "--end-of-options", ref+"^{commit}")
	if err == nil {
		return commit, nil
	}
	if ref == "HEAD" {
		// --quiet: exit 1 and no word when HEAD names a branch with no
		// commit; a repository git cannot read exits 128.
		if _, code, _ := gitCode(ctx, top, nil, "", "rev-parse", "--verify", "--quiet", "HEAD"); code == 1 {
			return "", fmt.Errorf("repository %s has %w", top, ErrNoCommit)
		}
	}
	return "", fmt.Errorf("base %q is not a commit of %s (a repository needs a first commit to be isolated): %w", ref, top, err)
}

// inBase checks that commit (named ref) holds the directory prefix of
// the repository top as a directory, so a checkout of it has the
// session's working directory. The refusal says why it is missing: git
// ignores it, or it is not committed.
func inBase(ctx context.Context, top, prefix, ref, commit string) error {
	if prefix == "" {
		return nil
	}
	if t, err := git(ctx, top, nil, "cat-file", "-t", "--end-of-options", commit+":"+prefix); err == nil && t == "tree" {
		return nil
	}
	why := "not committed"
	if _, err := git(ctx, top, nil, "check-ignore", "--quiet", "--no-index", "--", prefix+"/"); err == nil {
		why = "ignored by git"
	} else if t, err := git(ctx, top, nil, "cat-file", "-t", "--end-of-options", "HEAD:"+prefix); err == nil && t == "tree" {
		why = "committed only after the base"
	}
	short := commit
	if len(short) > 12 {
		short = short[:12]
	}
	return fmt.Errorf("%s is %s in the repository %s, so it is %w (%s, %s)",
		filepath.Join(top, filepath.FromSlash(prefix)), why, top, ErrNotInBase, ref, short)
}
