package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"

	"github.com/longrun/longrun/workflows"
)

// start routes a session to the worker serving the nearest root above the
// directory it runs in, refuses a directory no worker serves while one
// polls the shared queue, and with no worker at all starts it on the
// queue of the directory's repository, saying so.
func TestStartPlacesTheSessionWhereItRuns(t *testing.T) {
	t.Parallel()
	cwd, err := os.Getwd()
	require.NoError(t, err)
	parent := filepath.Dir(cwd)

	f := &fakeClient{polled: func(tq string) bool { return tq == workflows.RootQueue("longrun", parent) }}
	code, _, stderr := runFake(t, f, "start", "--id", "s1", "hello")
	require.Equal(t, 0, code, stderr)
	require.Len(t, f.started, 1)
	require.Equal(t, workflows.RootQueue("longrun", parent), f.started[0].opts.TaskQueue)
	in := f.started[0].args[0].(workflows.SessionInput)
	require.Equal(t, cwd, in.Dir)
	require.Equal(t, parent, in.Root)
	require.Equal(t, filepath.Base(cwd), in.WorkDir)
	require.Contains(t, stderr, "next:      longrun watch s1")
	require.NotContains(t, stderr, "WARNING")

	f = &fakeClient{polled: func(tq string) bool { return tq == "longrun" }}
	code, _, stderr = runFake(t, f, "start", "--id", "s2", "hello")
	require.Equal(t, exitFailure, code)
	require.Contains(t, stderr, "no worker serves "+cwd+": start longrun-worker --workspace ")
	require.Empty(t, f.started, "nothing started")

	code, _, stderr = runFake(t, f, "start", "--workdir", "sub", "--id", "s3", "hello")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "longrun", f.started[0].opts.TaskQueue, "--workdir: the shared queue, as before")
	require.Empty(t, f.started[0].args[0].(workflows.SessionInput).Dir)

	f = &fakeClient{polled: func(string) bool { return false }}
	code, _, stderr = runFake(t, f, "start", "--id", "s4", "hello")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "WARNING: no worker is polling task queue longrun at ")
	require.Contains(t, stderr, "session s4 waits (durably) on task queue "+f.started[0].opts.TaskQueue)
}

// status and pending say at once that no worker polls an open session's
// queue.
func TestStatusAndPendingSayNobodyListens(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"status", "pending"} {
		f := &fakeClient{polled: func(string) bool { return false }}
		code, _, stderr := runFake(t, f, cmd, "s1")
		require.Equal(t, exitFailure, code, cmd)
		require.Contains(t, stderr, "no worker is polling task queue longrun at ", cmd)
		require.Contains(t, stderr, "start longrun-worker", cmd)
	}
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	require.True(t, unreachable(serviceerror.NewUnavailable("connection refused")))
	require.True(t, unreachable(errors.Join(errors.New("history could not be read"), serviceerror.NewDeadlineExceeded("x"))))
	require.False(t, unreachable(serviceerror.NewNotFound("gone")))
	require.False(t, unreachable(errors.New("session refused the approve")))
}
