package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/longrun/longrun/forge"
	"github.com/longrun/longrun/workflows"
)

// cmdPush publishes an ended session's branch on demand, where its
// repository is (as diff, apply and discard run): the push and the pull
// request a worker with --push-remote makes at a session's end, with the
// same configuration read from this process's environment
// (LONGRUN_PUSH_REMOTE, LONGRUN_FORGE_TOKEN, ...). Run again, it updates
// the pull request and opens no second one.
func (a *app) cmdPush(ctx context.Context, fs *flag.FlagSet, args []string) error {
	return a.onSession(ctx, fs, args, func(c sessionClient, id string) error {
		cfg := forge.Config{ConsoleURL: os.Getenv("LONGRUN_CONSOLE_URL")}
		if err := cfg.Load(os.Getenv, ""); err != nil {
			return exitError{exitUsage, err.Error()}
		}
		if !cfg.Enabled() {
			return exitError{exitUsage, fmt.Sprintf("no remote to push to: set %s (a remote's name, e.g. origin, or a URL) and %s, as for longrun-worker --push-remote", forge.EnvRemote, forge.EnvToken)}
		}
		desc, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			return sessionError(err, "describe", id, a.cfg.Namespace)
		}
		if isOpen(desc.GetWorkflowExecutionInfo().GetStatus()) {
			return exitError{exitFailure, fmt.Sprintf("session %s still runs: its branch is committed when it ends (a worker with --push-remote pushes it then); push it after that", id)}
		}
		in, err := a.sessionCheckout(ctx, c, id)
		if err != nil {
			return err
		}
		if in.Copy {
			return exitError{exitFailure, fmt.Sprintf("session %s worked on a copy of a directory outside git: its branch shares no history with a remote to open a pull request on", id)}
		}
		var res workflows.SessionResult
		_ = c.GetWorkflow(ctx, id, "").Get(ctx, &res) // a cancelled session has none: its branch is still pushed
		pub, err := forge.Publish(ctx, cfg, forge.Request{
			Dir: in.Repo, Branch: in.Branch, BaseCommit: in.Base, Session: id, Namespace: a.cfg.Namespace,
			Summary: res.FinalText, LeftOut: res.LeftOut,
		})
		if err != nil {
			return fmt.Errorf("push session %s: %w", id, err)
		}
		if a.cfg.JSON {
			return a.printJSON(map[string]any{"session_id": id, "branch": in.Branch, "commit": pub.Commit, "remote": pub.Remote, "pull_request": pub.URL, "number": pub.Number, "created": pub.Created})
		}
		how := "updated"
		if pub.Created {
			how = "opened"
		}
		fmt.Fprintf(a.stdout, "pushed %s (commit %s) to %s\npull request #%d %s: %s\n", in.Branch, short(pub.Commit), pub.Remote, pub.Number, how, pub.URL)
		return nil
	})
}
