package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"go.temporal.io/sdk/converter"

	"github.com/longrun/longrun/codec"
	"github.com/longrun/longrun/follow"
	"github.com/longrun/longrun/untrusted"
)

// cmdEvents prints a session's event stream (docs/EVENTS.md): what it
// holds after --after, or with --follow every event as it comes until the
// session ends, with the model's reply as it is written.
func (a *app) cmdEvents(ctx context.Context, fs *flag.FlagSet, args []string) error {
	follows := fs.Bool("follow", false, "keep printing events as they come, with the model's reply as it is written, until the session ends")
	after := fs.Int64("after", 0, "print the events after this sequence number (0: from the first one the session keeps)")
	subAgents := fs.Bool("sub-agents", false, "print the session's sub-agents' events too, each after its subagent_started and marked with its session (\"sub_agent\" in --json)")
	session, err := onlySession(fs, args)
	if err != nil {
		return err
	}
	if *after < 0 {
		return usagef("--after %d: give 0 or more (0: from the first event kept)", *after)
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	opts := follow.Options{Interval: a.interval(), DataConverter: a.dataConverter(), SubAgents: *subAgents}
	if !*follows {
		evs, err := a.readEvents(ctx, c, session, *after, opts)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if err := a.printStreamEvent(e, session); err != nil {
				return err
			}
		}
		return nil
	}
	for e := range follow.FollowWith(ctx, c, session, *after, opts) {
		if e.Kind == follow.KindError && e.SubAgent == "" { // a sub-agent's ends only its part: printed
			return fmt.Errorf("events of %s: %s", session, untrusted.Line(e.Text))
		}
		if err := a.printStreamEvent(e, session); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return exitError{exitInterrupted, fmt.Sprintf("stopped following; %s keeps running (%s events %s --follow)", session, progName, shellQuote(session))}
	}
	return nil
}

// readEvents reads every event the session holds after after, page by
// page (with opts.SubAgents its sub-agents' too).
func (a *app) readEvents(ctx context.Context, c sessionClient, session string, after int64, opts follow.Options) ([]follow.Event, error) {
	all, err := follow.ReadAll(ctx, c, session, after, opts)
	if err != nil {
		return nil, sessionError(err, "query events of", session, a.cfg.Namespace)
	}
	return all, nil
}

// printStreamEvent writes e: a JSON line with --json (hidden characters
// escaped, as every JSON the CLI prints), else one line rendered by
// follow.Line.
func (a *app) printStreamEvent(e follow.Event, session string) error {
	if !a.cfg.JSON {
		_, err := fmt.Fprintln(a.stdout, follow.Line(e, fullHint("conversation", session)))
		return err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	_, err := a.stdout.Write(untrusted.JSON(b.Bytes()))
	return err
}

// dataConverter decodes what the worker wrote: with its keys when the
// CLI has them (--encryption-keys), else the SDK's default.
func (a *app) dataConverter() converter.DataConverter {
	if a.cfg.keys != nil {
		return codec.DataConverter(a.cfg.keys)
	}
	return converter.GetDefaultDataConverter()
}
