package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// chatTerm is `longrun chat` on a pseudo-terminal whose output a
// terminal emulator (charmbracelet/x/vt) draws, so the test reads the
// screen a person sees, not the escape sequences that made it; the
// emulator's answers to the program's queries go back as a terminal's
// would.
type chatTerm struct {
	t    *testing.T
	cmd  *exec.Cmd
	ptmx *os.File
	emu  *vt.SafeEmulator
	mu   sync.Mutex
	raw  strings.Builder
	done chan struct{}
}

const chatRows, chatCols = 50, 120

// hangupDefault gives the programs the tests start SIGHUP's default
// action even when the tests run under nohup: an ignored signal stays
// ignored across exec, a caught one is reset to its default. Catching it
// here (and dropping it, so the run itself still ignores hangups) is what
// lets TestChatClosedTerminalLeavesTheSessionRunning see what a person's
// closed terminal does to chat.
var hangupDefault = sync.OnceFunc(func() {
	if signal.Ignored(syscall.SIGHUP) {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
	}
})

func (e *env) chat(args ...string) *chatTerm {
	e.t.Helper()
	hangupDefault()
	cmd := exec.Command(filepath.Join(binDir, "starter"), append([]string{"chat"}, args...)...)
	var environ []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NO_COLOR=") && !strings.HasPrefix(kv, "TERM=") {
			environ = append(environ, kv)
		}
	}
	cmd.Env = append(append(environ, "TEMPORAL_ADDRESS="+temporalAddr, "LONGRUN_TASK_QUEUE="+e.taskQueue, "TERM=xterm-256color"), e.starterEnv...)
	cmd.Dir = e.workspace
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: chatRows, Cols: chatCols})
	if errors.Is(err, pty.ErrUnsupported) {
		e.t.Fatal("no pseudo-terminals on this system: the chat test cannot run")
	}
	require.NoError(e.t, err)
	c := &chatTerm{t: e.t, cmd: cmd, ptmx: ptmx, emu: vt.NewSafeEmulator(chatCols, chatRows), done: make(chan struct{})}
	go func() { _, _ = io.Copy(ptmx, c.emu) }() // the terminal's replies to queries
	go func() {
		defer close(c.done)
		b := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(b)
			c.mu.Lock()
			c.raw.Write(b[:n])
			c.mu.Unlock()
			_, _ = c.emu.Write(b[:n])
			if err != nil {
				return // EIO once chat exited
			}
		}
	}()
	e.t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			_ = c.cmd.Process.Kill()
			_ = c.cmd.Wait()
		}
		// Not c.emu.Close: it races with the Read the copy above is
		// blocked in (x/vt v0.1.0); that goroutine ends with the test binary.
		_ = c.ptmx.Close()
	})
	return c
}

// screen is what the terminal shows now, without colours.
func (c *chatTerm) screen() string { return ansi.Strip(c.emu.Render()) }

// waitScreen waits until the screen shows every one of want at once.
func (c *chatTerm) waitScreen(what string, want ...string) string {
	c.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		s := c.screen()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: the screen never showed %q; it shows:\n%s", what, want, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *chatTerm) keys(s string) {
	c.t.Helper()
	_, err := c.ptmx.Write([]byte(s))
	require.NoError(c.t, err)
	time.Sleep(50 * time.Millisecond) // a person's pace: Esc alone is Esc, not the start of a sequence
}

// exit waits for chat to end and returns the screen it left.
func (c *chatTerm) exit() string {
	c.t.Helper()
	waited := make(chan error, 1)
	go func() { waited <- c.cmd.Wait() }()
	select {
	case err := <-waited:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			require.NoError(c.t, err)
		}
	case <-time.After(30 * time.Second):
		screen := c.screen()
		// Reaped here, not by the cleanup's second Wait, which would
		// race with this one and fail every test running beside it.
		_ = c.cmd.Process.Kill()
		<-waited
		c.t.Fatalf("chat did not exit; the screen shows:\n%s", screen)
	}
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
	}
	return c.screen()
}

