package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/workflows"
)

// runUI runs the CLI against f like runFake, with stdin and a terminal
// check of the test's choosing.
func runUI(t *testing.T, ctx context.Context, f *fakeClient, stdin io.Reader, tty bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := &app{
		stdin:        stdin,
		stdout:       &out,
		stderr:       &errb,
		getenv:       noEnv,
		dial:         func(context.Context, config) (sessionClient, error) { return f, nil },
		pollInterval: 1,
		isTerminal:   func(any) bool { return tty },
	}
	code = a.run(ctx, args)
	return code, out.String(), errb.String()
}

// updates are the approve updates f received.
func updates(f *fakeClient) []workflows.Approval {
	var out []workflows.Approval
	for _, ap := range authoredUpdates(f) {
		ap.Author = "" // TestPromptDecisionsNameTheLocalUser checks it
		out = append(out, ap)
	}
	return out
}

// authoredUpdates are the approve updates sent, as sent.
func authoredUpdates(f *fakeClient) []workflows.Approval {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []workflows.Approval
	for _, s := range f.signals {
		if s.name == workflows.UpdateApprove {
			out = append(out, s.arg.(workflows.Approval))
		}
	}
	return out
}

// TestPromptDecisionsNameTheLocalUser: a decision from the prompt carries
// the local login as its author (the pull request's body shows it).
func TestPromptDecisionsNameTheLocalUser(t *testing.T) {
	t.Parallel()
	me := localAuthor()
	require.NotEmpty(t, me, "the test's user has a login")
	f := watchFake(enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, completedWith(workflows.ResultCompleted))
	code, _, stderr := runUI(t, context.Background(), f, strings.NewReader("y\n"), false, "watch", "s1", "--interactive")
	require.Equal(t, exitOK, code, stderr)
	got := authoredUpdates(f)
	require.Len(t, got, 1)
	require.Equal(t, me, got[0].Author)
}

func TestPromptAnswers(t *testing.T) {
	t.Parallel()
	approve := workflows.Approval{ID: "call_1", Decision: workflows.DecisionApprove}
	tests := []struct {
		name  string
		input string
		want  []workflows.Approval
		says  []string
	}{
		{"yes", "y\n", []workflows.Approval{approve}, []string{"approved call_1 (shell)"}},
		{"yes spelled out", " YES \n", []workflows.Approval{approve}, []string{"approved call_1 (shell)"}},
		{"no", "n\n", []workflows.Approval{{ID: "call_1", Decision: workflows.DecisionDeny}}, []string{"denied call_1 (shell)"}},
		{
			"feedback on its own line", "f\nrun go vet first\n",
			[]workflows.Approval{{ID: "call_1", Decision: workflows.DecisionDeny, Feedback: "run go vet first"}},
			[]string{"feedback for the model: ", "denied call_1 (shell)"},
		},
		{
			"feedback inline", "f  use make test\n",
			[]workflows.Approval{{ID: "call_1", Decision: workflows.DecisionDeny, Feedback: "use make test"}},
			[]string{"denied call_1 (shell)"},
		},
		{
			"empty feedback asks again", "f\n\ny\n", []workflows.Approval{approve},
			[]string{"no feedback given; nothing sent", "approved call_1"},
		},
		{"skip", "s\n", nil, []string{"skipped call_1 (shell); decide later with:", "longrun approve s1 call_1"}},
		{
			"garbage then yes", "maybe\nyy\n\ny\n", []workflows.Approval{approve},
			[]string{`answer y, n, f or s (not "maybe")`, `(not "yy")`, `(not "")`, "approved call_1 (shell)"},
		},
		{"y with words is not yes", "y please\ns\n", nil, []string{`(not "y please")`, "skipped call_1"}},
		{"stdin ends", "", nil, []string{"no more answers (EOF); call_1 is left waiting:", "longrun deny s1 call_1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := watchFake(enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, completedWith(workflows.ResultCompleted))
			code, stdout, stderr := runUI(t, context.Background(), f, strings.NewReader(tc.input), false, "watch", "s1", "--interactive")
			require.Equal(t, exitOK, code, stderr)
			require.Equal(t, tc.want, updates(f))
			require.Contains(t, stdout, "⏸ approval needed [call_1] shell (runs a command)\n  command: make\n"+promptQuestion)
			for _, s := range tc.says {
				require.Contains(t, stdout, s)
			}
			require.NotContains(t, stdout, "\x1b", "not a terminal: no colour even when prompting")
			require.Contains(t, stdout, "── session s1 finished ──", "watching goes on after the prompt")
			require.Equal(t, 1, strings.Count(stdout, "⏸ approval needed"), "each call is asked about once")
		})
	}
}

