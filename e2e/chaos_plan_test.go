package e2e

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sm "github.com/longrun/longrun/scriptedmodel"
)

// ledgerFile is where every mutating chaos call appends one line,
// "<session>:<call id>", before it sleeps: the test reads it to count how
// many times each call really ran.
const ledgerFile = "chaos-ledger.txt"

// Step kinds: what one model reply asks for.
const (
	stepAuto  = "auto"  // one shell call the session's rules allow: it runs at once
	stepAsk   = "ask"   // one shell call no rule covers: it waits for a person
	stepRead  = "read"  // one read-only call (retried by Temporal)
	stepPair  = "pair"  // two mutating shell calls in one reply
	stepMixed = "mixed" // a mutating shell call and a read in one reply
)

// Kill kinds: where in the session the worker is killed.
const (
	killModel    = "model"    // while the model call of a step is in flight
	killTool     = "tool"     // while a mutating shell command of a step runs
	killApproval = "approval" // while a call of a step waits for a person
	killAnywhere = "anywhere" // a random delay after a step's model call starts
)

// killEvent is one planned kill: at which step, of which kind, and the
// random parts drawn from the seed (how long after the trigger, how long the
// worker stays down, how the approval is given).
type killEvent struct {
	Step     int
	Kind     string
	After    time.Duration // delay between the trigger and the kill
	Down     time.Duration // how long the worker stays dead
	SignalOK bool          // approval: send the approval signal while the worker is dead
}

func (k killEvent) String() string {
	return fmt.Sprintf("%s@step%d(+%s, down %s)", k.Kind, k.Step, k.After.Round(time.Millisecond), k.Down.Round(time.Millisecond))
}

// chaosPlan is one session's script: the steps its model takes and the
// kills the test inflicts. Everything random in a session comes from its
// plan, and the plan from the seed, so a failing session can be rerun.
type chaosPlan struct {
	Name  string
	Steps []string
	Kills []killEvent
	// Slow are the steps whose commands sleep 5 s instead of 1 s, so a
	// kill aimed at them surely lands while they run.
	Slow map[int]bool
}

func (p chaosPlan) String() string {
	ks := make([]string, len(p.Kills))
	for i, k := range p.Kills {
		ks[i] = k.String()
	}
	return fmt.Sprintf("%s steps=[%s] kills=[%s]", p.Name, strings.Join(p.Steps, " "), strings.Join(ks, " "))
}

// newChaosPlan draws session i's plan. primary is the kind of its first
// kill, rotated by the caller so every kind is covered however few
// sessions run; up to extra more kills are drawn from kinds.
func newChaosPlan(rng *rand.Rand, name, primary string, extra int, kinds []string) chaosPlan {
	steps := []string{stepAuto, stepAsk, stepRead, stepPair, stepMixed}
	p := chaosPlan{Name: name}
	for range 3 + rng.IntN(3) {
		p.Steps = append(p.Steps, steps[rng.IntN(len(steps))])
	}
	// A kill at a random moment may land in any later step and disturb
	// the trigger of a later kill, so the other kills come before it.
	hi := len(p.Steps)
	used := map[int]bool{}
	if k, ok := p.placeKill(rng, primary, used, hi); ok {
		p.Kills = append(p.Kills, k)
		used[k.Step] = true
		if k.Kind == killAnywhere {
			hi = k.Step - 1
		}
	}
	for range rng.IntN(extra + 1) {
		kind := kinds[rng.IntN(len(kinds))]
		if kind == killAnywhere {
			continue
		}
		if k, ok := p.placeKill(rng, kind, used, hi); ok {
			p.Kills = append(p.Kills, k)
			used[k.Step] = true
		}
	}
	sortKills(p.Kills)
	p.Slow = map[int]bool{}
	for _, k := range p.Kills {
		if k.Kind == killTool {
			p.Slow[k.Step] = true
		}
	}
	return p
}

