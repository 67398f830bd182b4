package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/longrun/longrun/follow"
	"github.com/longrun/longrun/untrusted"
	"github.com/longrun/longrun/workflows"
)

// consoleEvents is how many of the latest events a session page shows.
const consoleEvents = 30

// eventsAnswer is the console's /session/events answer: a page of the
// session's event stream (docs/EVENTS.md), the model's reply so far
// while a model call is pending, and whether the execution has closed.
type eventsAnswer struct {
	SessionID string         `json:"session_id"`
	Events    []follow.Event `json:"events"`
	// Next is the Seq the next event will get: ask again with
	// after=Next-1.
	Next   int64 `json:"next"`
	Missed int64 `json:"missed,omitempty"`
	More   bool  `json:"more,omitempty"`
	// Partial is the reply the model is writing (the heartbeat's last
	// 1,000 bytes), "" when no model call is pending.
	Partial string `json:"partial,omitempty"`
	Closed  bool   `json:"closed"`
}

// sessionEvents answers GET /session/events?id=S&after=N with the events
// after N as JSON, hidden characters escaped like every JSON the CLI
// prints; a page that renders them shows every string through untrusted.
// A bad "after" is a 400 with the session's own words.
func (s *console) sessionEvents(w http.ResponseWriter, r *http.Request, _ request) {
	q := r.URL.Query()
	id := q.Get("id")
	if id == "" {
		jsonError(w, http.StatusBadRequest, "give the session: /session/events?id=SESSION&after=N")
		return
	}
	var after int64
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			jsonError(w, http.StatusBadRequest, "after="+untrusted.Token(v)+": not a whole number (0: from the first event kept)")
			return
		}
		after = n
	}
	ctx, cancel := context.WithTimeout(r.Context(), consoleQueryTimeout)
	defer cancel()
	page, err := follow.Page(ctx, s.c, id, workflows.EventsRequest{After: after})
	if err != nil {
		status := http.StatusBadGateway
		if follow.Permanent(err) {
			status = http.StatusBadRequest
		}
		jsonError(w, status, sessionError(err, "query events of", id, s.a.cfg.Namespace).Error())
		return
	}
	ans := eventsAnswer{SessionID: id, Events: []follow.Event{}, Next: page.Next, Missed: page.Missed, More: page.More}
	for _, e := range page.Events {
		ans.Events = append(ans.Events, follow.Event{Event: e})
	}
	if desc, err := s.c.DescribeWorkflowExecution(ctx, id, ""); err == nil {
		ans.Closed = follow.Closed(desc.GetWorkflowExecutionInfo().GetStatus())
		if text, ok, _ := follow.PartialOf(desc, s.a.dataConverter()); ok {
			ans.Partial = text
		}
	}
	writeJSON(w, http.StatusOK, ans)
}

// recentEvents are the session's latest events as lines for its page,
// each rendered by follow.Line (untrusted text made visible; the
// template escapes it for HTML).
func (s *console) recentEvents(ctx context.Context, id string) ([]string, error) {
	page, err := follow.Page(ctx, s.c, id, workflows.EventsRequest{Tail: consoleEvents})
	if err != nil {
		return nil, sessionError(err, "query events of", id, s.a.cfg.Namespace)
	}
	lines := make([]string, 0, len(page.Events))
	for i := len(page.Events) - 1; i >= 0; i-- { // newest first
		lines = append(lines, follow.Line(follow.Event{Event: page.Events[i]}, fullHint("conversation", id)))
	}
	return lines, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(true) // a page may put it in its HTML
	_ = enc.Encode(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(untrusted.JSON(b.Bytes()))
}

func jsonError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
