package activities

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/longrun/longrun/notify"
)

// A session learns from its workspace configuration whether the worker
// has sinks; without it the workflow schedules no Notify at all.
func TestLoadWorkspaceConfigSaysWhetherNotifying(t *testing.T) {
	t.Parallel()
	a, _ := newActs(t, nil)
	wc, err := a.LoadWorkspaceConfig(context.Background(), "")
	require.NoError(t, err)
	require.False(t, wc.Notify)
	a = a.with(func(c *Config) { c.Notify = &notify.Sender{Webhooks: []string{"http://127.0.0.1:1/"}} })
	wc, err = a.LoadWorkspaceConfig(context.Background(), "")
	require.NoError(t, err)
	require.True(t, wc.Notify)
}

func TestNotifyActivity(t *testing.T) {
	t.Parallel()
	var status atomic.Int32
	status.Store(http.StatusServiceUnavailable)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(int(status.Load()))
	}))
	defer srv.Close()
	ev := notify.Event{Key: "s/r/completed/1.1", Event: notify.EventCompleted, Session: "s"}
	run := func(a *Activities) (notify.Result, error) {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestActivityEnvironment()
		env.RegisterActivity(a)
		v, err := env.ExecuteActivity(a.Notify, ev)
		var res notify.Result
		if err == nil {
			require.NoError(t, v.Get(&res))
		}
		return res, err
	}

	a, _ := newActs(t, nil)
	res, err := run(a)
	require.NoError(t, err, "a worker without sinks posts nothing, and does not fail")
	require.Equal(t, notify.Result{}, res)

	a = a.with(func(c *Config) { c.Notify = &notify.Sender{Webhooks: []string{srv.URL}, Dir: t.TempDir()} })
	_, err = run(a)
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr))
	require.False(t, appErr.NonRetryable(), "a 5xx is retried")

	status.Store(http.StatusForbidden)
	_, err = run(a)
	require.True(t, errors.As(err, &appErr))
	require.True(t, appErr.NonRetryable(), "a 4xx is final")
	require.Equal(t, ErrTypeNotifyRejected, appErr.Type())

	status.Store(http.StatusTooManyRequests)
	_, err = run(a)
	require.True(t, errors.As(err, &appErr))
	require.False(t, appErr.NonRetryable(), "429 is retried")

	status.Store(http.StatusOK)
	res, err = run(a)
	require.NoError(t, err)
	require.Equal(t, []string{"webhook 1"}, res.Delivered)
}
