package e2e

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// Must show 3 of issue 27: what one session can hold on a worker is
// bounded, and what it held goes when it ends by any path.

// sessionDirBytes is what the files of the session with that (file-safe)
// id take beneath the worker's state directory.
func sessionDirBytes(stateDir, id string) int64 {
	var total int64
	_ = filepath.WalkDir(filepath.Join(stateDir, "sessions", id), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
		}
		return nil
	})
	return total
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// A terminated session runs no more code, so it cannot kill its own jobs:
// the worker's reaper asks Temporal and kills them within a heartbeat
// timeout (10 s), and deletes the session's job logs.
func TestBoundsTerminatedSessionJobsReaped(t *testing.T) {
	t.Parallel()
	marker := "longrun-reap-" + randHex(6)
	e := newEnvResponder(t, jobModel(marker))
	id := e.start(workflows.SessionInput{Prompt: "start the server", Profile: "auto", IdleTimeout: workflows.Duration(10 * time.Minute)})
	waitFor(t, "the model to see the job ready", 60*time.Second, func() bool {
		return query[workflows.Status](t, id, workflows.QueryStatus).Phase == workflows.PhaseWaitingInput
	})
	require.NotEmpty(t, processesWith(marker), "the job runs while the session waits")
	require.DirExists(t, filepath.Join(e.stateDir, "sessions", id, "jobs"))

	require.NoError(t, tc.TerminateWorkflow(context.Background(), id, "", "bounds test"))
	terminated := time.Now()
	waitFor(t, "the terminated session's job to be gone", 10*time.Second, func() bool { return len(processesWith(marker)) == 0 })
	t.Logf("job gone %.1fs after the session was terminated", time.Since(terminated).Seconds())
	waitFor(t, "the terminated session's files to be deleted", 10*time.Second, func() bool {
		return !dirExists(filepath.Join(e.stateDir, "sessions", id))
	})
	require.Contains(t, e.logs.String(), "reaper: killed the background jobs of a session that ended")
}

// A session's commands and jobs cannot put more than its quota on the
// worker's disk (1 MiB here) nor more than the tmpfs size (4 MiB here) in
// its memory; the third job past --max-jobs 2 is refused naming job_kill;
// each cut says so. Its files are deleted once it is cancelled.
func TestBoundsQuotaTmpfsAndJobCap(t *testing.T) {
	t.Parallel()
	shell := func(id, command string, background bool) sm.Reply {
		args, _ := json.Marshal(map[string]any{"command": command, "background": background})
		return sm.Tools(sm.Call{ID: id, Name: "shell", Arguments: string(args)})
	}
	e := newEnvWorkerEnv(t, []string{"LONGRUN_SESSION_QUOTA_BYTES=1M", "LONGRUN_SANDBOX_TMP_BYTES=4M", "LONGRUN_MAX_JOBS=2", "LONGRUN_SANDBOX=on"},
		shell("c_job1", "yes job-one-output", true),
		shell("c_job2", "yes job-two-output", true),
		shell("c_job3", "sleep 300", true),
		shell("c_spill", "sleep 1; yes spilled | head -c 3000000", false),
		shell("c_tmp", "head -c 10000000 /dev/zero > /tmp/fill; echo tmp=$(stat -c %s /tmp/fill)", false),
		sm.Tools(sm.Call{ID: "c_out", Name: "job_list", Arguments: `{}`}),
		sm.Text("done"),
	)
	id := e.start(workflows.SessionInput{Prompt: "fill the worker", Profile: "auto", IdleTimeout: workflows.Duration(10 * time.Minute)})
	waitFor(t, "the session to wait", 60*time.Second, func() bool {
		return query[workflows.Status](t, id, workflows.QueryStatus).Phase == workflows.PhaseWaitingInput
	})
	msgs := query[[]conversation.Message](t, id, workflows.QueryConversation)
	content := func(call string) string {
		r := resultFor(msgs, call)
		require.NotNil(t, r, call)
		return r.Content
	}
	const cut = "output cut: this session's 1 MiB quota for spilled output and job logs is used up"
	require.Contains(t, content("c_job3"), "background job refused: this session already runs 2 background jobs")
	require.Contains(t, content("c_job3"), `job_kill {"id": "job-1"}`)
	require.Contains(t, content("c_spill"), "["+cut)
	require.Contains(t, content("c_out"), cut, "the jobs' status says their logs were cut")
	require.Contains(t, content("c_tmp"), "No space left on device")
	m := regexp.MustCompile(`tmp=(\d+)`).FindStringSubmatch(content("c_tmp"))
	require.NotNil(t, m, content("c_tmp"))
	tmp, _ := strconv.Atoi(m[1])
	require.LessOrEqual(t, tmp, 4<<20, "/tmp holds at most its size")

	time.Sleep(time.Second) // the jobs print on
	used := sessionDirBytes(e.stateDir, id)
	t.Logf("the session's files take %d bytes (quota %d)", used, 1<<20)
	require.LessOrEqual(t, used, int64(1<<20+len(id)))

	out, err := e.starter("cancel", id)
	require.NoError(t, err, out)
	waitFor(t, "the cancelled session's files to be deleted", 15*time.Second, func() bool {
		return !dirExists(filepath.Join(e.stateDir, "sessions", id))
	})
	require.False(t, strings.Contains(e.logs.String(), "cannot delete the files"), e.logs.String())
}

