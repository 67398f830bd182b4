package checkout

import (
	"context"
	"fmt"
	"slices"
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

// KeepTurns points TurnsRef(name), in the repository at dir, at one
// commit whose parents are the commits of turns that repository has, in
// order and each once, so they stay reachable wherever the ref goes (the
// close fetches it with the branch; in a worktree it is in the person's
// repository already). Turns it does not have (a checkout restored from
// a later checkpoint on another worker) are left out, as is anything
// but a full object id; kept is how many are in. With none the ref is
// not made. The commit's tree is the first turn's: it is never checked
// out, only its parents are read.
func KeepTurns(ctx context.Context, dir, name string, turns []string) (kept int, err error) {
	var ids []string
	for _, t := range turns {
		if isObjectID(t) && !slices.Contains(ids, t) {
			ids = append(ids, t)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	objs, err := lookObjects(ctx, dir, ids...)
	if err != nil {
		return 0, fmt.Errorf("keep the turns' checkpoints of %s: %w", name, err)
	}
	var parents []string
	for _, o := range objs {
		if o.typ == "commit" {
			parents = append(parents, "-p", o.id)
		}
	}
	if len(parents) == 0 {
		return 0, nil
	}
	args := append([]string{"commit-tree", parents[1] + "^{tree}"}, parents...)
	args = append(args, "-m", "longrun: the checkpoints of "+name+"'s turns, kept for a fork after its close")
	commit, err := git(ctx, dir, nil, args...)
	if err == nil {
		_, err = git(ctx, dir, nil, "update-ref", TurnsRef(name), commit)
	}
	if err != nil {
		return 0, fmt.Errorf("keep the turns' checkpoints of %s: %w", name, err)
	}
	return len(parents) / 2, nil
}
