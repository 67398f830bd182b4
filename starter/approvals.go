package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/longrun/longrun/workflows"
)

// errNoPending is returned when there is nothing to approve or deny.
var errNoPending = errors.New("no tool calls are waiting for approval")

// selectCallIDs decides which pending calls an approve or deny names. A
// signal cannot return an error, so the CLI checks here what the workflow
// would otherwise drop silently: an unknown id is refused with the list of
// the pending ones.
func selectCallIDs(pending []workflows.PendingApproval, requested []string, all bool) ([]workflows.PendingApproval, error) {
	if all && len(requested) > 0 {
		return nil, usagef("give call ids or --all, not both")
	}
	if len(pending) == 0 {
		return nil, errNoPending
	}
	if all {
		return pending, nil
	}
	if len(requested) == 0 {
		if len(pending) == 1 {
			return pending, nil
		}
		return nil, fmt.Errorf("%d tool calls are waiting; name the call ids or pass --all:\n%s", len(pending), pendingList(pending))
	}
	byID := make(map[string]workflows.PendingApproval, len(pending))
	for _, p := range pending {
		byID[p.CallID] = p
	}
	var picked []workflows.PendingApproval
	var unknown []string
	seen := map[string]bool{}
	for _, id := range requested {
		if seen[id] {
			continue
		}
		seen[id] = true
		p, ok := byID[id]
		if !ok {
			unknown = append(unknown, fmt.Sprintf("%q", id))
			continue
		}
		picked = append(picked, p)
	}
	if len(unknown) > 0 {
		noun := "call id"
		if len(unknown) > 1 {
			noun = "call ids"
		}
		return nil, fmt.Errorf("unknown %s %s; waiting for approval:\n%s", noun, strings.Join(unknown, ", "), pendingList(pending))
	}
	return picked, nil
}

// pendingList is the indented one-line-per-call list error messages show.
func pendingList(pending []workflows.PendingApproval) string {
	var b strings.Builder
	for i, p := range pending {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "  %s  %s %s", showID(p.CallID), oneLine(p.Tool), preview(p.Arguments, 60, "see all: "+progName+" pending --full SESSION"))
	}
	return b.String()
}