// Must show 1 of issue 33: `longrun chat` in a real terminal against the
// scripted model. It starts a session with the first message typed, shows
// the reply being written, shows an edit's diff before it is approved,
// denies a command with feedback, takes a message typed while the model
// works, interrupts on Esc, detaches on Ctrl-D leaving the session
// running, and after the worker is killed and another started, a second
// terminal reattaches, sees the conversation so far and finishes it.
func TestChatInATerminal(t *testing.T) {
	t.Parallel()
	streamed := "Reading greeting.txt before I change it; a stray \x1b[2J stays text."
	e := newEnv(t,
		sm.Reply{Text: streamed, ChunkDelay: 700 * time.Millisecond, ToolCalls: []sm.Call{{
			ID: "call_read", Name: "read", Arguments: `{"path":"greeting.txt"}`}}},
		sm.Tools(sm.Call{ID: "call_edit", Name: "edit", Arguments: `{"path":"greeting.txt","old_string":"hello","new_string":"hello, chat"}`}),
		sm.Tools(sm.Call{ID: "call_rm", Name: "shell", Arguments: `{"command":"rm -rf build"}`}),
		sm.Reply{Text: "I kept build/ and changed only the greeting.", Delay: 5 * time.Second},
		sm.Reply{Text: "this reply is interrupted", Delay: 5 * time.Minute},
		sm.Text("All done: greeting.txt says hello, chat."),
	)
	gitRepo(t, e.workspace, map[string]string{"greeting.txt": "hello\n"})
	waitPoller(t, tc, e.taskQueue)
	id := "e2e-chat-" + randHex(4)

	// A new session: the first message typed starts it here.
	c := e.chat("--id", id, "--idle-timeout", "45s")
	c.waitScreen("the empty chat", "task>", "Enter start")
	c.keys("fix the greeting")
	c.keys("\r")

	// The reply shows while it is written, its control sequence as text.
	s := c.waitScreen("the reply being written", "✎ writing: Reading greeting.txt")
	require.NotContains(t, s, "● Reading", "the text was shown as written before the turn ended")
	c.waitScreen("the whole reply", `● Reading greeting.txt before I change it; a stray \x1b[2J stays text.`, "you: fix the greeting", "turn 1")

	// The edit waits: v shows its diff, a approves it.
	// The prompt's own head, with the call's id: the call line shows
	// the tool and its summary before the prompt is drawn for it.
	c.waitScreen("the edit waiting", "approval needed [c2] edit", "a approve · d deny")
	c.keys("v")
	c.waitScreen("the edit's diff", "the whole of call c", "--- a/greeting.txt", "-hello", "+hello, chat")
	c.keys("a")
	c.waitScreen("the edit approved", "approved c2 (edit)", "approved by person · ran")

	// The command waits: d asks for feedback, Enter denies with it.
	// Not "approval needed" and "rm -rf build": the call line shows the
	// command while the prompt still shows c2, and d would go to c2.
	c.waitScreen("the command waiting", "approval needed [c3] shell", "rm -rf build")
	c.keys("d")
	c.waitScreen("the feedback line", "feedback for the model")
	c.keys("keep build, it holds the cache")
	c.keys("\r")
	c.waitScreen("the command denied", "denied c3 (shell)", "denied by person: keep build, it holds the cache")

	// A message typed while the model works waits for the turn's end.
	c.waitScreen("turn 4 running", "turn 4")
	c.keys("also say hi to the chat")
	c.keys("\r")
	c.waitScreen("the message queued", "sent; the session takes it once the model's turn ends")
	c.waitScreen("the queued message taken", "● I kept build/ and changed only the greeting.", "you: also say hi to the chat", "turn 5")
	waitFor(t, "the model asked with the second message", 30*time.Second, func() bool {
		reqs := e.model.Requests()
		return len(reqs) >= 5 && strings.Contains(reqs[4].Messages[len(reqs[4].Messages)-1].Content, "also say hi to the chat")
	})

	// Esc interrupts the turn.
	c.keys("\x1b")
	c.waitScreen("the interrupt", "interrupt sent", "turn 5: the model call interrupted")

	// Ctrl-D detaches; the session goes on.
	c.keys("\x04")
	out := c.exit()
	require.Contains(t, out, "detached from "+id+"; it keeps running. Reattach with: longrun chat "+id)
	desc, err := describeRun(context.Background(), tc, id, "")
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.GetWorkflowExecutionInfo().GetStatus())

	// The worker dies; another takes over.
	require.NoError(t, e.worker.Process.Kill())
	_ = e.worker.Wait()
	e.startWorker()

	// A second terminal reattaches and sees the conversation so far.
	c2 := e.chat(id)
	c2.waitScreen("the replayed conversation", "you: fix the greeting", `\x1b[2J stays text.`,
		"[c2] edit", "approved by person · ran", "denied by person: keep build", "you: also say hi to the chat", "turn 5")
	c2.keys("\x0f") // Ctrl-O: every call with its arguments, read from the conversation
	c2.waitScreen("the calls unfolded", "change:", "+hello, chat", "command: rm -rf build")
	c2.keys("\x0f")

	// Ctrl-R forks at a turn: a turn not reached is a line, f 1 starts a
	// fork (waiting for its first message) and the chat stays here.
	c2.keys("\x12")
	c2.waitScreen("the rewind or fork prompt", "r N rewinds to turn N, f N forks at turn N", "rewind or fork>")
	c2.keys("r 99")
	c2.keys("\r")
	c2.waitScreen("a turn not reached", "✗ turn 99: "+id+" has reached turn 5; nothing changed")
	c2.keys("\x15") // Ctrl-U
	c2.keys("f 1")
	c2.keys("\r")
	s = c2.waitScreen("the fork started", "forked "+id+" at turn 1: its checkout starts from that turn's files", "attach to the fork with: longrun chat session-")
	fork := regexp.MustCompile(`attach to the fork with: longrun chat (session-[0-9]{8}-[0-9]{6}-[0-9a-f]{6})`).FindStringSubmatch(s)
	require.NotNil(t, fork, s)
	fdesc, err := describeRun(context.Background(), tc, fork[1], "")
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, fdesc.GetWorkflowExecutionInfo().GetStatus(), "the fork runs")
	require.NoError(t, tc.CancelWorkflow(context.Background(), fork[1], ""))

	// r 4 rewinds this session to turn 4: the chat shows what longrun
	// rewind prints, then the session's own rewound event.
	c2.keys("\x12")
	c2.keys("r 4")
	c2.keys("\r")
	c2.waitScreen("the rewind", "rewound "+id+" from turn 5 to turn 4: conversation and files", "rewound to turn 4")

	c2.keys("finish up")
	c2.keys("\r")
	c2.waitScreen("the last reply", "you: finish up", "● All done: greeting.txt says hello, chat.")
	c2.waitScreen("the session completing", "session closed: completed")
	c2.keys("\r")
	out = c2.exit()
	require.Contains(t, out, "session "+id+" completed")
	require.Equal(t, 0, c2.cmd.ProcessState.ExitCode(), out)
	require.Equal(t, "hello\n", readFile(t, filepath.Join(e.workspace, "greeting.txt")), "the person's checkout is untouched")
	e.checkSession(id)
}

