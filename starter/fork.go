package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/workflows"
)

// Rewind and fork (issue 33): turns lists the turns a session can go back
// to; fork starts a new session from one (its conversation up to there,
// a checkout of its own from that turn's checkpoint); rewind takes the
// session itself back there. None of them touches the person's checkout.

// rewindTimeout bounds the rewind update: it waits for the worker holding
// the checkout to put the files back.
const rewindTimeout = 2 * time.Minute

func (a *app) cmdTurns(ctx context.Context, fs *flag.FlagSet, args []string) error {
	return a.onSession(ctx, fs, args, func(c sessionClient, session string) error {
		turns, err := query[[]workflows.TurnInfo](ctx, a, c, session, workflows.QueryTurns)
		if err != nil {
			return err
		}
		if a.cfg.JSON {
			return a.printJSON(map[string]any{"session_id": session, "turns": turns})
		}
		if len(turns) == 0 {
			fmt.Fprintf(a.stdout, "%s has no finished turn to go back to yet\n", session)
			return nil
		}
		for _, t := range turns {
			files := "base"
			switch {
			case !t.Files:
				files = "unknown (checkpoint failed)"
			case t.Checkpoint != "":
				files = shortID(t.Checkpoint)
			}
			fmt.Fprintf(a.stdout, "turn %-4d files %-12s %s\n", t.Turn, files, preview(oneLine(t.Summary), 80, ""))
		}
		return nil
	})
}

func shortID(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// turnFlag parses SESSION --FLAG TURN [WORDS...].
func turnFlag(fs *flag.FlagSet, args []string, name string) (string, int, string, error) {
	turn := fs.Int(name, 0, "the turn (longrun turns SESSION lists them)")
	session, words, err := sessionArgs(fs, args)
	if err != nil {
		return "", 0, "", err
	}
	if *turn <= 0 {
		return "", 0, "", usagef("--%s TURN is required: a turn number, as longrun turns %s lists them", name, session)
	}
	return session, *turn, strings.TrimSpace(strings.Join(words, " ")), nil
}

func (a *app) cmdFork(ctx context.Context, fs *flag.FlagSet, args []string) error {
	id := fs.String("id", "", "the new session's id (default: a new one)")
	session, turn, prompt, err := turnFlag(fs, args, "at")
	if err != nil {
		return err
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	run, err := a.fork(ctx, c, session, turn, *id, prompt)
	if err != nil {
		return err
	}
	if a.cfg.JSON {
		return a.printJSON(map[string]any{"session_id": run.GetID(), "run_id": run.GetRunID(), "forked_from": session, "turn": turn})
	}
	fmt.Fprintln(a.stdout, run.GetID())
	fmt.Fprintln(a.stderr, forkedLine(session, turn, run.GetID(), prompt))
	return nil
}

// fork starts a new session (id, or a new id when "") whose conversation
// is session's up to turn and whose checkout starts from that turn's
// checkpoint; prompt, when not "", is its first message. longrun fork
// and the chat's Ctrl-R both start a fork with it.
func (a *app) fork(ctx context.Context, c sessionClient, session string, turn int, id, prompt string) (client.WorkflowRun, error) {
	if id == "" {
		id = newSessionID(time.Now())
	}
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, err := c.QueryWorkflow(qctx, session, "", workflows.QueryForkInput, turn)
	if err != nil {
		return nil, fmt.Errorf("fork %s at turn %d: %w", session, turn, sessionError(err, "query", session, a.cfg.Namespace))
	}
	var in workflows.SessionInput
	if err := v.Get(&in); err != nil {
		return nil, fmt.Errorf("decode the fork's input: %w", err)
	}
	in.Prompt = prompt
	desc, err := c.DescribeWorkflowExecution(ctx, session, "")
	if err != nil {
		return nil, sessionError(err, "describe", session, a.cfg.Namespace)
	}
	opts := client.StartWorkflowOptions{
		ID: id, TaskQueue: desc.GetExecutionConfig().GetTaskQueue().GetName(),
		StaticSummary:                            fmt.Sprintf("fork of %s at turn %d", session, turn),
		StaticDetails:                            staticDetails(in),
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}
	run, err := c.ExecuteWorkflow(ctx, opts, workflows.WorkflowType, in)
	if err != nil {
		return nil, sessionError(err, "start", id, a.cfg.Namespace)
	}
	return run, nil
}

// forkedLine is what longrun fork says on stderr once the fork started.
func forkedLine(session string, turn int, id, prompt string) string {
	return fmt.Sprintf("forked %s at turn %d: its checkout starts from that turn's files on branch longrun/%s; %s",
		session, turn, id, nextStep(prompt, id))
}

func nextStep(prompt, id string) string {
	if prompt != "" {
		return "it works on your message now"
	}
	return fmt.Sprintf("it waits for your message: %s send %s TEXT", progName, id)
}

func (a *app) cmdRewind(ctx context.Context, fs *flag.FlagSet, args []string) error {
	session, turn, message, err := turnFlag(fs, args, "to")
	if err != nil {
		return err
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	out, err := a.rewind(ctx, c, session, turn, message)
	if err != nil {
		return err
	}
	if a.cfg.JSON {
		return a.printJSON(map[string]any{"session_id": session, "turn": out.Turn, "from": out.From, "checkpoint": out.Checkpoint})
	}
	fmt.Fprintln(a.stdout, rewoundLine(session, out))
	return nil
}

// rewind takes session back to turn with the rewind update (message, when
// not "", is said to the model), waiting for the files to be back.
// longrun rewind and the chat's Ctrl-R both rewind with it.
func (a *app) rewind(ctx context.Context, c sessionClient, session string, turn int, message string) (workflows.RewindOutcome, error) {
	uctx, cancel := context.WithTimeout(ctx, rewindTimeout)
	defer cancel()
	h, err := c.UpdateWorkflow(uctx, client.UpdateWorkflowOptions{
		WorkflowID:   session,
		UpdateName:   workflows.UpdateRewind,
		Args:         []any{workflows.RewindRequest{Turn: turn, Message: message}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	var out workflows.RewindOutcome
	if err == nil {
		err = h.Get(uctx, &out)
	}
	var refused *temporal.ApplicationError
	if errors.As(err, &refused) {
		return out, fmt.Errorf("rewind %s to turn %d refused, nothing changed: %s", session, turn, refused.Message())
	}
	if err != nil {
		return out, sessionError(err, "rewind", session, a.cfg.Namespace)
	}
	return out, nil
}

// rewoundLine is what longrun rewind prints once the session went back.
func rewoundLine(session string, out workflows.RewindOutcome) string {
	files := "the base's"
	if out.Checkpoint != "" {
		files = "checkpoint " + shortID(out.Checkpoint)
	}
	return fmt.Sprintf("rewound %s from turn %d to turn %d: conversation and files (%s) are back there; the later turns stay in its history",
		session, out.From, out.Turn, files)
}
