package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/checkout"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// isolationEnv is a worker with the sandbox required, whose workspace is
// a git repository holding greeting.txt = "hello\n", and whose model
// answers each session from its prompt: scriptFor(stateDir)[p][n] is the
// reply to the n-th model call of the session whose prompt holds p.
// extra are more worker flags.
func isolationEnv(t *testing.T, scriptFor func(stateDir string) map[string][]sm.Reply, extra ...string) *env {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skipf("SKIPPED LOUDLY: the isolation tests run shell commands in the sandbox (--sandbox on) and need bubblewrap (bwrap), which is not installed: %v", err)
	}
	ws := t.TempDir()
	git(t, ws, "init", "-q", ".")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "greeting.txt"), []byte("hello\n"), 0o644))
	git(t, ws, "add", "greeting.txt")
	git(t, ws, "commit", "-qm", "first")
	state := t.TempDir()
	script := scriptFor(state)
	respond := func(req sm.Request) (sm.Reply, bool) {
		prompt, turns := "", 0
		for _, m := range req.Messages {
			switch {
			case m.Role == "user" && prompt == "":
				prompt = m.Content
			case m.Role == "assistant":
				turns++
			}
		}
		for p, replies := range script {
			if strings.Contains(prompt, p) && turns < len(replies) {
				return replies[turns], true
			}
		}
		return sm.Reply{}, false
	}
	e := &env{
		t: t, model: sm.NewResponder(respond), workspace: ws,
		taskQueue: "e2e-" + randHex(6), apiKey: "sk-test-" + randHex(16), stateDir: state,
		workerArgs: append([]string{"--sandbox", "on"}, extra...),
	}
	t.Cleanup(e.model.Close)
	e.startWorker()
	return e
}

func isoShell(id, command string) sm.Call {
	args, _ := json.Marshal(map[string]string{"command": command})
	return sm.Call{ID: id, Name: "shell", Arguments: string(args)}
}

// gitOut runs git in dir and returns its output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// Must show 1: three sessions started at once on one repository each
// change the same line of the same file differently. Each branch holds
// its own change, the person's checkout is untouched, starter diff shows
// each, and starter apply applies one (and refuses the next, which now
// conflicts, changing nothing).
func TestIsolatedSessionsOnOneRepository(t *testing.T) {
	t.Parallel()
	words := []string{"bonjour", "hola", "ciao"}
	script := map[string][]sm.Reply{}
	for _, w := range words {
		script["say "+w] = []sm.Reply{
			sm.Tools(isoShell("c1", fmt.Sprintf("printf '%s\\n' > greeting.txt && git status --short", w))),
			sm.Text("Greeting is now " + w + "\n\nChanged greeting.txt."),
		}
	}
	e := isolationEnv(t, func(string) map[string][]sm.Reply { return script })
	ids := make([]string, len(words))
	var wg sync.WaitGroup
	for i, w := range words {
		ids[i] = "e2e-iso-" + w + "-" + randHex(3)
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := e.starter("start", "--id", ids[i], "--profile", "auto", "say "+w)
			require.NoError(t, err, out)
		}()
	}
	wg.Wait()
	for i, id := range ids {
		r := result(t, id)
		require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
		require.Equal(t, checkout.Branch(id), r.Branch)
		require.NotEmpty(t, r.Commit, "the change is committed on the branch")
		msgs := e.checkSession(id)
		res := resultFor(msgs, "c1")
		require.NotNil(t, res)
		require.False(t, res.IsError, res.Content)
		require.Contains(t, res.Content, "M greeting.txt", "git works inside the sandboxed checkout")
		require.Equal(t, words[i]+"\n", gitOut(t, e.workspace, "show", r.Branch+":greeting.txt"), "the branch holds its own change")
		require.Equal(t, "Greeting is now "+words[i]+"\n", gitOut(t, e.workspace, "log", "-1", "--format=%s", r.Branch), "the commit message is the final text's first line")
		require.NoDirExists(t, filepath.Join(e.stateDir, checkout.Dir, checkout.Sanitize(id)), "the checkout is removed at the end")
	}
	recordHistory(t, ids[0], "isolated_session")
	b, err := os.ReadFile(filepath.Join(e.workspace, "greeting.txt"))
	require.NoError(t, err)
	require.Equal(t, "hello\n", string(b), "the person's checkout is untouched")
	require.Empty(t, gitOut(t, e.workspace, "status", "--porcelain"))

	for i, id := range ids {
		out, err := e.starter("diff", id)
		require.NoError(t, err, out)
		require.Contains(t, out, "-hello\n+"+words[i]+"\n")
		for j, other := range words {
			if j != i {
				require.NotContains(t, out, other)
			}
		}
	}
	out, err := e.starter("apply", ids[1])
	require.NoError(t, err, out)
	b, _ = os.ReadFile(filepath.Join(e.workspace, "greeting.txt"))
	require.Equal(t, words[1]+"\n", string(b), "apply brought one session's change")

	out, err = e.starter("apply", ids[2])
	require.Error(t, err, out)
	require.Contains(t, out, "do not apply to "+e.workspace)
	require.Contains(t, out, "nothing was changed")
	b, _ = os.ReadFile(filepath.Join(e.workspace, "greeting.txt"))
	require.Equal(t, words[1]+"\n", string(b), "a refused apply changes nothing")

	out, err = e.starter("discard", ids[0])
	require.NoError(t, err, out)
	require.NotContains(t, gitOut(t, e.workspace, "branch", "--list"), checkout.Branch(ids[0]))
	require.Contains(t, gitOut(t, e.workspace, "branch", "--list"), checkout.Branch(ids[2]), "only the discarded branch goes")
}