// A decision given while the server is down is not lost: chat says the
// server is lost, shows the decision as not recorded, and sends it again
// once the server is back on the same database and port; the call then
// runs and the session completes.
func TestChatKeepsADecisionWhileTheServerIsDown(t *testing.T) {
	t.Parallel()
	srv := startOwnServer(t)
	addr, c := srv.addr, srv.c
	e := newEnvWorkerEnv(t, []string{"TEMPORAL_ADDRESS=" + addr}, waitingWrite("recorded\n")...)
	e.starterEnv = []string{"TEMPORAL_ADDRESS=" + addr}
	id, ch := chatOnAWaitingWrite(t, e, c, "outage")
	srv.down(false)
	ch.waitScreen("the server lost", "LOST THE SERVER", "lost the server at "+addr)
	ch.keys("a")
	ch.waitScreen("the decision kept", "the approve of c1 was NOT recorded", "not recorded yet: the approve of c1")
	require.NoFileExists(t, filepath.Join(e.workspace, "answer.txt"))

	srv.up()
	ch.waitScreen("the decision sent again", "the server at "+addr+" is back", "sending the approve of c1 again")
	ch.waitScreen("the session done", "approved by person · ran", "● done", "session closed: completed")
	require.NotContains(t, ch.screen(), "not recorded yet")
	ch.keys("\r")
	out := ch.exit()
	require.Contains(t, out, "session "+id+" completed")
	require.Equal(t, "recorded\n", readFile(t, filepath.Join(e.workspace, "answer.txt")), "the decision given while the server was down was recorded and the call ran")
}