// twoPending asks for two calls at once, then closes.
func twoPending(updateErr func(any) error) *fakeClient {
	calls := []workflows.PendingApproval{
		{CallID: "call_1", ID: "call_1", Tool: "write", Arguments: `{"path":"a.txt"}`, Reason: "writes a file"},
		{CallID: "call_2", ID: "call_2", Tool: "shell", Arguments: `{"command":"make"}`, Reason: "runs a command"},
	}
	return &fakeClient{
		query: func(name string, n int) (any, error) {
			switch name {
			case workflows.QueryConversation:
				return []conversation.Message{{Role: "user", Content: "go"}}, nil
			case workflows.QueryPendingApprovals:
				return calls, nil
			}
			return nil, fmt.Errorf("unexpected query %s", name)
		},
		describe: func(n int) (enumspb.WorkflowExecutionStatus, error) {
			if n >= 1 {
				return enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, nil
			}
			return enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
		},
		result:    completedWith(workflows.ResultCompleted),
		updateErr: updateErr,
	}
}

func TestPromptRefusedDecisionIsShownAndWatchingGoesOn(t *testing.T) {
	t.Parallel()
	// call_1 was decided in the Web UI while the prompt waited.
	f := twoPending(func(arg any) error {
		if arg.(workflows.Approval).ID == "call_1" {
			return errors.New(`call "call_1" is not waiting for approval (already decided or done)`)
		}
		return nil
	})
	code, stdout, stderr := runUI(t, context.Background(), f, strings.NewReader("y\nf not now\n"), false, "watch", "s1", "--interactive")
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, []workflows.Approval{
		{ID: "call_1", Decision: workflows.DecisionApprove},
		{ID: "call_2", Decision: workflows.DecisionDeny, Feedback: "not now"},
	}, updates(f))
	require.Contains(t, stdout, `✗ session s1 refused the approve of call_1: call "call_1" is not waiting for approval (already decided or done)`)
	require.NotContains(t, stdout, "approved call_1")
	require.Contains(t, stdout, "denied call_2 (shell)")
	require.Less(t, strings.Index(stdout, "[call_1] write"), strings.Index(stdout, "[call_2] shell"), "asked in the order they wait")
}

func TestPromptStopsAfterStdinEnds(t *testing.T) {
	t.Parallel()
	f := twoPending(nil)
	code, stdout, _ := runUI(t, context.Background(), f, strings.NewReader(""), false, "watch", "s1", "--interactive")
	require.Equal(t, exitOK, code)
	require.Empty(t, updates(f))
	require.Equal(t, 1, strings.Count(stdout, promptQuestion), "no prompt after stdin ended")
	require.Contains(t, stdout, `⏸ approval needed [call_2] shell {"command":"make"} (runs a command)`, "then announced as without a terminal")
}

func TestPromptCtrlCStopsWatching(t *testing.T) {
	t.Parallel()
	f := twoPending(nil)
	ctx, cancel := context.WithCancel(context.Background())
	// A terminal with nobody typing: the read never returns by itself.
	r, w := io.Pipe()
	defer w.Close()
	time.AfterFunc(50*time.Millisecond, cancel)
	code, stdout, stderr := runUI(t, ctx, f, r, false, "watch", "s1", "--interactive")
	require.Equal(t, exitInterrupted, code)
	require.Contains(t, stdout, promptQuestion)
	require.Contains(t, stderr, "stopped watching; s1 keeps running")
	require.Empty(t, updates(f))
}

