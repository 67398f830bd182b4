package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/longrun/longrun/workflows"
)

// sessionRow is one session as list shows it, read from the visibility
// store alone: listing never queries a worker, so it works with none up and
// costs one call per page however many sessions there are.
type sessionRow struct {
	ID      string    `json:"session_id"`
	RunID   string    `json:"run_id"`
	Status  string    `json:"status"`
	Phase   string    `json:"phase"`
	Turns   int64     `json:"turns"`
	Pending int64     `json:"pending_approvals"`
	Tokens  int64     `json:"tokens"`
	Model   string    `json:"model"`
	Start   time.Time `json:"start_time"`
}

// listOptions are the flags of `list`.
type listOptions struct {
	waiting bool
	running bool
	phase   string
	query   string
	limit   int
	quiet   bool
}

// listQuery is the visibility query for o: always our workflow type, so a
// namespace shared with other workflows lists only sessions.
func listQuery(o listOptions) string {
	q := []string{fmt.Sprintf(`WorkflowType = %q`, workflows.WorkflowType)}
	if o.waiting {
		// Both attributes: the phase says a turn is blocked on a person,
		// the count catches calls waiting while others still run.
		q = append(q, `ExecutionStatus = "Running"`, fmt.Sprintf(`(%s > 0 OR %s = %q)`,
			workflows.PendingApprovalsKey.GetName(), workflows.PhaseKey.GetName(), workflows.PhaseWaitingApproval))
	}
	if o.running && !o.waiting {
		q = append(q, `ExecutionStatus = "Running"`)
	}
	if o.phase != "" {
		q = append(q, fmt.Sprintf(`%s = %q`, workflows.PhaseKey.GetName(), o.phase))
	}
	if o.query != "" {
		q = append(q, "("+o.query+")")
	}
	return strings.Join(q, " AND ")
}

func (a *app) cmdList(ctx context.Context, fs *flag.FlagSet, args []string) error {
	var o listOptions
	fs.BoolVar(&o.waiting, "waiting", false, "only sessions waiting for a person (pending approvals)")
	fs.BoolVar(&o.running, "running", false, "only sessions still running")
	fs.StringVar(&o.phase, "phase", "", "only sessions in this phase: running, waiting-approval, waiting-input, done")
	fs.StringVar(&o.query, "query", "", `extra visibility query, ANDed, e.g. 'LongrunTokens > 10000'`)
	fs.IntVar(&o.limit, "limit", 50, "most sessions to show, newest first (0 = all)")
	fs.BoolVar(&o.quiet, "quiet", false, "print only session ids, one a line (for scripts and completion)")
	fs.BoolVar(&o.quiet, "q", false, "short for --quiet")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("list takes no arguments, got %s", strings.Join(pos, " "))
	}
	if o.limit < 0 {
		return usagef("--limit must not be negative")
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	rows, err := a.listSessions(ctx, c, listQuery(o), o.limit)
	if err != nil {
		return err
	}
	switch {
	case o.quiet:
		for _, r := range rows {
			fmt.Fprintln(a.stdout, r.ID)
		}
		return nil
	case a.cfg.JSON:
		return a.printJSON(rows)
	}
	if len(rows) == 0 {
		what := "no sessions"
		if o.waiting {
			what = "no session is waiting for a person"
		}
		fmt.Fprintf(a.stdout, "%s in namespace %s\n", what, a.cfg.Namespace)
		return nil
	}
	renderList(a.stdout, rows)
	return nil
}

// listSessions pages through the visibility query until limit rows (0 =
// no limit).
func (a *app) listSessions(ctx context.Context, c sessionClient, query string, limit int) ([]sessionRow, error) {
	rows := []sessionRow{}
	var token []byte
	for {
		req := &workflowservice.ListWorkflowExecutionsRequest{Namespace: a.cfg.Namespace, Query: query, NextPageToken: token}
		if limit > 0 {
			req.PageSize = int32(min(limit-len(rows), 1000))
		}
		resp, err := c.ListWorkflow(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("list sessions (%s): %w", query, err)
		}
		for _, ex := range resp.GetExecutions() {
			rows = append(rows, rowFromExecution(ex))
			if limit > 0 && len(rows) == limit {
				return rows, nil
			}
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return rows, nil
		}
	}
}

func rowFromExecution(ex *workflowpb.WorkflowExecutionInfo) sessionRow {
	sa := ex.GetSearchAttributes().GetIndexedFields()
	return sessionRow{
		ID:      ex.GetExecution().GetWorkflowId(),
		RunID:   ex.GetExecution().GetRunId(),
		Status:  statusName(ex.GetStatus().String()),
		Phase:   attr[string](sa, workflows.PhaseKey.GetName()),
		Turns:   attr[int64](sa, workflows.TurnsKey.GetName()),
		Pending: attr[int64](sa, workflows.PendingApprovalsKey.GetName()),
		Tokens:  attr[int64](sa, workflows.TokensKey.GetName()),
		Model:   attr[string](sa, workflows.ModelKey.GetName()),
		Start:   ex.GetStartTime().AsTime(),
	}
}

// attr decodes one search attribute; a missing or undecodable one is the
// zero value, since a session that has not run a turn has none yet.
func attr[T any](fields map[string]*commonpb.Payload, name string) T {
	var v T
	if p, ok := fields[name]; ok {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &v)
	}
	return v
}

// statusName turns WORKFLOW_EXECUTION_STATUS_RUNNING into "running", the
// word the UI shows.
func statusName(s string) string {
	return strings.ToLower(strings.TrimPrefix(s, "WORKFLOW_EXECUTION_STATUS_"))
}

func renderList(w io.Writer, rows []sessionRow) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tSTATUS\tPHASE\tTURNS\tPENDING\tMODEL\tSTARTED")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", r.ID, r.Status, dash(r.Phase), r.Turns, r.Pending, dash(r.Model),
			r.Start.Local().Format("2006-01-02 15:04:05"))
	}
	tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
