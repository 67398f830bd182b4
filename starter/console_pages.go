package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/longrun/longrun/callref"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/follow"
	"github.com/longrun/longrun/untrusted"
)

// inboxEntry is one waiting session in the inbox.
type inboxEntry struct {
	Row     sessionRow
	Where   whereView
	Pending []pendingView
	Err     string
}

// waitingSessions finds the sessions waiting for a person through the
// visibility store (as `list --waiting` does) and asks each for its
// pending calls, all at once, each bounded: one session without a worker
// must not hold up the page.
func (s *console) waitingSessions(ctx context.Context) ([]inboxEntry, error) {
	rows, err := s.a.listSessions(ctx, s.c, listQuery(listOptions{waiting: true}), consoleMaxSessions)
	if err != nil {
		return nil, err
	}
	out := make([]inboxEntry, len(rows))
	var wg sync.WaitGroup
	for i, row := range rows {
		out[i].Row = row
		wg.Go(func() {
			qctx, cancel := context.WithTimeout(ctx, consoleQueryTimeout)
			defer cancel()
			task := ""
			if desc, err := s.c.DescribeWorkflowExecution(qctx, row.ID, ""); err == nil {
				task = s.taskOf(desc)
			}
			out[i].Where = s.where(qctx, row.ID, task)
			p, err := s.a.queryPending(qctx, s.c, row.ID)
			if err != nil {
				out[i].Err = err.Error()
				return
			}
			out[i].Pending = pendingViews(p)
		})
	}
	wg.Wait()
	return keepWaiting(out), nil
}

// keepWaiting drops the entries with nothing to decide: a session whose
// calls were decided since the visibility store was written, and a
// sub-agent whose calls its parent already shows (a call waiting in a
// sub-agent is listed, and decided, in the session it works for).
func keepWaiting(entries []inboxEntry) []inboxEntry {
	shownByParent := map[string]bool{}
	for _, e := range entries {
		for _, p := range e.Pending {
			if p.Session != "" {
				shownByParent[p.Session] = true
			}
		}
	}
	kept := entries[:0]
	for _, e := range entries {
		if (len(e.Pending) > 0 || e.Err != "") && !(shownByParent[e.Row.ID] && e.Err == "") {
			kept = append(kept, e)
		}
	}
	return kept
}

func (s *console) inbox(w http.ResponseWriter, r *http.Request, rq request) {
	flash, isErr := s.takeFlash(w, r)
	entries, err := s.waitingSessions(r.Context())
	p := page{Title: "inbox", CSRF: rq.csrf, Who: rq.who, Flash: flash, FlashErr: isErr}
	if err != nil {
		p.Flash, p.FlashErr = err.Error(), true
	}
	p.Data = struct {
		Entries []inboxEntry
		Keys    string
	}{entries, pendingKeyList(entries)}
	s.render(w, http.StatusOK, "inbox.html", p)
}

// pendingKeys answers the inbox's script with the waiting calls as one
// line, so the page reloads when they change and not otherwise (a
// reload would lose feedback being typed).
func (s *console) pendingKeys(w http.ResponseWriter, r *http.Request, _ request) {
	entries, err := s.waitingSessions(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, pendingKeyList(entries))
}

func pendingKeyList(entries []inboxEntry) string {
	var keys []string
	for _, e := range entries {
		for _, p := range e.Pending {
			keys = append(keys, e.Row.ID+"/"+p.ID+"@"+callref.Short(p.Digest))
		}
	}
	return strings.Join(keys, " ")
}

// sessionData is a session page: its state, its waiting calls and its
// conversation.
type sessionData struct {
	ID         string
	Where      whereView
	Review     *reviewView // a finished session with a branch of its own
	Status     statusView
	Pending    []pendingView
	PendingErr string
	Keys       string
	Messages   []messageView
	MessageErr string
	// Events are the session's latest events, newest first, each a line
	// follow.Line rendered; EventsErr says why there are none.
	Events    []string
	EventsErr string
	// Writing is the end of the reply the model is writing (its
	// heartbeat), made visible; "" when no model call is pending.
	Writing string
	Earlier int  // messages before the ones shown
	Done    bool // the execution has closed: nothing more will come
	Every   int  // milliseconds between refreshes
}