func TestPromptOnlyWhenBothEndsAreTerminals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		tty    bool
		args   []string
		prompt bool
	}{
		{"terminal", true, nil, true},
		{"terminal, --no-interactive", true, []string{"--no-interactive"}, false},
		{"pipe", false, nil, false},
		{"pipe, --interactive", false, []string{"--interactive"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := watchFake(enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, completedWith(workflows.ResultCompleted))
			_, stdout, _ := runUI(t, context.Background(), f, strings.NewReader("y\n"), tc.tty, append([]string{"watch", "s1"}, tc.args...)...)
			require.Equal(t, tc.prompt, strings.Contains(stdout, promptQuestion), stdout)
			require.Equal(t, tc.prompt, len(updates(f)) == 1)
		})
	}
}

func TestResolveUI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		outTTY  bool
		inTTY   bool
		env     map[string]string
		json    bool
		flags   uiFlags
		want    watchUI
		wantErr string
	}{
		{name: "pipe", want: watchUI{}},
		{name: "terminal", outTTY: true, inTTY: true, want: watchUI{style: style{color: true, blocks: true}, live: true, interactive: true}},
		{name: "stdin piped", outTTY: true, want: watchUI{style: style{color: true, blocks: true}, live: true}},
		{name: "NO_COLOR", outTTY: true, inTTY: true, env: map[string]string{"NO_COLOR": "1"}, want: watchUI{style: style{blocks: true}, live: true, interactive: true}},
		{name: "--no-color", outTTY: true, flags: uiFlags{noColor: true}, want: watchUI{style: style{blocks: true}, live: true}},
		{name: "TERM=dumb", outTTY: true, inTTY: true, env: map[string]string{"TERM": "dumb"}, want: watchUI{}},
		{name: "--json on a terminal", outTTY: true, inTTY: true, json: true, want: watchUI{}},
		{name: "--interactive with --json", json: true, flags: uiFlags{interactive: true}, wantErr: "--interactive cannot be combined with --json"},
		{name: "both", flags: uiFlags{interactive: true, noInteractive: true}, wantErr: "contradict"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in, out := strings.NewReader(""), &bytes.Buffer{}
			a := &app{
				stdin: in, stdout: out, cfg: config{JSON: tc.json},
				getenv: func(k string) string { return tc.env[k] },
				isTerminal: func(v any) bool {
					if v == any(out) {
						return tc.outTTY
					}
					return tc.inTTY
				},
			}
			ui, err := a.resolveUI(&tc.flags)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, ui)
		})
	}
}

// A call whose argument the prompt cut cannot be approved before it was
// seen whole: y is refused until v has shown the rest, tail included.
func TestPromptApprovesOnlyWhatWasSeen(t *testing.T) {
	t.Parallel()
	long := `{"command":"go test ./...` + strings.Repeat(" ", maxPromptArg) + `; touch pwned"}`
	f := watchFake(enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, completedWith(workflows.ResultCompleted))
	q := f.query
	f.query = func(name string, n int) (any, error) {
		if name == workflows.QueryPendingApprovals && (n == 1 || n == 2) {
			return []workflows.PendingApproval{{CallID: "call_1", ID: "c1", Tool: "shell", Arguments: long}}, nil
		}
		return q(name, n)
	}
	code, stdout, stderr := runUI(t, context.Background(), f, strings.NewReader("y\nv\ny\n"), false, "watch", "s1", "--interactive")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "  command: go test ./...⟨1,987 spaces⟩\n    … 26 more bytes hidden; [v]iew shows all; so does longrun pending --full\n"+promptQuestionCut)
	require.Contains(t, stdout, "part of this call is hidden: view all of it (v) before approving")
	require.Contains(t, stdout, "  command: go test ./...⟨2,000 spaces⟩; touch pwned\n"+promptQuestion)
	require.Equal(t, []workflows.Approval{{ID: "c1", Decision: workflows.DecisionApprove}}, updates(f), "one approval, after the view")
}
