package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/longrun/longrun/checkout"
)

// checkRootTimeout bounds the git commands checkRoot runs at start-up.
const checkRootTimeout = 30 * time.Second

// checkRoot refuses a workspace root sessions' own checkouts cannot hold:
// a directory git ignores, or one not committed, under a repository. A
// session's checkout starts from the repository's HEAD, so a session
// there would find none of the root's files and every call would fail;
// better the worker says so at once, with the ways on. A repository with
// no commit yet only gets a warning: sessions there are refused until its
// first commit (activities.ErrTypeNoCommit), and sessions --in-place work.
// inPlace (--in-place: no session gets a checkout) skips the check. It
// takes one root, so a worker with several checks each.
func checkRoot(root string, inPlace bool, logger *slog.Logger) error {
	if inPlace {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkRootTimeout)
	defer cancel()
	err := checkout.CheckRoot(ctx, root)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, checkout.ErrNoCommit):
		logger.Warn(fmt.Sprintf("workspace %s: %v: sessions are refused until a first commit (git add, git commit), except those started --in-place", root, err))
		return nil
	case errors.Is(err, checkout.ErrNotInBase):
		return fmt.Errorf("workspace: %w: each session works in a checkout of its own, a repository of its own at that commit, and would find none of its files. "+
			"Either commit the directory (git add, git commit; an ignored one out of .gitignore first), "+
			"make it a repository of its own (git init, then a first commit), "+
			"or start the worker with --in-place so that every session works in the directory itself", err)
	default:
		// Not a refusal: whatever git could not tell here, a session's
		// start says it again, for that session.
		logger.Warn("cannot tell whether sessions' checkouts hold the workspace", "workspace", root, "error", err)
		return nil
	}
}
