package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/transcript"
	"github.com/longrun/longrun/untrusted"
	"github.com/longrun/longrun/workflows"
)

// The session's branch, read and acted on where the repository is. The
// checkout query says where (repository, branch, base, checkout); these
// commands then run git there, so they work on the machine that holds the
// repository: the worker's (in a single-machine setup, this one).

// sessionCheckout asks the session for its checkout, and checks that its
// repository is on this machine.
func (a *app) sessionCheckout(ctx context.Context, c sessionClient, id string) (checkout.Info, error) {
	co, err := query[*session.Checkout](ctx, a, c, id, workflows.QueryCheckout)
	if err != nil {
		return checkout.Info{}, err
	}
	if !co.Isolated() {
		return checkout.Info{}, exitError{exitFailure, fmt.Sprintf("session %s ran in place, in the worker's workspace: it has no branch of its own (its changes are in the workspace already)", id)}
	}
	if co.Origin != "" {
		return a.restoredCheckout(ctx, co)
	}
	if _, err := os.Stat(co.Repo); err != nil {
		return checkout.Info{}, exitError{exitFailure, fmt.Sprintf("the repository of session %s, %s, is not on this machine (%v): run %s where the worker that holds it runs", id, co.Repo, err, progName)}
	}
	return co.Info, nil
}

func (a *app) cmdDiff(ctx context.Context, fs *flag.FlagSet, args []string) error {
	return a.onSession(ctx, fs, args, func(c sessionClient, id string) error {
		in, err := a.sessionCheckout(ctx, c, id)
		if err != nil {
			return err
		}
		d, err := checkout.Diff(ctx, in)
		if err != nil {
			return fmt.Errorf("diff of session %s: %w", id, err)
		}
		if a.cfg.JSON {
			return a.printJSON(map[string]string{"session_id": id, "branch": in.Branch, "base": in.Base, "diff": d})
		}
		if a.terminal(a.stdout) {
			// A person reads it: a file's escape sequences must show, not
			// act (a line ending in "\r\x1b[2K\x1b[1A" would erase itself).
			// A pipe gets the exact patch, for git apply.
			d = untrusted.Visible(d)
		}
		_, err = fmt.Fprint(a.stdout, d)
		return err
	})
}

func (a *app) cmdApply(ctx context.Context, fs *flag.FlagSet, args []string) error {
	to := fs.String("to", "", "the checkout to apply to (default: the repository the session started from)")
	var include stringList
	fs.Var(&include, "include-control", "apply this control file (.longrun/..., AGENTS.md) or directory of them too; without it a diff that touches one is refused (repeatable)")
	return a.onSession(ctx, fs, args, func(c sessionClient, id string) error {
		if *to == "" {
			// Run from the command line inside another repository, the
			// person most likely means that one: refuse rather than write
			// into the session's (the console has no directory to compare).
			if in, err := a.sessionCheckout(ctx, c, id); err == nil {
				if err := elsewhere(ctx, id, in.Repo); err != nil {
					return err
				}
			}
		}
		msg, err := a.applySession(ctx, c, id, *to, include)
		if err != nil {
			return err
		}
		fmt.Fprintln(a.stdout, msg)
		return nil
	})
}

// applySession brings the changes of session id into the checkout to
// ("": the repository the session started from) and says what it did. It
// is `apply`, and the console's Apply button runs it too, so the two
// cannot drift: it refuses, changing nothing, when the diff touches
// control files not named in include or does not apply as the checkout
// is now.
func (a *app) applySession(ctx context.Context, c sessionClient, id, to string, include []string) (string, error) {
	in, err := a.sessionCheckout(ctx, c, id)
	if err != nil {
		return "", err
	}
	dir := in.Repo
	switch {
	case to != "":
		dir = to
	case in.Dir == in.Repo:
		return "", exitError{exitFailure, fmt.Sprintf("session %s was restored on this machine from its checkpoint: name the checkout to apply to with --to", id)}
	}
	d, err := checkout.Diff(ctx, in)
	if err != nil {
		return "", fmt.Errorf("diff of session %s: %w", id, err)
	}
	if strings.TrimSpace(d) == "" {
		return fmt.Sprintf("session %s changed nothing against %s", id, short(in.Base)), nil
	}
	if err := controlRefusal(ctx, id, d, include); err != nil {
		return "", err
	}
	if in.Copy {
		return a.applyCopy(ctx, id, in, dir)
	}
	if err := checkout.Apply(ctx, dir, d); err != nil {
		if errors.Is(err, checkout.ErrConflict) {
			return "", exitError{exitFailure, fmt.Sprintf("the changes of session %s do not apply to %s as it is now; nothing was changed.\n%v\nMerge the branch yourself: git -C %s merge %s",
				id, dir, err, shellQuote(dir), in.Branch)}
		}
		return "", err
	}
	return fmt.Sprintf("applied the changes of session %s (branch %s) to %s; they are in its working tree (and index where git merged three-way), not committed", id, in.Branch, dir), nil
}

func (a *app) cmdDiscard(ctx context.Context, fs *flag.FlagSet, args []string) error {
	return a.onSession(ctx, fs, args, func(c sessionClient, id string) error {
		msg, err := a.discardSession(ctx, c, id)
		if err != nil {
			return err
		}
		fmt.Fprintln(a.stdout, msg)
		return nil
	})
}

