package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/activities/contract"
	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/forge/forgetest"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// Issue 32, must-show 3: the worker is SIGKILLed while its session's
// branch is being pushed (the git server holds the receive-pack until the
// worker is dead), and, in a second session, while the pull request is
// being created (the forge holds the request until then, and then makes
// the pull request the dead worker asked for). A worker restarted on the
// same state directory takes the retried PushBranch: each session ends
// with its branch on the remote at its commit, one pull request, and no
// comment (the same commit is never announced twice).
func TestPushSurvivesAWorkerKilledDuringThePushAndThePullRequest(t *testing.T) {
	t.Parallel()
	script := map[string][]sm.Reply{
		"change": {
			sm.Tools(isoShell("c1", "printf 'changed\\n' > greeting.txt")),
			sm.Text("Greeting changed\n\nThe greeting now says changed."),
		},
	}
	fe := newForgeEnv(t, "acme/app", script)
	e, srv, gh, bare := fe.env, fe.srv, fe.gh, fe.bare

	for _, phase := range []struct {
		name string
		hold func(func())
	}{
		{"push", srv.SetOnPush},
		{"pull request", gh.SetOnCreate},
	} {
		reached, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		phase.hold(func() {
			first := false
			once.Do(func() { first = true })
			if first {
				close(reached)
				<-release
			}
		})
		id := e.startIsolated(workflows.SessionInput{Prompt: "change (" + phase.name + ")", Profile: "auto"})
		select {
		case <-reached:
		case <-time.After(3 * time.Minute):
			t.Fatalf("%s: the session never reached the %s", id, phase.name)
		}
		require.NoError(t, e.worker.Process.Kill())
		_ = e.worker.Wait()
		t.Logf("%s: worker killed during the %s", id, phase.name)
		close(release) // the dead worker's request goes on, or fails, at the server
		e.startWorker()

		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		var r workflows.SessionResult
		require.NoError(t, tc.GetWorkflow(ctx, id, "").Get(ctx, &r))
		cancel()
		require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
		require.Empty(t, r.PushError)
		require.NotEmpty(t, r.Commit)
		branch := checkout.Branch(id)
		require.Equal(t, r.Commit, gitOut(t, bare, "rev-parse", "refs/heads/"+branch)[:len(r.Commit)], "one branch, at the session's commit")
		var mine []forgetest.Pull
		for _, p := range gh.Pulls() {
			if p.Head == branch {
				mine = append(mine, p)
			}
		}
		require.Len(t, mine, 1, "one pull request for the branch")
		require.Empty(t, mine[0].Comments, "no comment: the same commit is not announced")
		require.Contains(t, r.PullRequest, "/acme/app/pull/")
		require.Equal(t, workflows.ResultCompleted, r.Status)
		require.GreaterOrEqual(t, pushAttempts(t, id), 2, "the push ran again after the kill")
		var pushed contract.PushResult
		activityResult(t, id, contract.PushBranch, &pushed)
		if phase.name == "pull request" {
			require.False(t, pushed.Created, "the killed attempt made the pull request; the retry found it")
		}
		t.Logf("%s: %s, pull request #%d (created by the retry: %v), commit %s", id, r.PullRequest, pushed.Number, pushed.Created, pushed.Commit)
		phase.hold(nil)
	}
	require.Len(t, gh.Pulls(), 2, "two sessions, two pull requests")
}

// pushAttempts is the attempt the session's PushBranch completed on.
func pushAttempts(t *testing.T, id string) int {
	t.Helper()
	push := map[int64]bool{}
	attempts := 0
	for _, ev := range history(t, id).Events {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "PushBranch" {
			push[ev.GetEventId()] = true
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && push[a.GetScheduledEventId()] {
			attempts = max(attempts, int(a.GetAttempt()))
		}
	}
	return attempts
}
