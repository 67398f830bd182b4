package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/longrun/longrun/callref"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/tools"
	"github.com/longrun/longrun/untrusted"
	"github.com/longrun/longrun/workflows"
)

// maxConsoleText is how much of one text in the conversation (an
// argument, a result, a message) a console page shows, with a note of
// what it hides past it. A waiting call is shown whole: a person decides
// on all of it.
const maxConsoleText = 20000

// consoleMore is where the conversation's cut texts are whole.
var consoleMore = "the waiting call shows whole above; the conversation's whole text: " + progName + " conversation --full SESSION"

// lineView is one line of a diff, with its kind (diffKind, or diffFile
// for a patch's *** header) as its CSS class.
type lineView struct {
	Kind string
	Text string
}

// fieldView is one argument of a call: a one-line value, a block of text,
// or a diff.
type fieldView struct {
	Key    string
	Text   string
	Block  bool       // multi-line text, shown as a block
	Diff   []lineView // set when the value is an edit or a patch
	Hidden string     // how much of the value is not shown, if any
}

// pendingView is a call waiting for a person, laid out to be decided.
type pendingView struct {
	workflows.PendingApproval
	Fields []fieldView
}

// callView is a tool call in the conversation.
type callView struct {
	ID, Name string
	Fields   []fieldView
}

// resultView is a tool result in the conversation.
type resultView struct {
	CallID, Name, Reason string
	IsError              bool
	Text                 string
	Diff                 []lineView
	Hidden               string // how much of the result is not shown, if any
}

// messageView is one conversation message.
type messageView struct {
	Role      string
	Text      string
	Hidden    string // how much of Text is not shown, if any
	Reasoning string
	Calls     []callView
	Result    *resultView
}

// ShortDigest is the digest of the call's arguments as the page shows it.
func (p pendingView) ShortDigest() string { return callref.Short(p.Digest) }

func pendingViews(ps []workflows.PendingApproval) []pendingView {
	out := make([]pendingView, 0, len(ps))
	for _, p := range ps {
		out = append(out, pendingView{PendingApproval: p, Fields: argumentFields(p.Tool, p.Arguments, 0)})
	}
	return out
}

// argumentFields lays out a call's JSON arguments one field each, in key
// order. An edit's old and new strings become one diff, a patch or a diff
// in any argument is shown as one, and arguments that are not a JSON
// object are shown as they are. Each value is cut to limit bytes with a
// note of what is hidden (0: whole).
func argumentFields(tool, args string, limit int) []fieldView {
	var obj map[string]any
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return []fieldView{textField("arguments", args, limit)}
	}
	var out []fieldView
	if tool == tools.EditName {
		path, _ := obj["path"].(string)
		oldS, ok1 := obj["old_string"].(string)
		newS, ok2 := obj["new_string"].(string)
		if ok1 && ok2 {
			delete(obj, "old_string")
			delete(obj, "new_string")
			// The strings are fragments of the file, not whole files:
			// their last lines lack a newline without that meaning
			// anything, so the diff is made of whole lines.
			d, c := untrusted.Head(tools.UnifiedDiff(path, withNewline(oldS), withNewline(newS)), limit, 0)
			out = append(out, fieldView{Key: "change", Diff: diffLines(d), Hidden: c.Note(consoleMore)})
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fields := make([]fieldView, 0, len(keys)+len(out))
	for _, k := range keys {
		v, ok := obj[k].(string)
		if !ok {
			b, _ := json.Marshal(obj[k]) // decoded from JSON, so it encodes
			v = string(b)
		}
		fields = append(fields, textField(k, v, limit))
	}
	return append(fields, out...)
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// textField is one value, cut to limit bytes (0: whole): as a diff when
// it is one, else as text, made visible (untrusted.Visible).
func textField(key, v string, limit int) fieldView {
	v, c := untrusted.Head(strings.TrimRight(v, "\n"), limit, 0)
	v = strings.ReplaceAll(v, "\r\n", "\n")
	lines := strings.Split(v, "\n")
	if len(lines) > 1 && isDiffText(lines) {
		return fieldView{Key: key, Diff: diffLines(v), Hidden: c.Note(consoleMore)}
	}
	v = untrusted.Visible(v)
	return fieldView{Key: key, Text: v, Block: strings.Contains(v, "\n"), Hidden: c.Note(consoleMore)}
}

// diffLines classifies each line of a unified diff or a patch.
func diffLines(d string) []lineView {
	d = strings.TrimRight(d, "\n")
	if d == "" {
		return []lineView{{Text: "(no change)"}}
	}
	var out []lineView
	for _, l := range strings.Split(d, "\n") {
		kind := diffKind(l)
		if strings.HasPrefix(l, "*** ") {
			kind = diffFile
		}
		out = append(out, lineView{Kind: kind, Text: untrusted.Visible(l)})
	}
	return out
}

func messageViews(msgs []conversation.Message) []messageView {
	out := make([]messageView, 0, len(msgs))
	for _, m := range msgs {
		text, c := untrusted.Head(m.Content, maxConsoleText, 0)
		reasoning, rc := untrusted.Head(m.Reasoning, maxConsoleText, 0)
		if !rc.None() {
			reasoning += "\n" + rc.Note(consoleMore)
		}
		v := messageView{Role: m.Role, Text: untrusted.Visible(text), Hidden: c.Note(consoleMore), Reasoning: untrusted.Visible(reasoning)}
		for _, tc := range m.ToolCalls {
			v.Calls = append(v.Calls, callView{ID: tc.Ref, Name: tc.Name, Fields: argumentFields(tc.Name, tc.Arguments, maxConsoleText)})
		}
		if r := m.Result; r != nil {
			v.Text, v.Hidden = "", ""
			content, c := untrusted.Head(r.Content, maxConsoleText, 0)
			rv := &resultView{CallID: r.Ref, Name: r.Name, Reason: string(r.Reason), IsError: r.IsError, Hidden: c.Note(consoleMore)}
			all := strings.Split(strings.ReplaceAll(strings.TrimRight(content, "\n"), "\r\n", "\n"), "\n")
			if i := diffStart(all); i >= 0 {
				rv.Text, rv.Diff = untrusted.Visible(strings.Join(all[:i], "\n")), diffLines(strings.Join(all[i:], "\n"))
			} else {
				rv.Text = untrusted.Visible(strings.Join(all, "\n"))
			}
			v.Result = rv
		}
		out = append(out, v)
	}
	return out
}

// statusView is a session's state for its page: the execution's status
// from the server and, while a worker answers, the status query's.
type statusView struct {
	Execution string // running, completed, failed, ...
	Status    *workflows.Status
	Err       string // why the status query did not answer
}

// Tokens is the status's usage, in words.
func (s statusView) Tokens() string {
	if s.Status == nil {
		return ""
	}
	return renderUsage(s.Status.Usage)
}

// Turn is "turn/max".
func (s statusView) Turn() string {
	if s.Status == nil {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Status.Turn, s.Status.MaxTurns)
}
