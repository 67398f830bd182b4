package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/workflows"
)

// ptyScreen collects what the program wrote to the terminal.
type ptyScreen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *ptyScreen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitFor waits until the screen shows want, as a person would before
// typing.
func (s *ptyScreen) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %q; it shows:\n%q", want, s.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWatchOnPseudoTerminal runs watch with a real pseudo-terminal as
// stdin, stdout and stderr, so nothing is forced: terminal detection, the
// colours, the kernel's line discipline turning Enter into a line, and the
// prompt reading it. It types f and a feedback line at the prompt and
// checks the deny went out through the approve update.
func TestWatchOnPseudoTerminal(t *testing.T) {
	t.Parallel()
	ptmx, tty, err := pty.Open()
	if errors.Is(err, pty.ErrUnsupported) {
		t.Skip("no pseudo-terminals on this system")
	}
	require.NoError(t, err)
	defer ptmx.Close()
	defer tty.Close()
	require.NoError(t, pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120}))

	screen := &ptyScreen{}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			screen.mu.Lock()
			screen.buf.Write(b[:n])
			screen.mu.Unlock()
			if err != nil {
				return // the tty was closed
			}
		}
	}()

	f := watchFake(enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, completedWith(workflows.ResultCompleted))
	q := f.query
	f.query = func(name string, n int) (any, error) {
		if name == workflows.QueryStatus {
			return workflows.Status{Phase: workflows.PhaseRunning}, nil
		}
		return q(name, n)
	}
	a := &app{
		stdin: tty, stdout: tty, stderr: tty,
		getenv:       noEnv,
		dial:         func(context.Context, config) (sessionClient, error) { return f, nil },
		pollInterval: 1,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- a.run(ctx, []string{"watch", "s1"}) }()

	screen.waitFor(t, promptQuestion)
	_, err = ptmx.Write([]byte("f\r")) // Enter sends CR; the tty makes it a newline
	require.NoError(t, err)
	screen.waitFor(t, "feedback for the model: ")
	_, err = ptmx.Write([]byte("keep build/\r"))
	require.NoError(t, err)

	select {
	case code := <-done:
		require.Equal(t, exitOK, code, screen.String())
	case <-time.After(15 * time.Second):
		t.Fatalf("watch did not finish; the terminal shows:\n%q", screen.String())
	}
	screen.waitFor(t, "session s1 finished")

	require.Equal(t, []workflows.Approval{{ID: "call_1", Decision: workflows.DecisionDeny, Feedback: "keep build/"}}, updates(f))
	out := screen.String()
	require.Contains(t, out, "\x1b[1;33m⏸ approval needed\x1b[0m \x1b[2m[call_1]\x1b[0m \x1b[1mshell\x1b[0m (runs a command)", "a terminal gets colour")
	require.Contains(t, out, "\x1b[2mcommand:\x1b[0m make")
	require.Contains(t, out, "\x1b[1;31mdenied\x1b[0m call_1 (shell)")
	require.Contains(t, out, "model thinking…", "the spinner ran while the model was asked")
	require.Contains(t, out, "keep build/", "the terminal echoed what was typed")
}
