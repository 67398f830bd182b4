package checkout

import (
	"context"
	"os"
	"strings"
)

// The paths mode builds its tree without the checkpoints' own index, so
// that index lags behind the checkpoints it made. What it lags by is
// written beside it (indexLag): "I <commit>", the checkpoint whose tree
// the index holds, written by a full look; then, for each paths-mode
// checkpoint, a "P <path>" line for every path it looked at (before its
// commit is made) and a "C <commit>" line for its commit (after); "S" when
// that checkpoint did not trust the executable bit. A full look whose
// previous checkpoint is the last commit named brings the index up only
// when the lag could change what git add --all gives: a lagging index
// differs from the previous tree only at the P paths, and for a path not
// ignored git add gives the same entry whether or not the index tracked
// it (it hashes what is on disk, or removes what is not); an ignored one
// is kept when tracked, so there, and whenever the lag is not known, the
// index is first read from the previous checkpoint (git read-tree -m -i,
// which keeps the file stats of the entries it does not change).

// indexLag is the file beside the checkpoints' index saying what it lags
// by.
func indexLag(index string) string { return index + ".lag" }

// appendLag adds lines to the index's lag.
func appendLag(index string, lines ...string) error {
	f, err := os.OpenFile(indexLag(index), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(strings.Join(lines, "\n") + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// indexLagPaths reads the lag and takes it away (the full look about to
// run makes it moot, and one that dies half way leaves the index
// unknown). ok is false when the index is not known to be the tree of
// prev but for the paths returned.
func indexLagPaths(index, prev string) (paths []string, ok bool) {
	b, err := os.ReadFile(indexLag(index))
	os.Remove(indexLag(index))
	if err != nil {
		return nil, false
	}
	last, seen := "", map[string]bool{}
	for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		tag, v, _ := strings.Cut(l, " ")
		switch {
		case i == 0 && tag != "I", i > 0 && tag == "I", tag == "S":
			return nil, false
		case tag == "I" || tag == "C":
			last = v
		case tag == "P" && !seen[v]:
			seen[v] = true
			paths = append(paths, v)
		case tag == "P":
		default:
			return nil, false
		}
	}
	return paths, last == prev && prev != "" && len(paths) <= maxLagPaths
}

// maxLagPaths bounds the paths a full look checks against the ignore
// rules; past it, reading the index afresh is as cheap.
const maxLagPaths = 2000

// syncIndex brings the checkpoints' index (env) to prev's tree when its
// lag could make git add --all give another tree than it would from
// there. A prev git cannot read leaves the index as it is (the full look
// then starts from it, as before).
func syncIndex(ctx context.Context, dir string, env []string, index, prev string) error {
	if prev == "" {
		os.Remove(indexLag(index))
		return nil // the first checkpoint: the index is the checkout's
	}
	paths, ok := indexLagPaths(index, prev)
	if ok && len(paths) > 0 {
		// A path git will not look at (beyond a symbolic link now) is
		// answered by reading the index afresh too.
		ignored, err := checkIgnore(ctx, dir, paths)
		ok = err == nil && len(ignored) == 0
	}
	if ok {
		return nil
	}
	if _, err := git(ctx, dir, env, "read-tree", "-m", "-i", prev); err != nil {
		if _, verr := git(ctx, dir, nil, "cat-file", "-e", prev+"^{commit}"); verr != nil {
			return nil // not here: the full look starts from the index as it is
		}
		return err
	}
	return nil
}