// placeKill picks a step up to hi where a kill of kind can happen, making a
// step ask if none fits an approval kill.
func (p *chaosPlan) placeKill(rng *rand.Rand, kind string, used map[int]bool, hi int) (killEvent, bool) {
	k := killEvent{Kind: kind, Down: time.Duration(rng.IntN(1500)) * time.Millisecond}
	last := len(p.Steps) // the final model call, the one that answers in text
	var fits, free []int
	for i := 0; i <= min(hi, last); i++ {
		if used[i] {
			continue
		}
		if i < last {
			free = append(free, i)
		}
		switch {
		case kind == killModel || (kind == killAnywhere && i > 0):
			fits = append(fits, i)
		case kind == killTool && i < last && p.Steps[i] != stepRead:
			fits = append(fits, i)
		case kind == killApproval && i < last && p.Steps[i] == stepAsk:
			fits = append(fits, i)
		}
	}
	if len(fits) == 0 && (kind == killTool || kind == killApproval) && len(free) > 0 {
		i := free[rng.IntN(len(free))]
		p.Steps[i] = stepAsk
		fits = []int{i}
	}
	if len(fits) == 0 {
		return k, false
	}
	k.Step = fits[rng.IntN(len(fits))]
	switch kind {
	case killModel:
		k.After = time.Duration(rng.IntN(2000)) * time.Millisecond // the reply is held for 3 s
	case killTool:
		k.After = time.Duration(rng.IntN(2000)) * time.Millisecond // the command sleeps 5 s after its ledger line
	case killApproval:
		k.After = time.Duration(rng.IntN(1000)) * time.Millisecond
		k.SignalOK = rng.IntN(2) == 0
	case killAnywhere:
		k.After = time.Duration(rng.IntN(6000)) * time.Millisecond
	}
	return k, true
}

func sortKills(ks []killEvent) {
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j].Step < ks[j-1].Step; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
}

// killAt returns the plan's kill at step, if any.
func (p chaosPlan) killAt(step int) (killEvent, bool) {
	for _, k := range p.Kills {
		if k.Step == step {
			return k, true
		}
	}
	return killEvent{}, false
}

// callID names call j of step. Ids are derived from the step, so a retried
// model call (the worker died during it) answers with the same ids.
func (p chaosPlan) callID(step, j int) string { return fmt.Sprintf("%s_k%d_c%d", p.Name, step, j) }

// chaosModel plays the model for one session. It answers from the
// conversation in the request, not from a fixed sequence: a model call
// killed with the worker is retried, and the retry must get the same
// answer. It also tells the test when a step's model call arrives, so a
// kill can be aimed at it.
type chaosModel struct {
	plan chaosPlan

	mu      sync.Mutex
	arrived map[int]chan struct{} // closed when the first request for a step arrives
	seen    map[int]int           // requests per step
}

func newChaosModel(p chaosPlan) *chaosModel {
	m := &chaosModel{plan: p, arrived: map[int]chan struct{}{}, seen: map[int]int{}}
	for i := 0; i <= len(p.Steps); i++ {
		m.arrived[i] = make(chan struct{})
	}
	return m
}

// respond decides the next reply. The conversation says how far the
// session got: each assistant message whose calls are a step's counts as
// that step done. After a result saying the worker was lost, the model does
// what the README asks of it: it checks the workspace (a read of the
// ledger) before going on.
func (m *chaosModel) respond(req sm.Request) (sm.Reply, bool) {
	step, lostLast := 0, false
	for i, msg := range req.Messages {
		if msg.Role != "assistant" || len(msg.ToolCalls) == 0 {
			continue
		}
		lostLast = false
		if strings.HasSuffix(msg.ToolCalls[0].ID, "_check") {
			continue
		}
		step++
		for _, r := range req.Messages[i+1:] {
			if r.Role != "tool" {
				break
			}
			if strings.Contains(r.Content, "was lost") {
				lostLast = true
			}
		}
	}
	if lostLast {
		return sm.Tools(sm.Call{ID: fmt.Sprintf("%s_k%d_check", m.plan.Name, step-1), Name: "read", Arguments: `{"path": "` + ledgerFile + `"}`}), true
	}

	m.mu.Lock()
	m.seen[step]++
	first := m.seen[step] == 1
	if ch, ok := m.arrived[step]; ok && first {
		close(ch)
	}
	m.mu.Unlock()

	reply := sm.Text("done " + m.plan.Name)
	if step < len(m.plan.Steps) {
		reply = sm.Tools(m.stepCalls(step)...)
	}
	if k, ok := m.plan.killAt(step); ok && k.Kind == killModel && first {
		// Hold the first answer long enough for the kill to land in the
		// call; the retry is answered at once.
		reply.Delay = 3 * time.Second
	}
	return reply, true
}

// stepCalls is what the model asks for at step.
func (m *chaosModel) stepCalls(step int) []sm.Call {
	sleep := 1
	if m.plan.Slow[step] {
		sleep = 5
	}
	shell := func(j int, ask bool) sm.Call {
		id := m.plan.callID(step, j)
		line := fmt.Sprintf("echo %s:%s >> %s; sleep %d", m.plan.Name, id, ledgerFile, sleep)
		if ask {
			// No session rule covers printf, so this call asks.
			line = fmt.Sprintf(`printf '%%s\n' %s:%s >> %s; sleep %d`, m.plan.Name, id, ledgerFile, sleep)
		}
		return sm.Call{ID: id, Name: "shell", Arguments: fmt.Sprintf(`{"command": %q}`, line)}
	}
	read := func(j int) sm.Call {
		return sm.Call{ID: m.plan.callID(step, j), Name: "read", Arguments: `{"path": "notes.txt"}`}
	}
	switch m.plan.Steps[step] {
	case stepAsk:
		return []sm.Call{shell(0, true)}
	case stepRead:
		return []sm.Call{read(0)}
	case stepPair:
		return []sm.Call{shell(0, false), shell(1, false)}
	case stepMixed:
		return []sm.Call{shell(0, false), read(1)}
	default:
		return []sm.Call{shell(0, false)}
	}
}

