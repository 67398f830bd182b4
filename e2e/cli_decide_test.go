package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// With no worker running, approve does not fail: it sends the durable
// approval signal, says so with the temporal CLI command, and the session
// takes the decision when a worker runs again. The update's name sent as
// a signal is refused into rejected_signals; deciding a decided call says
// how it was decided; history names each decision.
func TestApproveWithoutAWorkerFallsBackToTheSignal(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(sm.Call{ID: "c_w", Name: "write", Arguments: `{"path": "x.txt", "content": "x"}`}),
		sm.Tools(sm.Call{ID: "c_2", Name: "write", Arguments: `{"path": "y.txt", "content": "y"}`}),
		sm.Text("done"),
	)
	id := e.start(workflows.SessionInput{Prompt: "write x.txt and y.txt"})
	waitPending(t, id, 1)
	e.stopWorker()

	// Without a worker the waiting calls cannot be listed: name them.
	out, err := e.starter("approve", id)
	require.Equal(t, 1, exitCode(t, err), out)
	require.Contains(t, out, "so the waiting calls cannot be listed: name the call ids")

	out, err = e.starter("approve", id, "c_w")
	require.NoError(t, err, out)
	require.Contains(t, out, "the approve update needs a running worker, so the decision goes as the approval signal instead")
	require.Contains(t, out, `sent the approve of c_w as the durable "approval" signal`)
	require.Contains(t, out, `temporal workflow signal --address `+temporalAddr+` --workflow-id `+id+` --name approval --input '{"call_id":"c_w","decision":"approve"`+authorJSON(t)+`}'`)
	// The Web UI's or temporal CLI's mistake: the update's name as a signal.
	require.NoError(t, tc.SignalWorkflow(context.Background(), id, "", workflows.UpdateApprove, workflows.Approval{CallID: "c_2", Decision: workflows.DecisionApprove}))

	e.startWorker()
	waitPending(t, id, 1) // c_w ran; c_2 waits
	require.FileExists(t, filepath.Join(e.workspace, "x.txt"))
	out, err = e.starter("approve", id, "c_w")
	require.Equal(t, 1, exitCode(t, err), out)
	require.Contains(t, out, `call "c_w" is already decided (approved (or allowed by a rule); it ran); nothing sent`)
	out, err = e.starter("status", id)
	require.NoError(t, err, out)
	require.Contains(t, out, `a signal named "approve" refused: "approve" is an update, not a signal`)
	out, err = e.starter("approve", id, "c_2")
	require.NoError(t, err, out)
	require.Contains(t, out, "approved c2 (write)")
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	out, err = e.starter("history", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "approval signal: call c_w, decision approve")
	require.Contains(t, out, "approve update: call c_2, decision approve") // named by the model's id, as typed
}

// A session whose task queue no worker has ever polled: the server says
// so at once (DescribeTaskQueue), and approve sends the signal without
// waiting on a query no one will answer.
func TestApproveWithNoWorkerAtAllSignalsAtOnce(t *testing.T) {
	t.Parallel()
	id := "e2e-noworker-" + randHex(4)
	queue := "e2e-nobody-" + randHex(6)
	_, err := tc.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: queue},
		workflows.WorkflowType, workflows.SessionInput{Prompt: "hi"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tc.TerminateWorkflow(context.Background(), id, "", "test done") })

	began := time.Now()
	cmd := exec.Command(filepath.Join(binDir, "starter"), "deny", id, "c_1", "--feedback", "not now")
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+temporalAddr)
	raw, err := cmd.CombinedOutput()
	out := string(raw)
	require.NoError(t, err, out)
	require.Less(t, time.Since(began), probeBudget, "no wait for a worker that is not there")
	require.Contains(t, out, "no worker polls task queue "+queue+": the approve update needs a running worker")
	require.Contains(t, out, `--input '{"call_id":"c_1","decision":"deny","feedback":"not now"`+authorJSON(t)+`}'`)
	var signalled bool
	for _, ev := range history(t, id).Events {
		if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == workflows.SignalApproval {
			signalled = true
		}
	}
	require.True(t, signalled, "the approval signal waits in the session's history")
}

// probeBudget is well under the 8 s the CLI would spend probing a worker.
const probeBudget = 6 * time.Second

// freezeProxy forwards TCP to the Temporal frontend. freeze holds every
// byte the server sends on the open connections, as a server restarting
// mid-call would lose its reply; cut then drops those connections, and
// new ones flow again.
type freezeProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	frozen chan struct{} // closed by cut; nil while not frozen
	conns  []net.Conn
}

func newFreezeProxy(t *testing.T, target string) *freezeProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &freezeProxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go p.down(s, c)
		}
	}()
	return p
}

// down copies server to client, holding what comes while frozen.
func (p *freezeProxy) down(s, c net.Conn) {
	defer c.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			p.mu.Lock()
			hold := p.frozen
			p.mu.Unlock()
			if hold != nil {
				<-hold
				return // cut: the held reply is lost
			}
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *freezeProxy) addr() string { return p.ln.Addr().String() }

func (p *freezeProxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = make(chan struct{})
}

func (p *freezeProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	if p.frozen != nil {
		close(p.frozen)
		p.frozen = nil
	}
}

// When the reply to watch's approve update is lost (the server's bytes
// held, then the connection dropped, as a server restart does), watch
// checks history, finds the decision taken, and reports it approved:
// never a false "✗ ... timed out".
func TestWatchVerifiesADecisionWhoseReplyWasLost(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(sm.Call{ID: "c_w", Name: "write", Arguments: `{"path": "x.txt", "content": "x"}`}),
		sm.Text("done"),
	)
	p := newFreezeProxy(t, temporalAddr)
	id := e.start(workflows.SessionInput{Prompt: "write x.txt"})
	waitPending(t, id, 1)

	cmd := exec.Command(filepath.Join(binDir, "starter"), "watch", "--interactive", "--no-color", id)
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+p.addr(), "LONGRUN_TASK_QUEUE="+e.taskQueue)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("watch output:\n%s", out.String())
		}
	})
	waitFor(t, "the approval prompt", 30*time.Second, func() bool { return strings.Contains(out.String(), "approve? [y]es") })

	p.freeze()
	_, err = io.WriteString(stdin, "y\n")
	require.NoError(t, err)
	waitFor(t, "the session to take the update", 30*time.Second, func() bool {
		for _, ev := range history(t, id).Events {
			if a := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes(); a != nil && a.GetAcceptedRequest().GetMeta().GetUpdateId() == "approve:c1" {
				return true
			}
		}
		return false
	})
	// The reply never comes; watch gives up waiting for it and checks.
	waitFor(t, "watch to check history", 60*time.Second, func() bool { return strings.Contains(out.String(), "checking the session's history") })
	p.cut()
	select {
	case err := <-done:
		require.NoError(t, err, out.String())
	case <-time.After(60 * time.Second):
		t.Fatal("watch did not end after the session completed")
	}
	require.Contains(t, out.String(), "approved c1 (write) — the reply was lost; the session's history shows it took the decision")
	require.NotContains(t, out.String(), "✗")
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
}

// authorJSON is the "author" member a decision sent from this machine
// carries (the local login, for the pull request's body), as the
// starter's temporal CLI line writes it; empty when there is no login.
func authorJSON(t *testing.T) string {
	t.Helper()
	u, err := user.Current()
	if err != nil || u.Username == "" {
		return ""
	}
	b, err := json.Marshal(u.Username)
	require.NoError(t, err)
	return `,"author":` + string(b)
}
