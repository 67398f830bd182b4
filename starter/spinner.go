package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/workflows"
)

// spinTick is how often the spinner turns between polls: fast enough to
// look alive, slow enough to cost nothing.
const spinTick = 100 * time.Millisecond

// eraseLine returns to the start of the line and clears it, so real output
// replaces the spinner instead of following it.
const eraseLine = "\r\x1b[K"

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// spinner is the one status line watch keeps at the bottom of a terminal
// while the session works and nothing new has arrived, so a long model
// call or test run does not look like a hang.
type spinner struct {
	text  string    // what the session is doing; "" when it waits for someone
	since time.Time // when it started doing it, or the last output
	shown bool      // the line is on the screen and must be erased first
	frame int
}

// activity says what a running session is busy with, from the same
// queries watch already makes: the tool calls of the last assistant
// message that have no result yet are running; otherwise the model is
// being asked. It is "" when the session waits for a person or is done.
func activity(msgs []conversation.Message, pending int, phase string) string {
	if phase != workflows.PhaseRunning || pending > 0 {
		return ""
	}
	done := map[string]bool{}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == conversation.RoleTool && m.Result != nil {
			done[m.Result.CallID] = true
			continue
		}
		var running []conversation.ToolCall
		if m.Role == conversation.RoleAssistant {
			for _, tc := range m.ToolCalls {
				if !done[tc.ID] {
					running = append(running, tc)
				}
			}
		}
		if len(running) > 0 {
			s := "running " + callSummary(running[0])
			if len(running) > 1 {
				s += fmt.Sprintf(" (+%d more)", len(running)-1)
			}
			return s
		}
		break
	}
	return "model thinking…"
}

// callSummary is "shell: go test ./..." or "edit: tools/read.go": the
// argument a person recognises a call by, else the arguments cut short.
func callSummary(tc conversation.ToolCall) string {
	var args map[string]any
	if json.Unmarshal([]byte(tc.Arguments), &args) == nil {
		for _, k := range []string{"command", "path", "pattern", "url"} {
			if v, ok := args[k].(string); ok && v != "" {
				return oneLine(tc.Name) + ": " + cut(oneLine(v), 60)
			}
		}
	}
	return oneLine(tc.Name) + ": " + cut(oneLine(tc.Arguments), 60)
}

// spinnerLine is the spinner as drawn: frame, activity and the seconds it
// has taken, cut to width so the line never wraps.
func spinnerLine(st style, frame int, text string, elapsed time.Duration, width int) string {
	s := fmt.Sprintf("%s %s %ds", spinFrames[frame%len(spinFrames)], text, int(elapsed/time.Second))
	return eraseLine + st.paint(cut(s, max(width-1, 10)), sgrDim)
}

// setSpin updates what the spinner says after a poll. printed restarts the
// clock: the seconds count how long nothing new has arrived.
func (a *app) setSpin(w *watchState, text string, printed bool) {
	if !a.ui.live {
		return
	}
	if text != w.spin.text || printed {
		w.spin.since = time.Now()
	}
	w.spin.text = text
	if text == "" {
		a.clearSpin(w)
		return
	}
	a.drawSpin(w)
}

func (a *app) drawSpin(w *watchState) {
	if w.spin.text == "" {
		return
	}
	io.WriteString(a.stdout, spinnerLine(a.ui.style, w.spin.frame, w.spin.text, time.Since(w.spin.since), a.termWidth()))
	w.spin.frame++
	w.spin.shown = true
}

// clearSpin erases the spinner line, before anything else is written.
func (a *app) clearSpin(w *watchState) {
	if w.spin.shown {
		io.WriteString(a.stdout, eraseLine)
		w.spin.shown = false
	}
}

// pause waits for the next poll, turning the spinner meanwhile. It is
// false when ctx ends first.
func (a *app) pause(ctx context.Context, w *watchState, d time.Duration) bool {
	if !a.ui.live || w.spin.text == "" {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	deadline := time.After(d)
	tick := time.NewTicker(spinTick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-deadline:
			return true
		case <-tick.C:
			a.drawSpin(w)
		}
	}
}