// Must show 3: a session's sandboxed command can neither read nor write
// another session's checkout, which is there on the worker's disk.
func TestSandboxKeepsSessionsOutOfEachOthersCheckouts(t *testing.T) {
	t.Parallel()
	other, peeker := "e2e-iso-hold-"+randHex(3), "e2e-iso-peek-"+randHex(3)
	e := isolationEnv(t, func(state string) map[string][]sm.Reply {
		otherFile := filepath.Join(state, checkout.Dir, checkout.Sanitize(other), "greeting.txt")
		return map[string][]sm.Reply{
			"hold": {sm.Tools(isoShell("h1", "printf 'mine\\n' > greeting.txt")), sm.Text("holding")},
			"peek": {
				sm.Tools(isoShell("p1", fmt.Sprintf("cat %[1]s; echo read=$?; echo stolen > %[1]s; echo write=$?; echo listing:; ls %[2]s", otherFile, filepath.Join(state, checkout.Dir)))),
				sm.Text("peeked"),
			},
		}
	})
	otherFile := filepath.Join(e.stateDir, checkout.Dir, checkout.Sanitize(other), "greeting.txt")
	// The other session then waits for a message forever: its checkout
	// stays on the worker's disk while the second one runs.
	out, err := e.starter("start", "--id", other, "--profile", "auto", "--idle-timeout", "forever", "hold")
	require.NoError(t, err, out)
	waitFor(t, "the other session's change in its checkout", 60*time.Second, func() bool {
		b, err := os.ReadFile(otherFile)
		return err == nil && string(b) == "mine\n"
	})
	out, err = e.starter("start", "--id", peeker, "--profile", "auto", "peek")
	require.NoError(t, err, out)
	r := result(t, peeker)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	res := resultFor(e.checkSession(peeker), "p1")
	require.NotNil(t, res)
	require.Contains(t, res.Content, "read=1", "cat of the other checkout fails: %s", res.Content)
	require.Contains(t, res.Content, "write=1", "a write to it fails: %s", res.Content)
	require.NotContains(t, res.Content, "mine")
	_, listing, _ := strings.Cut(res.Content, "listing:")
	require.NotContains(t, listing, checkout.Sanitize(other), "the other checkout is not even listed")
	require.Contains(t, listing, checkout.Sanitize(peeker), "its own checkout is there")
	b, err := os.ReadFile(otherFile)
	require.NoError(t, err)
	require.Equal(t, "mine\n", string(b), "the other checkout is unchanged on disk")

	out, err = e.starter("cancel", other)
	require.NoError(t, err, out)
}
