package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// readEvents reads events recorded from `watch --json`.
func readEvents(t *testing.T, path string) []event {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var evs []event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e event
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), sc.Text())
		evs = append(evs, e)
	}
	require.NoError(t, sc.Err())
	return evs
}

// renderEvents draws recorded events the way watch does on a terminal:
// each message, and for each approval both the announcement and the
// interactive prompt's view of the call.
func renderEvents(ui watchUI, evs []event) string {
	var b bytes.Buffer
	a := &app{stdout: &b, ui: ui}
	for _, e := range evs {
		switch e.Type {
		case "message":
			for _, l := range ui.message(*e.Message) {
				b.WriteString(l + "\n")
			}
		case "approval":
			ui.approvalRequest(&b, e.SessionID, *e.Approval)
			a.approvalPrompt(*e.Approval, maxPromptArg)
		}
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./starter -run %s -update to create it", t.Name())
	require.Equal(t, string(want), got)
}

func TestRenderColorGolden(t *testing.T) {
	t.Parallel()
	evs := readEvents(t, "testdata/watch_events.jsonl")
	got := renderEvents(watchUI{style: style{color: true, blocks: true}, live: true}, evs)
	golden(t, "watch_color.golden", got)

	// What the golden file must say, so a wrong -update cannot pass.
	for _, want := range []string{
		"\x1b[1;32muser:\x1b[0m bump the version\n  and run the tests\n",
		"\x1b[33m→ tool call\x1b[0m \x1b[1;33medit\x1b[0m ",
		"  \x1b[1m--- a/version.go\x1b[0m\n  \x1b[1m+++ b/version.go\x1b[0m\n",
		"  \x1b[36m@@ -1,3 +1,3 @@\x1b[0m\n   package main\n",
		"  \x1b[31m-const version = \"1.0\"\x1b[0m\n  \x1b[32m+const version = \"1.1\"\x1b[0m\n",
		"\x1b[31m(denied, error)\x1b[0m: \x1b[31mdenied: the user denied",
		"\x1b[1;33m⏸ approval needed\x1b[0m \x1b[2m[call_2]\x1b[0m \x1b[1mshell\x1b[0m",
		"  \x1b[2mcommand:\x1b[0m rm -rf build && go test ./...\n  \x1b[2mtimeout:\x1b[0m 120\n",
		"\x1b[1;35massistant:\x1b[0m Done: version is 1.1.\n",
	} {
		require.Contains(t, got, want)
	}
	require.Contains(t, got, "\x1b[2m← result\x1b[0m \x1b[2m[call_1]\x1b[0m (ran): edited version.go\n")
}

// TestRenderPlainUnchanged holds the zero style to the plain text watch
// printed before colour existed: pipes and logs get no escape codes and
// diffs stay on one line.
func TestRenderPlainUnchanged(t *testing.T) {
	t.Parallel()
	evs := readEvents(t, "testdata/watch_events.jsonl")
	var plain bytes.Buffer
	for _, e := range evs {
		switch e.Type {
		case "message":
			renderConversation(&plain, []conversation.Message{*e.Message}, style{})
		case "approval":
			renderApprovalRequest(&plain, e.SessionID, *e.Approval)
		}
	}
	out := plain.String()
	require.NotContains(t, out, "\x1b")
	require.Contains(t, out, `← result [call_1] (ran): edited version.go ↵ --- a/version.go ↵ +++ b/version.go ↵ @@ -1,3 +1,3 @@`)
	require.Contains(t, out, `⏸ approval needed [call_2] shell {"command":"rm -rf build && go test ./...","timeout":120} (runs a shell command)`+"\n")
	require.Contains(t, out, "  longrun approve s1 call_2   |   longrun deny s1 call_2 --feedback \"...\"\n")

	// Colour off but blocks on (--no-color on a terminal): lines, no codes.
	noColor := renderEvents(watchUI{style: style{blocks: true}, live: true}, evs)
	require.NotContains(t, noColor, "\x1b")
	require.Contains(t, noColor, "  -const version = \"1.0\"\n  +const version = \"1.1\"\n")
}

func TestLongDiffIsCut(t *testing.T) {
	t.Parallel()
	var diff strings.Builder
	diff.WriteString("--- a/x\n+++ b/x\n@@ -1,60 +1,60 @@\n")
	for range 60 {
		diff.WriteString("+line\n")
	}
	lines := style{blocks: true}.message(conversation.ToolMessage(conversation.ToolResult{CallID: "c", Ref: "c", Content: diff.String(), Reason: conversation.ReasonRan}))
	require.Equal(t, "← result [c] (ran):", lines[0], "a result that is only a diff has no preview after the colon")
	require.Len(t, lines, 1+maxDiffLines+1)
	require.Equal(t, "  … 23 more lines hidden; see all: longrun conversation --full SESSION", lines[len(lines)-1])
}

func TestPromptArgumentsShowPatchAsDiff(t *testing.T) {
	t.Parallel()
	args := `{"patch":"*** Begin Patch\n*** Update File: a.go\n@@\n-old\n+new\n*** End Patch"}`
	got, whole := style{color: true}.arguments(args, maxPromptArg)
	require.True(t, whole)
	require.Equal(t, []string{
		"\x1b[2mpatch:\x1b[0m",
		"  *** Begin Patch",
		"  *** Update File: a.go",
		"  \x1b[36m@@\x1b[0m",
		"  \x1b[31m-old\x1b[0m",
		"  \x1b[32m+new\x1b[0m",
		"  *** End Patch",
	}, got)
	require.Equal(t, []string{"not json"}, argLines(style{}, "not json"))
}
