package notify

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/untrusted"
)

// SlackMessage is the body a Slack-compatible incoming webhook takes:
// text for notifications and clients without blocks, blocks for the rest.
type SlackMessage struct {
	Text   string       `json:"text"`
	Blocks []SlackBlock `json:"blocks"`
}

// SlackBlock is a Block Kit block; only section blocks of mrkdwn text
// are used, which every Slack-compatible receiver (Mattermost, Rocket.Chat)
// renders or at least ignores gracefully.
type SlackBlock struct {
	Type string     `json:"type"`
	Text *SlackText `json:"text,omitempty"`
}

// SlackText is a block's text object.
type SlackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Slack's limits: a section's text holds at most 3000 characters and a
// message at most 50 blocks. Calls past slackMaxCalls are counted, not
// shown; the inbox has them all.
const (
	slackMaxSection = 3000
	slackMaxArgs    = 1200
	slackMaxCalls   = 10
)

// NewSlack renders ev for a Slack-compatible incoming webhook.
func NewSlack(ev Event, r Render) SlackMessage {
	b := NewBody(ev, r)
	m := SlackMessage{Text: b.Text}
	head := slackEscape(untrusted.Line(b.Text))
	if b.FinalText != "" {
		final, c := untrusted.Head(b.FinalText, slackMaxArgs, 0)
		head += "\n" + untrusted.SlackBlock(final)
		if !c.None() {
			head += "\n" + slackEscape(c.Note(""))
		}
	}
	if rv := b.Review; rv != nil {
		if l := reviewLine(b.Changes); l != "" {
			head += "\n" + slackEscape(l)
		}
		head += fmt.Sprintf("\nreview: %s · apply: %s · discard: %s", untrusted.SlackCode(rv.Diff), untrusted.SlackCode(rv.Apply), untrusted.SlackCode(rv.Discard))
	}
	if b.PullRequest != "" {
		head += "\npull request: " + slackLink(b.PullRequest)
	}
	m.Blocks = append(m.Blocks, section(head))
	for i, c := range b.Pending {
		if i == slackMaxCalls {
			m.Blocks = append(m.Blocks, section(fmt.Sprintf("…and %d more waiting call(s): see the inbox or `%s pending %s`.",
				len(b.Pending)-i, orDefault(r.CLI, "longrun"), slackEscape(ev.Session))))
			break
		}
		var t strings.Builder
		fmt.Fprintf(&t, "%s %s", untrusted.SlackCode(c.Tool), untrusted.SlackCode(c.ID))
		if c.Reason != "" {
			fmt.Fprintf(&t, " — %s", untrusted.SlackCode(c.Reason))
		}
		shown := r.shown(ev, c.Call, slackMaxArgs)
		args, _ := untrusted.Head(c.Arguments, slackMaxArgs, 0)
		fmt.Fprintf(&t, "\n%s", untrusted.SlackBlock(args))
		if shown.Hidden != "" {
			fmt.Fprintf(&t, "\n*%s*", slackEscape(shown.Hidden))
		}
		if shown.Hidden != "" {
			// What this message shows is cut: a person approves only after
			// seeing the call whole, so no ready approve command is offered
			// here; the full view prints them.
			fmt.Fprintf(&t, "\napprove: only after seeing it whole (%s)\ndeny: %s", slackEscape(r.whole(ev)), untrusted.SlackCode(c.Commands.Deny))
		} else {
			fmt.Fprintf(&t, "\napprove: %s\ndeny: %s", untrusted.SlackCode(c.Commands.Approve), untrusted.SlackCode(c.Commands.Deny))
			fmt.Fprintf(&t, "\nwithout the CLI: %s", untrusted.SlackCode(c.Commands.ApproveSignal))
		}
		m.Blocks = append(m.Blocks, section(t.String()))
	}
	if b.SessionURL != "" {
		m.Blocks = append(m.Blocks, section(fmt.Sprintf("<%s|Open the session> · <%s|the approval inbox>", slackEscape(b.SessionURL), slackEscape(b.InboxURL))))
	}
	return m
}

// Marshal is the message's bytes.
func (m SlackMessage) Marshal() ([]byte, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode slack message: %w", err)
	}
	return raw, nil
}

// section is one block of text; past Slack's limit it is cut with the
// count of what is hidden, never silently.
func section(text string) SlackBlock {
	if len(text) > slackMaxSection {
		const room = 80 // for the note
		head, c := untrusted.Head(text, slackMaxSection-room, 0)
		text = head + "\n" + slackEscape(c.Note("the inbox has it all"))
	}
	return SlackBlock{Type: "section", Text: &SlackText{Type: "mrkdwn", Text: text}}
}

// slackEscape escapes the three characters Slack's mrkdwn gives a meaning
// (links, mentions), so a call's arguments cannot ping a channel or hide
// a link.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// slackLink is u as a Slack link to itself when it is a web URL
// (untrusted.WebURL), its "|" encoded so the link's text is u itself;
// otherwise u as inline code: shown, not linked.
func slackLink(u string) string {
	if !untrusted.WebURL(u) {
		return untrusted.SlackCode(u)
	}
	return "<" + slackEscape(strings.ReplaceAll(u, "|", "%7C")) + "|" + slackEscape(u) + ">"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// reviewLine names the files an ended session changed on its branch, the
// first of them (Stat.Paths); "" when none is known.
func reviewLine(st *checkout.Stat) string {
	if st == nil || len(st.Paths) == 0 {
		return ""
	}
	paths := make([]string, len(st.Paths))
	for i, p := range st.Paths {
		paths[i] = untrusted.Line(p) // a file's name is the model's
	}
	more := ""
	if n := st.Files - len(st.Paths); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return "files: " + strings.Join(paths, ", ") + more
}