// With token_budget 500, a tree of sub-agents (a child that delegates to
// a grandchild that never stops globbing) spends from the parent's budget: each
// gets what is left of its parent's, their usage is added to the
// parent's, and the whole tree stops at 500 tokens. Every reply reports
// 50 tokens.
func TestBoundsSubagentTreeStopsAtParentBudget(t *testing.T) {
	t.Parallel()
	usage := &sm.Usage{PromptTokens: 40, CompletionTokens: 10}
	var n atomic.Int32 // model calls so far
	reply := func(r sm.Reply) (sm.Reply, bool) { r.Usage = usage; return r, true }
	task := func(id, prompt string) sm.Reply {
		args, _ := json.Marshal(map[string]string{"description": prompt, "prompt": prompt, "profile": "plan"})
		return sm.Tools(sm.Call{ID: id, Name: "task", Arguments: string(args)})
	}
	e := newEnvResponder(t, func(req sm.Request) (sm.Reply, bool) {
		first, results := "", 0
		for _, m := range req.Messages {
			if m.Role == "user" && first == "" {
				first = m.Content
			}
			if m.Role == "tool" {
				results++
			}
		}
		if n.Add(1) > 40 {
			// Without a shared budget the grandchild would list for 200
			// turns: end the tree instead of the test's time.
			return reply(sm.Text("enough"))
		}
		switch {
		case first == "delegate" && results == 0:
			return reply(task("c_child", "child-work"))
		case first == "delegate":
			return reply(sm.Text("parent done"))
		case first == "child-work" && results == 0:
			return reply(task("c_grandchild", "grandchild-work"))
		case first == "child-work":
			return reply(sm.Text("child done"))
		default:
			// A different call each time: the same one thrice would ask
			// a person (the repeated-call guard).
			return reply(sm.Tools(sm.Call{ID: "c_glob" + strconv.Itoa(results), Name: "glob", Arguments: `{"pattern": "x` + strconv.Itoa(results) + `*"}`}))
		}
	})
	id := e.start(workflows.SessionInput{Prompt: "delegate", Profile: "auto", TokenBudget: 500})
	r := result(t, id)
	calls := len(e.model.Requests())
	t.Logf("parent: %s, %d tokens, %d model calls in the tree; %s", r.Status, r.Usage.TotalTokens, calls, r.Error)
	require.Equal(t, workflows.ResultBudget, r.Status, r.Error)
	require.Equal(t, int64(50*calls), r.Usage.TotalTokens, "every call of the tree is in the parent's usage")
	require.LessOrEqual(t, r.Usage.TotalTokens, int64(500), "the tree stops at the parent's budget")
	require.GreaterOrEqual(t, r.Usage.TotalTokens, int64(450))
	replays(t, id)
}
