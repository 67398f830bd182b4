package checkout

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/longrun/longrun/checkout/record"
	"github.com/longrun/longrun/permission"
)

// maxStatPaths bounds the paths a Stat lists: the counts stay exact, the
// list is for a person to glance at (status, the Web UI).
const maxStatPaths = 20

// Stat is the size of what a session changed against its base: see
// record.Stat.
type Stat = record.Stat

// Stats is what the checkout at dir holds against base, committed or not,
// untracked files included and ignored ones not. It reads the working
// tree through a copy of the checkout's index (its file stats make adding
// the tree hash only what changed), so the checkout's own index is left
// as it is: three git commands, whatever the session did.
func Stats(ctx context.Context, dir, base string) (Stat, error) {
	env, done, err := indexCopy(ctx, dir)
	if err != nil {
		return Stat{}, fmt.Errorf("checkout stats: %w", err)
	}
	defer done()
	if _, err := addAll(ctx, dir, env); err != nil {
		return Stat{}, fmt.Errorf("checkout stats: %w", err)
	}
	out, err := gitRaw(ctx, dir, env, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--cached", "--numstat", "-z", "--no-renames", base, "--")
	if err != nil {
		return Stat{}, fmt.Errorf("checkout stats: %w", err)
	}
	return parseNumstat(out), nil
}

// BranchStats is what branch holds against base, in the repository at
// repo: one git command.
func BranchStats(ctx context.Context, repo, base, branch string) (Stat, error) {
	out, err := gitRaw(ctx, repo, nil, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--numstat", "-z", "--no-renames", base, branch, "--")
	if err != nil {
		return Stat{}, fmt.Errorf("branch stats: %w", err)
	}
	return parseNumstat(out), nil
}

// parseNumstat reads `git diff --numstat -z --no-renames`: for each file
// "added\tdeleted\tpath\0", "-\t-\tpath\0" for a binary one.
func parseNumstat(out string) Stat {
	var s Stat
	for _, rec := range strings.Split(out, "\x00") {
		parts := strings.SplitN(rec, "\t", 3)
		if len(parts) != 3 || parts[2] == "" {
			continue
		}
		path := parts[2]
		if permission.IsControlPath(path) {
			s.Control = append(s.Control, path)
			continue
		}
		s.Files++
		ins, _ := strconv.Atoi(parts[0])
		del, _ := strconv.Atoi(parts[1])
		s.Insertions += ins
		s.Deletions += del
		if len(s.Paths) < maxStatPaths {
			s.Paths = append(s.Paths, path)
		}
	}
	return s
}

// indexCopy makes a temporary copy of dir's index and returns the
// environment that points git at it, and what removes it.
//
// The copy keeps the index's modification time. Git trusts an entry's
// cached stat only when the file is older than the index ("racy git"):
// a file rewritten with the same size in the same clock tick as the
// commit that wrote the index has the stat the index caches, and only
// the index's own time tells git to compare its content. A copy stamped
// "now" would hide that edit from the stat and from apply.
func indexCopy(ctx context.Context, dir string) ([]string, func(), error) {
	idx, err := os.CreateTemp("", "longrun-index-")
	if err != nil {
		return nil, nil, err
	}
	done := func() { os.Remove(idx.Name()) }
	real, err := git(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		idx.Close()
		done()
		return nil, nil, err
	}
	b, err := os.ReadFile(real)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		idx.Close()
		done()
		return nil, nil, err
	}
	_, werr := idx.Write(b)
	idx.Close()
	if len(b) == 0 {
		os.Remove(idx.Name()) // an empty file is not an index; git makes one
	} else if werr == nil {
		if fi, err := os.Stat(real); err == nil {
			werr = os.Chtimes(idx.Name(), fi.ModTime(), fi.ModTime())
		}
	}
	if werr != nil {
		done()
		return nil, nil, werr
	}
	return []string{"GIT_INDEX_FILE=" + idx.Name()}, done, nil
}
