package tools

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestJobDiesWithWorker runs a stand-in worker (this test binary, in
// TestJobWorkerProcess) that starts a job, SIGKILLs it, and checks that
// the job does not outlive it: the session would have nobody to list or
// kill the job, and tells the model it ended with its worker.
// Unsandboxed only the process bash became is covered (Pdeathsig), so the
// command is one process; in the sandbox bwrap takes all of it.
func TestJobDiesWithWorker(t *testing.T) {
	t.Parallel()
	for _, mode := range shellModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			command := "exec sleep 30"
			if mode == SandboxOn {
				command = "sleep 30 & echo forked; sleep 30"
			}
			ws := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestJobWorkerProcess$")
			cmd.Env = append(os.Environ(), "LONGRUN_JOB_WORKER="+ws, "LONGRUN_JOB_MODE="+string(mode), "LONGRUN_JOB_COMMAND="+command)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

			lines := make(chan string)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			var pgid int
			for pgid == 0 {
				select {
				case line, ok := <-lines:
					require.True(t, ok, "the stand-in worker ended without starting the job")
					if rest, found := strings.CutPrefix(line, "job pgid "); found {
						pgid, err = strconv.Atoi(rest)
						require.NoError(t, err)
					}
				case <-time.After(20 * time.Second):
					t.Fatal("the stand-in worker did not start the job")
				}
			}
			pids := groupMembers(pgid)
			require.NotEmpty(t, pids)
			require.NoError(t, cmd.Process.Kill())
			_ = cmd.Wait()
			requireGroupGone(t, pgid, pids)
		})
	}
}

// TestJobWorkerProcess is the stand-in worker of TestJobDiesWithWorker; it
// does nothing in a normal run.
func TestJobWorkerProcess(t *testing.T) {
	root := os.Getenv("LONGRUN_JOB_WORKER")
	if root == "" {
		t.Skip("only run by TestJobDiesWithWorker")
	}
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	jobs := NewJobs()
	sh := NewShell(ShellConfig{Sandbox: SandboxMode(os.Getenv("LONGRUN_JOB_MODE"))})
	sh.jobs = jobs
	res := runTool(t, context.Background(), sh, Env{Workspace: ws, Session: "s", JobID: "job-1"},
		ShellParams{Command: os.Getenv("LONGRUN_JOB_COMMAND"), Background: true})
	require.False(t, res.IsError, res.Content)
	jb, _ := jobs.lookup("s", "job-1")
	if strings.Contains(jb.command, "forked") {
		waitLog(t, jb, "forked\n")
	}
	fmt.Printf("job pgid %d\n", jb.pgid)
	time.Sleep(time.Minute) // until the test kills this process
}
