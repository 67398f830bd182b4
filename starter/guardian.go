package main

import (
	"context"
	"fmt"
	"io"

	"github.com/longrun/longrun/guardian"
	"github.com/longrun/longrun/workflows"
)

// showGuardian prints the guardian's decisions watch has not shown yet
// (sessions with approval "guardian"): an approval or a denial never
// reaches a person otherwise, so watch says who decided and why.
func (a *app) showGuardian(ctx context.Context, c sessionClient, w *watchState) {
	qctx, cancel := context.WithTimeout(ctx, watchPollTimeout)
	defer cancel()
	st, err := a.queryStatus(qctx, c, w.session)
	if err != nil {
		return // the next round shows them; pending and the conversation warned already
	}
	a.printGuardian(w, st)
}

// printGuardian prints the decisions in st that w has not shown.
func (a *app) printGuardian(w *watchState, st workflows.Status) {
	for i := range st.Guardian {
		d := st.Guardian[i]
		key := fmt.Sprintf("%d/%s", d.Turn, d.ID)
		if w.shownGuardian[key] {
			continue
		}
		if w.shownGuardian == nil {
			w.shownGuardian = map[string]bool{}
		}
		w.shownGuardian[key] = true
		if a.cfg.JSON {
			_ = a.printEvent(event{Type: "guardian", SessionID: w.session, Guardian: &d})
			continue
		}
		a.clearSpin(w)
		fmt.Fprintln(a.stdout, guardianLine(d))
	}
}

// guardianLine renders one guardian decision for a person.
func guardianLine(d workflows.GuardianDecision) string {
	verb := map[string]string{guardian.Approve: "approved", guardian.Deny: "denied", guardian.AskPerson: "asks a person about"}[d.Decision]
	if verb == "" {
		verb = d.Decision
	}
	how := ""
	switch {
	case d.Cached:
		how = " (cached decision)"
	case d.Failure != "":
		how = fmt.Sprintf(" (%s)", d.Failure)
	}
	reason := d.Reason
	if reason == "" {
		reason = "no reason given"
	}
	return fmt.Sprintf("🛡 guardian %s [%s] %s%s: %s", oneLine(verb), showID(d.ID), oneLine(d.Tool), how, oneLine(reason))
}

// guardianRows adds the guardian's latest decision to status and show.
func guardianRows(tw io.Writer, st workflows.Status) {
	if len(st.Guardian) == 0 {
		return
	}
	fmt.Fprintf(tw, "guardian\t%d recent decisions; latest: %s\n", len(st.Guardian), guardianLine(st.Guardian[len(st.Guardian)-1]))
}
