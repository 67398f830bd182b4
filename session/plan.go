package session

import (
	"encoding/json"

	"github.com/longrun/longrun/toolspec"
)

// PlannedCall is what the planner knows of one call of a batch.
type PlannedCall struct {
	// Exclusive calls change things; shared calls only read.
	Exclusive bool
	// Paths the call reads (shared) or changes (exclusive); nil when not
	// known, which means everything.
	Paths []string
}

// PlanFor describes a call for Plan from its tool's spec and its
// arguments.
func PlanFor(spec toolspec.Spec, args string) PlannedCall {
	pc := PlannedCall{Exclusive: spec.ConcurrencyClass() == toolspec.ConcurrencyExclusive}
	if paths, ok := spec.CallPaths(json.RawMessage(args)); ok {
		pc.Paths = paths
	}
	return pc
}

// Plan is the batch's schedule as a pure function: for each call, the
// indexes of the earlier calls it must wait for. Shared calls run beside
// each other; an exclusive call whose paths are unknown (shell) is a
// barrier, waiting for everything before it and holding back everything
// after it; an exclusive call with known paths (write, edit, apply_patch)
// only waits for, and holds back, calls that touch the same paths, so two
// writes to different files run together, a read and a write of one file
// do not. The model's order decides who goes first; results are reported
// in that order whatever order they finish in.
func Plan(calls []PlannedCall) [][]int {
	deps := make([][]int, len(calls))
	for j := range calls {
		for i := 0; i < j; i++ {
			if conflicts(calls[i], calls[j]) {
				deps[j] = append(deps[j], i)
			}
		}
	}
	return deps
}

// conflicts reports whether two calls must not run at the same time.
func conflicts(a, b PlannedCall) bool {
	if !a.Exclusive && !b.Exclusive {
		return false
	}
	if a.Paths == nil || b.Paths == nil {
		return true
	}
	for _, pa := range a.Paths {
		for _, pb := range b.Paths {
			if toolspec.PathsOverlap(pa, pb) {
				return true
			}
		}
	}
	return false
}

// Slot is how the pool sees one call of a batch when another asks to
// start.
type Slot struct {
	Deps   []int // Plan's answer for it
	Done   bool  // it has its result
	Queued bool  // approved (or needing none), waiting for its deps or a pool slot
}

// CanStart reports whether call i of the batch may start now: the pool
// (running of max) has a free slot, every call it depends on is done, and
// no earlier call that is queued and ready goes before it (the model's
// order first).
func CanStart(batch []Slot, i, running, max int) bool {
	if running >= max || !depsDone(batch, i) {
		return false
	}
	for j := range batch[:i] {
		if batch[j].Queued && depsDone(batch, j) {
			return false
		}
	}
	return true
}

func depsDone(batch []Slot, i int) bool {
	for _, d := range batch[i].Deps {
		if !batch[d].Done {
			return false
		}
	}
	return true
}