// requests is how many model requests asked for step.
func (m *chaosModel) requests(step int) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen[step]
}

// waitArrived waits for the first model request of step.
func (m *chaosModel) waitArrived(step int, d time.Duration) bool {
	m.mu.Lock()
	ch := m.arrived[step]
	m.mu.Unlock()
	select {
	case <-ch:
		return true
	default:
	}
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// The harness's own logic: a seed gives the same plans every time, every
// kill has a step it can happen at, and the model answers a retried
// request the same way and checks the workspace after a lost worker.
func TestChaosPlanAndModel(t *testing.T) {
	t.Parallel()
	kinds := []string{killModel, killTool, killApproval, killAnywhere}
	for i := range 200 {
		p := newChaosPlan(rand.New(rand.NewPCG(42, uint64(i))), "s", kinds[i%4], 2, kinds)
		q := newChaosPlan(rand.New(rand.NewPCG(42, uint64(i))), "s", kinds[i%4], 2, kinds)
		require.Equal(t, p.String(), q.String(), "same seed, same plan")
		require.NotEmpty(t, p.Kills, p.String())
		placed := false
		for j, k := range p.Kills {
			placed = placed || k.Kind == kinds[i%4]
			switch k.Kind {
			case killApproval:
				require.Equal(t, stepAsk, p.Steps[k.Step], p.String())
			case killTool:
				require.NotEqual(t, stepRead, p.Steps[k.Step], p.String())
				require.True(t, p.Slow[k.Step], p.String())
			case killAnywhere:
				require.Equal(t, len(p.Kills)-1, j, "a kill at a random moment goes last: %s", p)
			}
			if j > 0 {
				require.Less(t, p.Kills[j-1].Step, k.Step, p.String())
			}
		}
		require.True(t, placed, "the primary kind is always placed: %s", p)
	}

	p := chaosPlan{Name: "s", Steps: []string{stepAuto, stepRead}, Kills: []killEvent{{Step: 0, Kind: killModel}}}
	m := newChaosModel(p)
	first, _ := m.respond(sm.Request{Messages: []sm.Message{{Role: "user", Content: "go"}}})
	retry, _ := m.respond(sm.Request{Messages: []sm.Message{{Role: "user", Content: "go"}}})
	require.Equal(t, 3*time.Second, first.Delay, "the call a model kill is aimed at is held")
	require.Zero(t, retry.Delay)
	require.Equal(t, first.ToolCalls, retry.ToolCalls, "a retried model call gets the same answer")
	require.True(t, m.waitArrived(0, 0))
	require.Equal(t, 2, m.requests(0))

	lost := []sm.Message{
		{Role: "user", Content: "go"},
		{Role: "assistant", ToolCalls: []sm.WireCall{{ID: p.callID(0, 0)}}},
		{Role: "tool", ToolCallID: p.callID(0, 0), Content: "the worker running this shell call was lost (activity Heartbeat timeout); it may or may not have taken effect."},
	}
	check, _ := m.respond(sm.Request{Messages: lost})
	require.Len(t, check.ToolCalls, 1)
	require.Equal(t, "s_k0_check", check.ToolCalls[0].ID)
	require.Equal(t, "read", check.ToolCalls[0].Name)
	checked := append(lost,
		sm.Message{Role: "assistant", ToolCalls: []sm.WireCall{{ID: "s_k0_check"}}},
		sm.Message{Role: "tool", ToolCallID: "s_k0_check", Content: "1\ts:s_k0_c0"})
	next, _ := m.respond(sm.Request{Messages: checked})
	require.Equal(t, p.callID(1, 0), next.ToolCalls[0].ID, "after the check the model goes on with the plan")
	done, _ := m.respond(sm.Request{Messages: append(checked,
		sm.Message{Role: "assistant", ToolCalls: []sm.WireCall{{ID: p.callID(1, 0)}}},
		sm.Message{Role: "tool", ToolCallID: p.callID(1, 0), Content: "chaos notes"})})
	require.Equal(t, "done s", done.Text)
}
