package guardian

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/shellcmd"
)

// MaxDenials is how many guardian denials in a row send the next call to
// a person: a model that keeps trying what the guardian refuses needs a
// person's look, not a fourth refusal.
const MaxDenials = 3

// Memory is what a session remembers of its guardian: the decisions by
// call (the cache) and the denial streak. It is part of the session's
// state and carried across continue-as-new; JSON writes its map in sorted
// key order, so carrying it is deterministic.
type Memory struct {
	// Decided maps Key(tool, arguments) to the reviewer's approve or deny.
	Decided map[string]Verdict `json:"decided,omitempty"`
	// Denials counts guardian denials since the last guardian approval or
	// person's decision.
	Denials int `json:"denials,omitempty"`
}

// Key is the cache key of a call: its tool and its arguments in canonical
// JSON (object keys sorted, no insignificant space), so the same call
// written twice with its keys in another order is the same call.
// Arguments that are not JSON are keyed by their text.
func Key(tool, arguments string) string {
	var v any
	if err := json.Unmarshal([]byte(arguments), &v); err != nil {
		return tool + "\x00" + strings.TrimSpace(arguments)
	}
	canonical, err := json.Marshal(v)
	if err != nil {
		return tool + "\x00" + strings.TrimSpace(arguments)
	}
	return tool + "\x00" + string(canonical)
}

// Lookup says what to do with the call keyed key before a reviewer is
// asked: a cached verdict (Cached set), or ask a person because of the
// denial streak (FailStreak), or ok=false: ask the reviewer.
func (m *Memory) Lookup(key string) (Verdict, bool) {
	if m.Denials >= MaxDenials {
		return Failed(FailStreak, fmt.Sprintf("the guardian denied %d calls in a row, so a person decides this one", m.Denials)), true
	}
	if v, ok := m.Decided[key]; ok {
		v.Cached = true
		return v, true
	}
	return Verdict{}, false
}

// Record takes in a verdict the session acts on (the reviewer's, a cached
// or a failure's): approvals and denials are cached and move the streak.
// Failures and asks are not cached: a timeout may not repeat, and an ask
// is a person's to answer each time.
func (m *Memory) Record(key string, v Verdict) {
	switch v.Decision {
	case Approve:
		m.Denials = 0
	case Deny:
		m.Denials++
	default:
		return
	}
	if v.Cached {
		return
	}
	if m.Decided == nil {
		m.Decided = map[string]Verdict{}
	}
	v.Cached, v.Usage = false, nil // a reuse costs nothing
	m.Decided[key] = v
}

// PersonDecided ends the denial streak: a person has looked.
func (m *Memory) PersonDecided() { m.Denials = 0 }

// Eligible reports whether the guardian may decide call c, which the
// permission engine decided as d, and why not when it may not. Only a
// call that would otherwise ask a person is eligible, and of those not: a
// write to a control file (only a person may allow one), a repeated call
// the doom-loop check stopped, a command (permission.KindCommand, of any
// tool) on a worker without a sandbox (its ask says a person must approve),
// and a command whose program is computed at run time (nobody, reviewer included, can say
// what it runs). A hard-blocked command is denied before any of this.
func Eligible(c permission.Call, d permission.Decision) (bool, string) {
	if d.Action != permission.Ask {
		return false, "not an ask: the rules decided"
	}
	switch d.Layer {
	case permission.LayerControl:
		return false, "a write to a control file: only a person may allow it"
	case permission.LayerHardBlock:
		return false, "hard blocked"
	case permission.LayerDoomLoop:
		return false, "a repeated call the doom-loop check stopped"
	case permission.LayerSandbox:
		return false, "this worker has no sandbox: a person approves every command"
	}
	if !c.ReadOnly && c.Kind != permission.KindCommand {
		for _, p := range append([]string{c.Subject}, c.Paths...) {
			if p != "" && permission.IsControlPath(p) {
				return false, "a write to a control file: only a person may allow it"
			}
		}
	}
	if c.Kind == permission.KindCommand {
		v := shellcmd.Analyze(c.Subject)
		if v.Blocked {
			return false, "hard blocked"
		}
		if v.Obscured != "" {
			return false, fmt.Sprintf("the program %s is computed at run time: nobody can say what it runs", v.Obscured)
		}
	}
	return true, ""
}