// With the session's only worker stopped the server still answers: chat
// says no worker answers (not that the server is lost) and what to do,
// and once a worker is back it says so and the session goes on.
func TestChatSaysWhenNoWorkerAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, waitingWrite("recorded\n")...)
	id, ch := chatOnAWaitingWrite(t, e, tc, "noworker")
	e.stopWorker()
	ch.waitScreen("no worker", "NO WORKER", "the server answers, but no worker", "If none is running")
	require.NotContains(t, ch.screen(), "LOST THE SERVER", "the server answers: it is not lost")

	e.startWorker()
	ch.waitScreen("a worker back", "a worker answers the session again")
	require.NotContains(t, ch.screen(), "NO WORKER")
	ch.keys("a")
	ch.waitScreen("the session done", "approved by person · ran", "● done", "session closed: completed")
	ch.keys("\r")
	out := ch.exit()
	require.Contains(t, out, "session "+id+" completed")
	require.Equal(t, "recorded\n", readFile(t, filepath.Join(e.workspace, "answer.txt")))
}

// Closing the terminal chat runs in (SIGHUP) ends chat and nothing else:
// the session goes on waiting for its decision, which a later `approve`
// gives, and it completes.
func TestChatClosedTerminalLeavesTheSessionRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t, waitingWrite("later\n")...)
	id, ch := chatOnAWaitingWrite(t, e, tc, "hangup")
	// What the kernel sends chat when its terminal closes. (Closing the
	// pseudo-terminal's master from the test did not hang chat up in our
	// runs: the test's own reader and writer of it keep it open.)
	require.NoError(t, ch.cmd.Process.Signal(syscall.SIGHUP))
	ch.exit()

	desc, err := describeRun(context.Background(), tc, id, "")
	require.NoError(t, err)
	require.Equal(t, "Running", desc.GetWorkflowExecutionInfo().GetStatus().String(), "the session outlives its terminal")
	waitPending(t, id, 1)
	out, err := e.starter("approve", id, "c1")
	require.NoError(t, err, out)
	waitFor(t, "the session completing", 90*time.Second, func() bool {
		d, err := describeRun(context.Background(), tc, id, "")
		return err == nil && d.GetWorkflowExecutionInfo().GetStatus().String() == "Completed"
	})
	require.Equal(t, "later\n", readFile(t, filepath.Join(e.workspace, "answer.txt")))
}

// chatOnAWaitingWrite starts an in-place session of e, on the server c
// answers for, whose first call writes content to answer.txt and waits
// for a person, and attaches chat to it once the call shows.
func chatOnAWaitingWrite(t *testing.T, e *env, c client.Client, name string) (string, *chatTerm) {
	t.Helper()
	ws, err := filepath.EvalSymlinks(e.workspace)
	require.NoError(t, err)
	waitPoller(t, c, workflows.RootQueue(e.taskQueue, ws))
	id := "e2e-chat-" + name + "-" + randHex(4)
	out, err := e.starter("start", "--id", id, "--in-place", "write the answer")
	require.NoError(t, err, out)
	ch := e.chat(id)
	ch.waitScreen("the call waiting", "approval needed", "[c1] write", "answer.txt")
	return id, ch
}

// waitingWrite is the script of chatOnAWaitingWrite's sessions.
func waitingWrite(content string) []sm.Reply {
	return []sm.Reply{
		sm.Tools(sm.Call{ID: "w1", Name: "write", Arguments: fmt.Sprintf(`{"path": "answer.txt", "content": %q}`, content)}),
		sm.Text("done"),
	}
}

// A sub-agent's call that waits for a person shows in chat among the
// sub-agent's calls, under its name, and is approved there like the
// session's own: the child writes its file and both sessions complete.
func TestChatApprovesASubAgentsCall(t *testing.T) {
	t.Parallel()
	e := newEnvResponder(t, subagentModel("build", sm.Call{ID: "c_w", Name: "write", Arguments: `{"path": "child.txt", "content": "from the child\n"}`}))
	id := e.start(workflows.SessionInput{Prompt: "delegate"})
	c := e.chat(id)
	c.waitScreen("the sub-agent's call waiting", "sub-agent task-1 started for call c1: do the child's part", "[task-1/c1] write", "approval needed")
	c.keys("a")
	c.waitScreen("the sub-agent's end", "sub-agent task-1 ended: completed", "session closed: completed")
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	require.Equal(t, "from the child\n", readFile(t, filepath.Join(e.workspace, "child.txt")))
	c.keys("\r")
	c.exit()
}
