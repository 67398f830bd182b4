package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/tools"
)

// gitT runs git in dir for the test's own set-up and reads.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// The drain's hand-over pushes each checkout's last checkpoint to the
// checkpoint remote (a real bare repository on disk): one whose push had
// not happened is sent, one already there is left, one with no
// checkpoint yet is skipped, and the checkout's own hooks (a pre-push
// and a hooksPath it names) never run on the host.
func TestHandOverPushesLastCheckpoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, state, remote := t.TempDir(), t.TempDir(), t.TempDir()
	gitT(t, repo, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "f.txt"), []byte("one\n"), 0o644))
	gitT(t, repo, "add", "f.txt")
	gitT(t, repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
	gitT(t, remote, "init", "-q", "--bare")

	// s-unpushed: a checkpoint made, its push never happened (the
	// activity was waiting for a retry when the drain came).
	unpushed, err := checkout.Create(ctx, repo, state, "s-unpushed", "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(unpushed.Dir, "f.txt"), []byte("changed\n"), 0o644))
	c1, err := checkout.Checkpoint(ctx, unpushed, "")
	require.NoError(t, err)
	// s-pushed: its checkpoint is in the remote already.
	pushed, err := checkout.Create(ctx, repo, state, "s-pushed", "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(pushed.Dir, "new.txt"), []byte("new\n"), 0o644))
	c2, err := checkout.Checkpoint(ctx, pushed, "")
	require.NoError(t, err)
	require.NoError(t, checkout.PushCheckpoint(ctx, pushed.Dir, remote, pushed.Name, c2))
	// s-fresh: no checkpoint yet.
	_, err = checkout.Create(ctx, repo, state, "s-fresh", "")
	require.NoError(t, err)

	// Hooks the session could have written: none may run on the host.
	marker := filepath.Join(t.TempDir(), "hook-ran")
	hook := "#!/bin/sh\ntouch " + marker + "\n"
	hooks := filepath.Join(unpushed.Dir, "myhooks")
	require.NoError(t, os.MkdirAll(hooks, 0o755))
	for _, p := range []string{filepath.Join(unpushed.Dir, ".git", "hooks", "pre-push"), filepath.Join(hooks, "pre-push"), filepath.Join(hooks, "reference-transaction")} {
		require.NoError(t, os.WriteFile(p, []byte(hook), 0o755))
	}
	gitT(t, unpushed.Dir, "config", "core.hooksPath", hooks)

	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	n := handOver(ctx, state, remote, logger)
	require.Equal(t, handOverCounts{Checkouts: 3, Pushed: 1, AlreadyThere: 1, NoCheckpoint: 1}, n, logs.String())
	require.Equal(t, c1, gitT(t, remote, "rev-parse", checkout.CheckpointRef(unpushed.Name)))
	require.Equal(t, c2, gitT(t, remote, "rev-parse", checkout.CheckpointRef(pushed.Name)))
	require.Equal(t, "changed", gitT(t, remote, "show", c1+":f.txt"), "the checkpoint's objects went along")
	require.NoFileExists(t, marker, "a hook of the checkout ran on the host")
	require.Contains(t, logs.String(), "drain: pushed a checkout's last checkpoint")
	require.Contains(t, logs.String(), "checkout="+unpushed.Name)
	require.Contains(t, logs.String(), "commit="+c1)
	require.NotContains(t, logs.String(), "checkout="+pushed.Name, "only what was pushed is listed")

	// Run again: everything is there now.
	require.Equal(t, handOverCounts{Checkouts: 3, AlreadyThere: 2, NoCheckpoint: 1}, handOver(ctx, state, remote, logger))

	// A remote that cannot be reached is reported per checkout, and the
	// hand-over goes on with the others.
	gone := filepath.Join(t.TempDir(), "no-such-remote")
	logs.Reset()
	require.Equal(t, handOverCounts{Checkouts: 3, Failed: 2, NoCheckpoint: 1}, handOver(ctx, state, gone, logger))
	require.Contains(t, logs.String(), "could not be pushed")

	// No checkouts at all: nothing to say.
	require.Equal(t, handOverCounts{}, handOver(ctx, t.TempDir(), remote, logger))
}

// serve hands the checkouts over once the drain is done, and a second
// signal cuts a hand-over that hangs short.
func TestServeHandsOverAfterTheDrain(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.DiscardHandler)
	jobs := tools.NewJobs()
	defer jobs.Close()

	sig := make(chan os.Signal, 2)
	called := make(chan struct{}, 1)
	sig <- syscall.SIGTERM
	require.NoError(t, serve([]worker.Worker{}, sig, time.Minute, newHeld(logger), jobs, func(context.Context) { called <- struct{}{} }, logger))
	require.Len(t, called, 1, "the hand-over ran after the drain")

	sig = make(chan os.Signal, 2)
	started := make(chan struct{})
	cut := make(chan error, 1)
	go func() {
		<-started
		sig <- syscall.SIGTERM
	}()
	sig <- syscall.SIGTERM
	done := make(chan error, 1)
	go func() {
		done <- serve([]worker.Worker{}, sig, time.Minute, newHeld(logger), jobs, func(ctx context.Context) {
			close(started)
			<-ctx.Done()
			cut <- ctx.Err()
		}, logger)
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("a second signal did not end a hanging hand-over")
	}
	require.ErrorIs(t, <-cut, context.Canceled)
}
