package permission

import (
	"fmt"
	"slices"
	"strings"
)

// Observe records a call the model made, in order. Call it for every call,
// after Decide and whatever the decision, so that the next Decide sees the
// repeats. The engine keeps only the last DoomLoop argument keys per tool.
func (e *Engine) Observe(c Call) {
	if e.doomLoop < 0 {
		return
	}
	h := append(e.history[c.Tool], c.ArgsKey)
	if len(h) > e.doomLoop {
		h = h[len(h)-e.doomLoop:]
	}
	e.history[c.Tool] = slices.Clip(h)
}

// doomLoopDecision reports whether c would be the DoomLoop-th call in a row
// of its tool with the same arguments, and what to do then: a rule for the
// doom_loop tool whose pattern matches the tool name decides, else ask.
func (e *Engine) doomLoopDecision(c Call) (Decision, bool) {
	if e.doomLoop < 0 || c.ArgsKey == "" {
		return Decision{}, false
	}
	h := e.history[c.Tool]
	need := e.doomLoop - 1
	if len(h) < need {
		return Decision{}, false
	}
	for _, k := range h[len(h)-need:] {
		if k != c.ArgsKey {
			return Decision{}, false
		}
	}
	what := fmt.Sprintf("doom loop: tool %s has been called with identical arguments %d times in a row", c.Tool, e.doomLoop)
	if m, ok := e.lastMatch(Call{Tool: DoomLoopTool}, c.Tool, ""); ok {
		d := ruleDecision(m, c, c.Tool, false)
		d.Reason = what + "; " + d.Reason
		return d, true
	}
	return Decision{Action: Ask, Layer: LayerDoomLoop,
		Reason: what + "; a person must confirm it should go on (the model may be stuck repeating itself)"}, true
}

// State is the engine's changing state, for carrying it across
// continue-as-new; Config is passed to New again.
type State struct {
	Remembered []Rule        `json:"remembered,omitempty"`
	History    []ToolHistory `json:"history,omitempty"`
}

// ToolHistory is the doom-loop history of one tool, oldest first.
type ToolHistory struct {
	Tool     string   `json:"tool"`
	ArgsKeys []string `json:"args_keys"`
}

// State returns a copy of the remembered rules and the doom-loop history,
// sorted by tool so that it is the same on every replay.
func (e *Engine) State() State {
	s := State{Remembered: slices.Clone(e.layers[e.remembered].Rules)}
	for tool, keys := range e.history {
		s.History = append(s.History, ToolHistory{Tool: tool, ArgsKeys: slices.Clone(keys)})
	}
	slices.SortFunc(s.History, func(a, b ToolHistory) int { return strings.Compare(a.Tool, b.Tool) })
	return s
}

// Restore replaces the engine's state with s, as State returned it.
func (e *Engine) Restore(s State) error {
	for i, r := range s.Remembered {
		if err := r.validate(); err != nil {
			return fmt.Errorf("restore remembered rule %d: %w", i+1, err)
		}
	}
	e.layers[e.remembered].Rules = slices.Clone(s.Remembered)
	e.history = map[string][]string{}
	for _, h := range s.History {
		keys := slices.Clone(h.ArgsKeys)
		if e.doomLoop > 0 && len(keys) > e.doomLoop {
			keys = keys[len(keys)-e.doomLoop:]
		}
		e.history[h.Tool] = keys
	}
	return nil
}
