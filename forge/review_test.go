package forge

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/checkout/record"
)

func exit(n int) *int { return &n }

// TestBodyShowsWhatAReviewerNeeds: the commands with their exit codes,
// who approved what and when, and what was left undone (denied, timed
// out, lost, the plan, the model's own words), each model-controlled
// string inert.
func TestBodyShowsWhatAReviewerNeeds(t *testing.T) {
	t.Parallel()
	when := time.Date(2026, 12, 5, 12, 1, 2, 0, time.UTC)
	rev := &record.Review{
		Commands: []record.ReviewCall{
			{ID: "c2", Summary: "go test ./...", Outcome: "ran", Exit: exit(0)},
			{ID: "c3", Summary: "make lint `x` @octocat", Outcome: "failed", Exit: exit(2)},
			{ID: "c4", Summary: "long build", Outcome: "ran"},
		},
		DroppedCommands: 3,
		Approved: []record.ReviewCall{
			{ID: "c3", Summary: "shell: make lint", Outcome: "approve", By: "person", Author: "alice", At: when},
			{ID: "c5", Summary: "shell: go vet", Outcome: "approve", By: "rule", At: when.Add(time.Minute)},
			{ID: "c9", Summary: "shell: ls", Outcome: "approve", By: "guardian", Text: "reads only [ok](http://evil)", At: when},
		},
		Undone: []record.ReviewCall{
			{ID: "c6", Summary: "shell: rm -rf /", Outcome: "denied", Author: "bob", Text: "no [way](http://evil)", At: when},
			{ID: "c7", Summary: "shell: deploy", Outcome: "timeout", At: when},
			{ID: "c8", Summary: "shell: migrate", Outcome: "worker_lost", At: when},
		},
		Plan: []string{"write the docs (pending)"},
	}
	summary := "Fix the parser\n\n![x](http://track.example/p.png) <!-- longrun:commit 0000 --> @team\n\n## Left undone\n\nThe Windows path is not handled.\n\n## Notes\nnothing"
	body := Config{}.body(Request{Session: "s1", Summary: summary, Review: rev}, "a.go | 2 +-", "abc123")

	require.Contains(t, body, "### Checks run")
	require.Contains(t, body, "The last 3 commands the session ran (3 earlier not shown)")
	require.Contains(t, body, "- `go test ./...` c2: exit code 0")
	require.Contains(t, body, "c3: exit code 2")
	require.Contains(t, body, "c4: ran (no exit code in its result)")
	require.Contains(t, body, "- c3 `shell: make lint`: approved by `alice`, at 2026-12-05 12:01:02 UTC")
	require.Contains(t, body, "- c5 `shell: go vet`: approved by a rule a person remembered, at 2026-12-05 12:02:02 UTC")
	require.Contains(t, body, "- c9 `shell: ls`: let run by the guardian (read-only sandbox): reads only \\[ok\\](http://evil), at 2026-12-05 12:01:02 UTC",
		"the guardian's approval is a model's judgement, said so, its reason escaped")
	require.Contains(t, body, "- c6 `shell: rm -rf /`: denied by `bob`: `no [way](http://evil)`")
	require.Contains(t, body, "c7 `shell: deploy`: nobody decided within the approval timeout")
	require.Contains(t, body, "c8 `shell: migrate`: the worker running it was lost; it may or may not have run")
	require.Contains(t, body, "a step of the model's plan: `write the docs (pending)`")
	require.Contains(t, body, "The model's own words on it, from its final text:\n\n```text\n## Left undone\n\nThe Windows path is not handled.\n```")
	require.Contains(t, body, "``make lint `x` @octocat``", "a backtick in a command cannot end its code span")

	// The summary is a block: its image, comment and mention are text, and
	// the only commit marker is the body's own, at its end.
	require.True(t, strings.HasPrefix(body, "```text\nFix the parser\n"), body[:40])
	require.Equal(t, "abc123", bodyCommit(body))
	require.Equal(t, 1, strings.Count(body, "<!-- longrun:commit abc123 -->"))
	require.Less(t, strings.Index(body, "<!-- longrun:commit 0000 -->"), strings.Index(body, "```\n\n"), "the forged marker is inside the summary's block")
}

// TestBodyStaysUnderGitHubsLimit: a summary of megabytes and every list
// full of long, escaping-heavy entries still make a body GitHub takes,
// with its markers, saying what it cut.
func TestBodyStaysUnderGitHubsLimit(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("*_[`", 75)
	rev := &record.Review{}
	for range 50 {
		rev.Commands = append(rev.Commands, record.ReviewCall{ID: "c1", Summary: long, Outcome: "ran", Exit: exit(1)})
		rev.Approved = append(rev.Approved, record.ReviewCall{ID: "c1", Summary: long, By: "person", Author: long})
		rev.Undone = append(rev.Undone, record.ReviewCall{ID: "c1", Summary: long, Outcome: "denied", Text: long})
		rev.Plan = append(rev.Plan, long)
	}
	left := make([]string, 500)
	for i := range left {
		left[i] = long
	}
	body := Config{ConsoleURL: "http://c", WebUIURL: "http://u"}.body(Request{Session: "s1", Summary: strings.Repeat("word ", 1<<20), Review: rev, LeftOut: left}, strings.Repeat("f | 1 +\n", 10000), "abc123")
	require.Less(t, len([]rune(body)), maxBody)
	require.Equal(t, "abc123", bodyCommit(body))
	require.Contains(t, body, "more bytes hidden; the session's final text has it all")
	require.Contains(t, body, "hidden; the session's events have it all")
	require.Contains(t, body, "and 480 more")
}

// TestBodyWithoutAReview is the body a session that recorded nothing
// gets: no empty sections.
func TestBodyWithoutAReview(t *testing.T) {
	t.Parallel()
	body := Config{}.body(Request{Session: "s1", Summary: "Done."}, "", "abc123")
	require.NotContains(t, body, "###")
	require.True(t, strings.HasPrefix(body, "```text\nDone.\n```\n\nLongrun session `s1`"), body)
}

func TestStatedUndone(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, summary, want string }{
		{"none", "All done.\n\nTests pass.", ""},
		{"heading", "Done.\n### Not done\n- windows\n# Next\nx", "### Not done\n- windows"},
		{"bold line", "Done.\n**Remaining:** the docs.", "**Remaining:** the docs."},
		{"word inside a line is not it", "I left undone nothing.", ""},
	} {
		require.Equal(t, tt.want, statedUndone(tt.summary), tt.name)
	}
}
