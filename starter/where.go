package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/workflows"
)

// pollerWait bounds the look for a worker serving the person's directory:
// one DescribeTaskQueue per parent directory, each answered by the server
// alone in milliseconds.
const pollerWait = 5 * time.Second

// noPoller says why no worker takes tasks from queue tq, or "" when one
// has polled it lately (or the server cannot tell: then the call that
// needs a worker finds out). It needs no worker: the server answers.
func noPoller(ctx context.Context, c sessionClient, tq string) string {
	why, err := pollerState(ctx, c, tq)
	if err != nil {
		return ""
	}
	return why
}

// pollerState is noPoller that tells a server that could not answer
// apart: start must not route a session on a guess.
func pollerState(ctx context.Context, c sessionClient, tq string) (string, error) {
	resp, err := c.DescribeTaskQueue(ctx, tq, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil {
		return "", fmt.Errorf("describe task queue %s: %w", tq, err)
	}
	var newest time.Time
	for _, p := range resp.GetPollers() {
		if t := p.GetLastAccessTime().AsTime(); t.After(newest) {
			newest = t
		}
	}
	switch {
	case newest.IsZero():
		return fmt.Sprintf("no worker polls task queue %s", tq), nil
	case time.Since(newest) > staleAfter:
		return fmt.Sprintf("no worker has polled task queue %s for %s", tq, time.Since(newest).Round(time.Second)), nil
	}
	return "", nil
}

// nobodyListens is the sentence start, watch, status and pending say at
// once when no worker polls the task queue tq, instead of waiting for a
// query to time out.
func (a *app) nobodyListens(tq string) string {
	return fmt.Sprintf("no worker is polling task queue %s at %s: start %s", tq, a.cfg.Address, workerProg)
}

// workerProg is the worker program as installed.
const workerProg = "longrun-worker"

// sessionQueue is the task queue of an open session, and "" with the
// session's ending when it is closed (or describe fails: the caller's
// own call then says why).
func (a *app) sessionQueue(ctx context.Context, c sessionClient, session string) (tq string, open bool) {
	dctx, cancel := context.WithTimeout(ctx, pollerWait)
	defer cancel()
	desc, err := c.DescribeWorkflowExecution(dctx, session, "")
	if err != nil {
		return "", false
	}
	if !isOpen(desc.GetWorkflowExecutionInfo().GetStatus()) {
		return "", false
	}
	tq = desc.GetExecutionConfig().GetTaskQueue().GetName()
	if tq == "" {
		tq = a.cfg.TaskQueue
	}
	return tq, true
}

// requireListener fails at once, naming what to start, when session is
// open and no worker polls its task queue: status and pending need a
// worker to answer, and would otherwise wait for their timeout.
func (a *app) requireListener(ctx context.Context, c sessionClient, session string) error {
	tq, open := a.sessionQueue(ctx, c, session)
	if !open {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, pollerWait)
	defer cancel()
	if why := noPoller(pctx, c, tq); why != "" {
		return exitError{exitFailure, fmt.Sprintf("%s; session %s waits (durably) until one does", a.nobodyListens(tq), session)}
	}
	return nil
}

// placement is where a new session is started and what start says
// about it.
type placement struct {
	queue string
	// warning is said loudly after the start: nobody will run the
	// session until a worker polls queue.
	warning string
}

// place routes a new session to a worker serving the directory start
// runs in: the nearest of that directory and its parents whose root
// queue (workflows.RootQueue) has a worker. The session records the
// directory, its root, and WorkDir relative to the root. --workdir
// opts out: the session works there, relative to the default root of
// whichever worker takes the shared queue, as before directories were
// sent. With no worker serving the directory while one polls the shared
// queue, start refuses; with no worker at all, the session is started
// on the queue of the directory's repository (or the directory) and
// waits durably for a worker serving it, and start says so.
func (a *app) place(ctx context.Context, c sessionClient, in *startOptions, workdirSet bool) (placement, error) {
	ctx, cancel := context.WithTimeout(ctx, pollerWait)
	defer cancel()
	shared := a.cfg.TaskQueue
	if workdirSet {
		p := placement{queue: shared}
		if why := noPoller(ctx, c, shared); why != "" {
			p.warning = a.nobodyListens(shared)
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return placement{}, fmt.Errorf("the current directory: %w (or pass --workdir to work in the worker's workspace)", err)
	}
	for attempt := 0; ; attempt++ {
		p, found, err := a.findRoot(ctx, c, in, dir)
		if err != nil || found {
			return p, err
		}
		why, err := pollerState(ctx, c, shared)
		if err != nil {
			return placement{}, fmt.Errorf("cannot tell which worker serves %s: %w", dir, err)
		}
		if why != "" {
			break // nobody at all
		}
		if attempt == 0 {
			// A worker polls the shared queue: one that is just starting
			// may not poll its roots' queues yet. Look once more.
			select {
			case <-ctx.Done():
				return placement{}, fmt.Errorf("cannot tell which worker serves %s: %w", dir, ctx.Err())
			case <-time.After(time.Second):
			}
			continue
		}
		return placement{}, exitError{exitFailure, fmt.Sprintf(
			"no worker serves %s: start %s --workspace %s (or a parent; --workspace may be given more than once), or pass --workdir DIR to work in the workspace of the worker on task queue %s",
			dir, workerProg, shellQuote(repoOf(ctx, dir)), shared)}
	}
	// Nobody polls anything: wait on the queue of the directory's
	// repository, which a worker started as start says will poll.
	root := repoOf(ctx, dir)
	in.input.Dir, in.input.Root, in.input.WorkDir = dir, root, relDir(root, dir)
	q := workflows.RootQueue(shared, root)
	return placement{queue: q, warning: fmt.Sprintf("%s --workspace %s; session %s waits (durably) on task queue %s until one does",
		a.nobodyListens(shared), shellQuote(root), in.id, q)}, nil
}

// findRoot looks for the nearest of dir and its parents, under either
// spelling, whose root queue has a worker, and points in at it.
func (a *app) findRoot(ctx context.Context, c sessionClient, in *startOptions, dir string) (placement, bool, error) {
	for _, spelling := range spellings(dir) {
		for root := spelling; ; root = filepath.Dir(root) {
			q := workflows.RootQueue(a.cfg.TaskQueue, root)
			why, err := pollerState(ctx, c, q)
			if err != nil {
				return placement{}, false, fmt.Errorf("cannot tell which worker serves %s: %w", dir, err)
			}
			if why == "" {
				in.input.Dir, in.input.Root, in.input.WorkDir = spelling, root, relDir(root, spelling)
				return placement{queue: q}, true, nil
			}
			if filepath.Dir(root) == root {
				break
			}
		}
	}
	return placement{}, false, nil
}

// spellings are dir as the shell names it and its real path, each once.
func spellings(dir string) []string {
	out := []string{filepath.Clean(dir)}
	if real, err := filepath.EvalSymlinks(dir); err == nil && filepath.Clean(real) != out[0] {
		out = append(out, filepath.Clean(real))
	}
	return out
}

// relDir is dir relative to root, "" for root itself.
func relDir(root, dir string) string {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." {
		return ""
	}
	return rel
}

// repoOf is the top of the git repository holding dir, or dir itself
// outside git.
func repoOf(ctx context.Context, dir string) string {
	if top, err := gitOut(ctx, dir, "rev-parse", "--show-toplevel"); err == nil && top != "" {
		return top
	}
	return dir
}

// gitOut runs git in dir and returns its trimmed output, through
// checkout's door: a repository's configuration runs no program for it.
func gitOut(ctx context.Context, dir string, args ...string) (string, error) {
	return checkout.Git(ctx, dir, args...)
}

// describeStart tells the person, on stderr (stdout is the id alone, for
// scripts), what the session works on and what to run next. What the
// worker will check out is read here, from the same directory: the
// repository, the base (--base, else HEAD) and the session's branch.
func (a *app) describeStart(ctx context.Context, id string, o startOptions, p placement) {
	if a.cfg.JSON {
		if p.warning != "" {
			fmt.Fprintf(a.stderr, "%s: %s\n", progName, p.warning)
		}
		return
	}
	in := o.input
	switch {
	case in.Dir == "":
		where := "the worker's workspace"
		if in.WorkDir != "" {
			where += " (directory " + in.WorkDir + ")"
		}
		fmt.Fprintf(a.stderr, "works on:  %s, on task queue %s\n", where, p.queue)
	case in.InPlace:
		fmt.Fprintf(a.stderr, "works on:  %s itself (in place: its changes are made there)\n", in.Dir)
	default:
		gctx, cancel := context.WithTimeout(ctx, pollerWait)
		defer cancel()
		top, err := gitOut(gctx, in.Dir, "rev-parse", "--show-toplevel")
		if err != nil || top == "" {
			fmt.Fprintf(a.stderr, "works on:  a copy of %s (not in a git repository); its changes stay there until %s apply\n", in.Dir, progName)
			break
		}
		base := in.Base
		if base == "" {
			base, _ = gitOut(gctx, in.Dir, "rev-parse", "--abbrev-ref", "HEAD")
		}
		commit, _ := gitOut(gctx, in.Dir, "rev-parse", "--short", base+"^{commit}")
		fmt.Fprintf(a.stderr, "works on:  repository %s", top)
		if sub := relDir(top, in.Dir); sub != "" {
			fmt.Fprintf(a.stderr, " (in %s)", sub)
		}
		fmt.Fprintf(a.stderr, "\n           base %s %s, branch %s (a checkout of its own: your files are untouched until apply)\n", base, commit, checkout.Branch(id))
	}
	q := shellQuote(id)
	fmt.Fprintf(a.stderr, "next:      %s watch %s   |   %s diff %s   |   %s apply %s\n", progName, q, progName, q, progName, q)
	if p.warning != "" {
		fmt.Fprintf(a.stderr, "%s\n", a.ui.style.paint("WARNING: "+p.warning, sgrBold, sgrRed))
	}
}

// unreachable reports whether err means the server did not answer at all
// (down, restarting, unreachable), as opposed to an answer that refused.
func unreachable(err error) bool {
	var un *serviceerror.Unavailable
	var dl *serviceerror.DeadlineExceeded
	if errors.As(err, &un) || errors.As(err, &dl) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	if s, ok := status.FromError(err); ok {
		switch s.Code() {
		case codes.Unavailable, codes.DeadlineExceeded:
			return true
		}
	}
	return false
}