func (s *console) sessionData(ctx context.Context, id string) sessionData {
	d := sessionData{ID: id, Every: int(consolePollInterval / time.Millisecond)}
	qctx, cancel := context.WithTimeout(ctx, consoleQueryTimeout)
	defer cancel()
	task := ""
	if desc, err := s.c.DescribeWorkflowExecution(qctx, id, ""); err != nil {
		d.Status.Err = sessionError(err, "describe", id, s.a.cfg.Namespace).Error()
	} else {
		task = s.taskOf(desc)
		if text, ok, _ := follow.PartialOf(desc, s.a.dataConverter()); ok {
			d.Writing = untrusted.Visible(text)
		}
		st := desc.GetWorkflowExecutionInfo().GetStatus().String()
		d.Status.Execution = statusName(st)
		d.Done = d.Status.Execution != "running"
	}
	d.Where = s.where(qctx, id, task)
	if d.Status.Err == "" {
		if st, err := s.a.queryStatus(qctx, s.c, id); err != nil {
			d.Status.Err = err.Error()
		} else {
			d.Status.Status = &st
		}
	}
	if p, err := s.a.queryPending(qctx, s.c, id); err != nil {
		d.PendingErr = err.Error()
	} else {
		d.Pending = pendingViews(p)
		var keys []string
		for _, c := range p {
			keys = append(keys, id+"/"+c.ID+"@"+callref.Short(c.Digest))
		}
		d.Keys = strings.Join(keys, " ")
	}
	if evs, err := s.recentEvents(qctx, id); err != nil {
		d.EventsErr = err.Error()
	} else {
		d.Events = evs
	}
	if msgs, err := s.a.queryConversation(qctx, s.c, id); err != nil {
		d.MessageErr = err.Error()
	} else {
		if d.Where.Task == "" {
			d.Where.Task = firstAsk(msgs)
		}
		if n := len(msgs) - consoleMaxMessages; n > 0 {
			// A session of days has thousands of messages; the page
			// is refreshed every two seconds.
			d.Earlier, msgs = n, msgs[n:]
		}
		d.Messages = messageViews(msgs)
	}
	return d
}

func (s *console) session(w http.ResponseWriter, r *http.Request, rq request) {
	id := r.URL.Query().Get("id")
	if id == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	flash, isErr := s.takeFlash(w, r)
	d := s.sessionData(r.Context(), id)
	if d.Done && !d.Where.InPlace && d.Where.Err == "" {
		// Not in the live part: a diff is read once per page load,
		// not every two seconds.
		ctx, cancel := context.WithTimeout(r.Context(), consoleApplyTimeout)
		d.Review = s.review(ctx, id)
		cancel()
	}
	s.render(w, http.StatusOK, "session.html", page{Title: id, CSRF: rq.csrf, Who: rq.who, Flash: flash, FlashErr: isErr, Data: d})
}

// live is the part of a session page its script refreshes: the state and
// the conversation. The waiting calls go in a header: the page reloads
// when they change rather than replace forms a person may be typing in.
func (s *console) live(w http.ResponseWriter, r *http.Request, rq request) {
	id := r.URL.Query().Get("id")
	d := s.sessionData(r.Context(), id)
	w.Header().Set("X-Longrun-Pending", d.Keys)
	if d.Done {
		w.Header().Set("X-Longrun-Done", "1")
	}
	s.render(w, http.StatusOK, "live", page{CSRF: rq.csrf, Data: d})
}

// firstAsk is the task of a session started without a summary: its first
// user message's first line, cut as a summary is, made visible.
func firstAsk(msgs []conversation.Message) string {
	for _, m := range msgs {
		if m.Role == conversation.RoleUser {
			return untrusted.Token(summaryLine(m.Content))
		}
	}
	return ""
}
