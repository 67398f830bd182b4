package follow

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/eventlog"
)

// TestLineRendersUntrustedText: whatever the model put in an event, the
// line a terminal gets has no control character, and a cut says so.
func TestLineRendersUntrustedText(t *testing.T) {
	t.Parallel()
	hostile := "ok\x1b[2J\x1b]0;pwned\x07\r\u202eevil\nline2"
	cases := []struct {
		name string
		e    eventlog.Event
		want []string
	}{
		{"text", eventlog.Event{Seq: 3, Kind: eventlog.KindText, Text: hostile}, []string{"#3 ", "text: ok", `\x1b[2J`, "⟨U+202E⟩"}},
		{"reasoning", eventlog.Event{Kind: eventlog.KindReasoning, Text: hostile}, []string{"reasoning: ", `\x07`}},
		{"call summary and id", eventlog.Event{Kind: eventlog.KindCallProposed, Outcome: "ask", Text: hostile,
			Call: &eventlog.Call{ID: "c1\x1b[31m", Tool: "shell", Summary: "shell: " + hostile}}, []string{"call c1\\x1b[31m shell", "proposed: ask"}},
		{"finished preview", eventlog.Event{Kind: eventlog.KindCallFinished, Outcome: "failed", Text: hostile,
			Call: &eventlog.Call{ID: "c1", Tool: "shell", IsError: true}}, []string{"finished: failed (error)"}},
		{"cut when recorded", eventlog.Event{Kind: eventlog.KindText, Text: "short", Cut: 5000}, []string{"text: short … 5,000 more bytes hidden; see: longrun conversation s"}},
		{"cut here", eventlog.Event{Kind: eventlog.KindText, Text: strings.Repeat("a", 1000)}, []string{"700 more bytes hidden"}},
		{"partial shows the end", Event{Event: eventlog.Event{Kind: KindPartial, Text: strings.Repeat("a", 1000) + "END\x1b[0m"}}.Event, []string{"writing: …", `END\x1b[0m`}},
		{"phase", eventlog.Event{Kind: eventlog.KindPhase, Phase: "waiting-approval"}, []string{"phase waiting-approval"}},
		{"rewound", eventlog.Event{Kind: eventlog.KindRewound, Turn: 2, Outcome: "from turn 4"}, []string{"rewound to turn 2 from turn 4"}},
		{"ended", eventlog.Event{Kind: eventlog.KindEnded, Outcome: "completed"}, []string{"session ended: completed"}},
		{"no worker", eventlog.Event{Kind: KindNoWorker, Text: "the server answers, but no worker answered\x1b[2J"}, []string{`no_worker: the server answers, but no worker answered\x1b[2J`}},
		{"back", eventlog.Event{Kind: KindBack}, []string{"back: the session's events read again"}},
		{"sub-agent started", eventlog.Event{Kind: eventlog.KindSubagentStarted, Session: "s/task-1\x1b[2J", Text: hostile,
			Call: &eventlog.Call{ID: "c2", Tool: "task"}}, []string{`call c2 task: sub-agent s/task-1\x1b[2J started: ok`}},
		{"a sub-agent's event", eventlog.Event{Seq: 4, Kind: eventlog.KindCallStarted,
			Call: &eventlog.Call{ID: "c1", Tool: "read"}}, []string{"#4 ", `[s/task-1\x1b[2J] call c1 read started`}},
		{"unknown kind from a newer session", eventlog.Event{Kind: "new_kind\x1b", Text: "x"}, []string{`new_kind\x1b: x`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.e.Time = time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
			ev := Event{Event: tc.e}
			if tc.name == "a sub-agent's event" {
				ev.SubAgent = "s/task-1\x1b[2J"
			}
			got := Line(ev, "see: longrun conversation s")
			for _, w := range tc.want {
				require.Contains(t, got, w)
			}
			require.NotContains(t, got, "\n")
			for _, r := range got {
				require.False(t, r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0), "control %U in %q", r, got)
			}
		})
	}
}
