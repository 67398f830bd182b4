package checkout

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// TurnsPrefix is where a closed session keeps the checkpoints of its
// turns: refs/longrun/turns/<name>, one commit whose parents are those
// checkpoints. A checkpoint is a commit on the session's branch head, so
// once a later one is taken it is on no ref, and the close brings only
// the last into the person's repository: without this ref a fork of an
// earlier turn of a closed session had nothing to start from.
const TurnsPrefix = "refs/longrun/turns/"

// TurnsRef is the ref holding the turns' checkpoints of the checkout
// named name.
func TurnsRef(name string) string { return TurnsPrefix + name }

// objectID is a full object id, SHA-1 or SHA-256: what a turn mark
// records, and all KeepTurns gives to git.
var objectID = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// KeepTurns points TurnsRef(name), in the repository at dir, at one
// commit whose parents are the commits of turns that repository has, in
// order and each once, so they stay reachable wherever the ref goes (the
// close fetches it with the branch; in a worktree it is in the person's
// repository already). Turns it does not have (a checkout restored from
// a later checkpoint on another worker) are left out; kept is how many
// are in. With none the ref is not made. The commit's tree is the first
// turn's: it is never checked out, only its parents are read.
func KeepTurns(ctx context.Context, dir, name string, turns []string) (kept int, err error) {
	seen := map[string]bool{}
	var ids []string
	for _, t := range turns {
		if objectID.MatchString(t) && !seen[t] {
			seen[t] = true
			ids = append(ids, t)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	out, err := gitIn(ctx, dir, strings.Join(ids, "\n")+"\n", "cat-file", "--batch-check=%(objectname) %(objecttype)")
	if err != nil {
		return 0, fmt.Errorf("keep the turns' checkpoints of %s: %w", name, err)
	}
	args := []string{"commit-tree"}
	var parents []string
	for _, line := range strings.Split(out, "\n") {
		id, kind, _ := strings.Cut(strings.TrimSpace(line), " ")
		if kind == "commit" && seen[id] {
			parents = append(parents, "-p", id)
			delete(seen, id)
		}
	}
	if len(parents) == 0 {
		return 0, nil
	}
	args = append(args, parents[1]+"^{tree}")
	args = append(args, parents...)
	args = append(args, "-m", "longrun: the checkpoints of "+name+"'s turns, kept for a fork after its close")
	commit, err := git(ctx, dir, nil, args...)
	if err != nil {
		return 0, fmt.Errorf("keep the turns' checkpoints of %s: %w", name, err)
	}
	if _, err := git(ctx, dir, nil, "update-ref", TurnsRef(name), commit); err != nil {
		return 0, fmt.Errorf("keep the turns' checkpoints of %s: %w", name, err)
	}
	return len(parents) / 2, nil
}
