package workflows

import (
	"encoding/json"

	"github.com/longrun/longrun/tools"
)

// plannedCall is what the planner knows of one call of a batch.
type plannedCall struct {
	// exclusive calls change things; shared calls only read.
	exclusive bool
	// paths the call reads (shared) or changes (exclusive); nil when not
	// known, which means everything.
	paths []string
}

// planFor describes a call for planBatch from its tool's spec and its
// arguments.
func planFor(spec tools.Spec, args string) plannedCall {
	pc := plannedCall{exclusive: spec.ConcurrencyClass() == tools.ConcurrencyExclusive}
	if paths, ok := spec.CallPaths(json.RawMessage(args)); ok {
		pc.paths = paths
	}
	return pc
}

// planBatch is the batch's schedule as a pure function: for each call, the
// indexes of the earlier calls it must wait for. Shared calls run beside
// each other; an exclusive call whose paths are unknown (shell) is a
// barrier, waiting for everything before it and holding back everything
// after it; an exclusive call with known paths (write, edit, apply_patch)
// only waits for, and holds back, calls that touch the same paths, so two
// writes to different files run together, a read and a write of one file
// do not. The model's order decides who goes first; results are reported
// in that order whatever order they finish in.
func planBatch(calls []plannedCall) [][]int {
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
func conflicts(a, b plannedCall) bool {
	if !a.exclusive && !b.exclusive {
		return false
	}
	if a.paths == nil || b.paths == nil {
		return true
	}
	for _, pa := range a.paths {
		for _, pb := range b.paths {
			if tools.PathsOverlap(pa, pb) {
				return true
			}
		}
	}
	return false
}
