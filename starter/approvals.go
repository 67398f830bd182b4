package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/longrun/longrun/callref"
	"github.com/longrun/longrun/workflows"
)

// errNoPending is returned when there is nothing to approve or deny.
var errNoPending = errors.New("no tool calls are waiting for approval")

// pickedCall is a pending call an approve or deny names, and how.
type pickedCall struct {
	workflows.PendingApproval
	// byModelID: the person named it by the model's own id, which the
	// session takes only while it names one call (callref.Match).
	byModelID string
}

// approval is the decision on the picked call: by the session's id, or
// by the model's id when that is what the person typed, with the digest
// of the arguments the CLI read in the same listing.
func (p pickedCall) approval(proto workflows.Approval) workflows.Approval {
	ap := proto
	if ap.Digest == "" { // --digest, already checked against p, goes as the person gave it
		ap.Digest = p.Digest
	}
	if p.byModelID != "" {
		ap.CallID = p.byModelID
	} else {
		ap.ID = p.ID
	}
	return ap
}

// selectCallIDs decides which pending calls an approve or deny names. A
// signal cannot return an error, so the CLI checks here what the workflow
// would otherwise drop silently: an unknown id is refused with the list of
// the pending ones. An id is the session's (as every surface shows it);
// the model's own is taken only when it names one waiting call, and the
// session refuses it still when the model used it for an earlier call.
func selectCallIDs(pending []workflows.PendingApproval, requested []string, all bool) ([]pickedCall, error) {
	if all && len(requested) > 0 {
		return nil, usagef("give call ids or --all, not both")
	}
	if len(pending) == 0 {
		return nil, errNoPending
	}
	if all || (len(requested) == 0 && len(pending) == 1) {
		picked := make([]pickedCall, len(pending))
		for i, p := range pending {
			picked[i] = pickedCall{PendingApproval: p}
		}
		return picked, nil
	}
	if len(requested) == 0 {
		return nil, fmt.Errorf("%d tool calls are waiting; name the call ids or pass --all:\n%s", len(pending), pendingList(pending))
	}
	var picked []pickedCall
	var unknown []string
	seen := map[string]bool{}
	for _, id := range requested {
		p, err := pickCall(pending, id)
		if errors.Is(err, errNoSuchCall) {
			unknown = append(unknown, fmt.Sprintf("%q", id))
			continue
		}
		if err != nil {
			return nil, err
		}
		if seen[p.ID] {
			continue
		}
		seen[p.ID] = true
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

var errNoSuchCall = errors.New("no such waiting call")

// pickCall finds the waiting call id names: the session's id first, then
// the model's if exactly one waiting call has it.
func pickCall(pending []workflows.PendingApproval, id string) (pickedCall, error) {
	var byModel []workflows.PendingApproval
	for _, p := range pending {
		if p.ID == id {
			return pickedCall{PendingApproval: p}, nil
		}
		if p.CallID == id {
			byModel = append(byModel, p)
		}
	}
	switch len(byModel) {
	case 0:
		return pickedCall{}, errNoSuchCall
	case 1:
		return pickedCall{PendingApproval: byModel[0], byModelID: id}, nil
	}
	ids := make([]string, len(byModel))
	for i, p := range byModel {
		ids[i] = p.ID
	}
	return pickedCall{}, fmt.Errorf("the model used the call id %q for %d waiting calls (%s): nothing sent; name the call by its id as the list shows it:\n%s",
		id, len(byModel), strings.Join(ids, ", "), pendingList(pending))
}

// pendingList is the indented one-line-per-call list error messages show.
func pendingList(pending []workflows.PendingApproval) string {
	var b strings.Builder
	for i, p := range pending {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "  %s  %s %s", showID(p.ID), oneLine(p.Tool), preview(p.Arguments, 60, "see all: "+progName+" pending --full SESSION"))
	}
	return b.String()
}

// checkDigestFlag checks --digest before anything is asked: it names one
// call (an id, or the only waiting call), and is as long as surfaces
// show it.
func checkDigestFlag(digest string, ids []string, all bool) error {
	if all || len(ids) > 1 {
		return usagef("--digest names the arguments of one call: give one call id with it, not several or --all")
	}
	d := strings.TrimSpace(digest)
	if len(d) < callref.ShortLen || strings.Trim(strings.ToLower(d), "0123456789abcdef") != "" {
		return usagef("--digest %s is not a digest: give the %d or more hex digits that pending or the console print for the call", oneLine(digest), callref.ShortLen)
	}
	return nil
}

// digestMismatch refuses a decision whose --digest is not the arguments
// of the call waiting now: the person read another call under that id
// (the model can reuse ids, and a page can be stale). It shows the call
// that waits, so the person can decide on what is there.
func digestMismatch(session string, p pickedCall, digest, decision string) error {
	if callref.DigestMatches(digest, p.Digest) {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "nothing sent: call %s waits with other arguments than the ones you read (--digest %s; the call now has %s). It waits with:\n",
		showID(p.ID), oneLine(digest), callref.Short(p.Digest))
	renderDecided(&b, session, p.PendingApproval, false)
	fmt.Fprintf(&b, "If this is what you mean to %s, run: %s %s %s %s --digest %s",
		decision, progName, decision, shellQuote(session), shellQuote(p.ID), callref.Short(p.Digest))
	return errors.New(b.String())
}

// renderDecided shows the call a decision names, through the untrusted
// renderer: the arguments on one line cut with where to see them whole
// (or whole with full), and the digest the decision carries.
func renderDecided(w io.Writer, session string, p workflows.PendingApproval, full bool) {
	if full {
		fmt.Fprintf(w, "%sarguments:\n", continuationSpace)
		for _, l := range argLines(style{}, p.Arguments) {
			fmt.Fprintln(w, continuationSpace+continuationSpace+l)
		}
	} else {
		fmt.Fprintf(w, "%sarguments: %s\n", continuationSpace, preview(p.Arguments, maxArgsPreview, fullHint("show", session)))
	}
	if p.Digest != "" {
		fmt.Fprintf(w, "%sdigest:    %s\n", continuationSpace, callref.Short(p.Digest))
	}
}
