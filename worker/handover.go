package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/longrun/longrun/checkout"
)

// handOverTimeout bounds the hand-over at the end of a drain: a remote
// that does not answer must not keep a stopping worker alive. A second
// signal ends it sooner.
const handOverTimeout = 2 * time.Minute

// handOverPushes is how many checkouts are pushed at once: a fleet worker
// may hold a hundred, and each push to a remote over the network waits
// mostly on the network.
const handOverPushes = 4

// handOverCounts is what a hand-over did, for its closing log line.
type handOverCounts struct {
	Checkouts, Pushed, AlreadyThere, NoCheckpoint, Failed int
}

// handOver pushes the last checkpoint of every checkout in the state
// directory to the checkpoint remote (checkout.HandOver), once the drain
// has let the calls that ran here finish: the checkpoints they led to are
// made by then, and a session restored elsewhere finds its last one in
// the remote even if its own push was still waiting for a retry on this
// worker's queue. It logs each checkout it pushed and a summary.
func handOver(ctx context.Context, stateDir, remote string, logger *slog.Logger) handOverCounts {
	var n handOverCounts
	held, err := checkout.HeldCheckouts(stateDir)
	if err != nil {
		logger.Warn("drain: cannot list the checkouts to hand over", "error", err)
		return n
	}
	n.Checkouts = len(held)
	if len(held) == 0 {
		return n
	}
	logger.Info("drain: handing the checkouts over: pushing each one's last checkpoint", "remote", remote, "checkouts", len(held))
	var mu sync.Mutex
	sem := make(chan struct{}, handOverPushes)
	var wg sync.WaitGroup
	for _, h := range held {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			commit, sent, err := checkout.HandOver(ctx, h, remote)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				n.Failed++
				logger.Warn("drain: a checkout's last checkpoint could not be pushed; a worker restoring it uses the last one the remote has", "checkout", h.Name, "error", err)
			case commit == "":
				n.NoCheckpoint++
			case sent:
				n.Pushed++
				logger.Info("drain: pushed a checkout's last checkpoint", "checkout", h.Name, "commit", commit, "remote", remote)
			default:
				n.AlreadyThere++
			}
		}()
	}
	wg.Wait()
	logger.Info("drain: checkouts handed over", "checkouts", n.Checkouts, "pushed", n.Pushed, "already_in_remote", n.AlreadyThere,
		"no_checkpoint_yet", n.NoCheckpoint, "failed", n.Failed)
	return n
}