// discardSession removes the branch, checkpoints and checkout of the
// finished session id and says so: `discard`, and the console's Discard
// button. A session still running is refused.
func (a *app) discardSession(ctx context.Context, c sessionClient, id string) (string, error) {
	desc, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return "", sessionError(err, "describe", id, a.cfg.Namespace)
	}
	if isOpen(desc.GetWorkflowExecutionInfo().GetStatus()) {
		return "", exitError{exitFailure, fmt.Sprintf("session %s still runs in its checkout: cancel it first (%s cancel %s)", id, progName, shellQuote(id))}
	}
	in, err := a.sessionCheckout(ctx, c, id)
	if err != nil {
		return "", err
	}
	co, err := query[*session.Checkout](ctx, a, c, id, workflows.QueryCheckout)
	if err != nil {
		return "", err
	}
	if co.Remote != "" {
		// First, while a copy's repository is still there to run
		// git in.
		dir := in.Repo
		if in.Copy {
			dir = in.Dir
		}
		if err := checkout.DiscardRemote(ctx, dir, co.Remote, in); err != nil {
			return "", err
		}
	}
	if err := checkout.Discard(ctx, in); err != nil {
		return "", err
	}
	return fmt.Sprintf("discarded session %s: branch %s, its checkpoints and its checkout are gone", id, in.Branch), nil
}

// restoredCheckout is the checkout of a session restored on another worker
// after its own was lost (session.Checkout.Origin): the branch is read in
// the person's repository, fetched there from where the session stored it
// (a bundle in the transcript store, or the checkpoint remote), unless the
// restored checkout itself is on this machine.
func (a *app) restoredCheckout(ctx context.Context, co *session.Checkout) (checkout.Info, error) {
	if _, err := os.Stat(co.Dir); err == nil {
		return co.Info, nil
	}
	in := co.Info
	in.Repo = co.Origin
	if _, err := os.Stat(in.Repo); err != nil {
		if co.BranchBundle != "" {
			return checkout.Info{}, exitError{exitFailure, fmt.Sprintf("the session's repository %s is not on this machine (%v): its branch is in the transcript store as the git bundle %s; fetch it there with %s diff where the repository is", in.Repo, err, co.BranchBundle, progName)}
		}
		return checkout.Info{}, exitError{exitFailure, fmt.Sprintf("the session's repository %s is not on this machine (%v): fetch its branch yourself: git fetch %s %s", in.Repo, err, shellQuote(co.Remote), in.Branch)}
	}
	switch {
	case co.BranchBundle != "":
		if err := a.fetchBranchBundle(ctx, in, co.BranchBundle); err != nil {
			return checkout.Info{}, err
		}
	case co.Remote != "":
		if err := checkout.FetchBranch(ctx, in.Repo, co.Remote, in.Branch); err != nil {
			return checkout.Info{}, fmt.Errorf("the session's branch was pushed to its checkpoint remote: %w", err)
		}
	}
	return in, nil
}

// fetchBranchBundle fetches the session's branch into the person's
// repository from its bundle in the workers' transcript store.
func (a *app) fetchBranchBundle(ctx context.Context, in checkout.Info, ref string) error {
	spec := a.cfg.Transcript
	if spec == "" || spec == "off" {
		return exitError{exitFailure, fmt.Sprintf("the branch %s of this session is in the workers' transcript store, as the git bundle %s: name that store with --transcript DIR|s3://... (or LONGRUN_TRANSCRIPT_DIR), as the workers do", in.Branch, ref)}
	}
	if err := a.loadKeys(); err != nil {
		return err
	}
	store, _, err := transcript.Open(ctx, spec)
	if err != nil {
		return fmt.Errorf("--transcript: %w", err)
	}
	if a.cfg.keys != nil {
		if store, err = transcript.Seal(store, a.cfg.keys); err != nil {
			return fmt.Errorf("--transcript: %w", err)
		}
	}
	data, err := store.Get(ctx, ref)
	if err != nil {
		return fmt.Errorf("the session's branch %s, as the bundle %s in the transcript store %s: %w", in.Branch, ref, spec, err)
	}
	dir, err := os.MkdirTemp("", "longrun-branch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "branch.bundle")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return err
	}
	if err := checkout.FetchBranch(ctx, in.Repo, file, in.Branch); err != nil {
		return fmt.Errorf("the session's branch was stored in the transcript store as a bundle: %w", err)
	}
	return nil
}

// short is a commit id cut to 12 characters.
func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// elsewhere refuses an apply run inside another git repository than the
// session's own: the person most likely means the one they are in, and
// the changes would land in repo instead. Outside any repository (a
// script, another directory) apply goes to the session's repository.
func elsewhere(ctx context.Context, id, repo string) error {
	dir, err := os.Getwd()
	if err != nil {
		return nil
	}
	top, err := gitOut(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil || top == "" || samePath(top, repo) {
		return nil
	}
	return exitError{exitFailure, fmt.Sprintf("you are in the repository %s, but session %s works on %s: nothing was applied.\nRun apply there (cd %s), or apply here anyway with --to %s",
		top, id, repo, shellQuote(repo), shellQuote(top))}
}

// samePath reports whether a and b name the same directory.
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
