package main

import (
	"flag"
	"fmt"
	"log/slog"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/checkout"
)

// checkpointBundles is --checkpoint-bundle-max: the largest checkpoint
// stored in the transcript store as a git bundle when the worker has no
// --checkpoint-remote (0: none is).
type checkpointBundles struct {
	flag string
	max  int64
}

// bind reads LONGRUN_CHECKPOINT_BUNDLE_MAX as the flag's default.
func (c *checkpointBundles) bind(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&c.flag, "checkpoint-bundle-max", or(getenv("LONGRUN_CHECKPOINT_BUNDLE_MAX"), fmt.Sprintf("%dM", activities.DefaultMaxBundleBytes>>20)),
		"with no --checkpoint-remote and a --transcript store named (a directory or bucket the workers share), each session's checkpoints, and a restored session's branch at its end, are stored there as git bundles up to this size (e.g. 64M; K, M, G are powers of 1024; 0: never); a larger one is not stored, and the session says so (env LONGRUN_CHECKPOINT_BUNDLE_MAX)")
}

// parse checks the flag once the flags are read.
func (c *checkpointBundles) parse() error {
	n, err := checkout.ParseSize(c.flag)
	if err != nil {
		return fmt.Errorf("--checkpoint-bundle-max / LONGRUN_CHECKPOINT_BUNDLE_MAX: %w", err)
	}
	c.max = n
	return nil
}

// apply says where the worker's checkpoints go and returns the bound the
// activities keep bundles to (activities.Config.MaxBundleBytes; 0: none).
// Bundles go to the transcript store only when one was named: the
// default, <state-dir>/transcript, is this worker's own, and a lost
// worker's disk takes it along; the remote wins when both are set.
func (c *checkpointBundles) apply(remote, transcriptFlag string, logger *slog.Logger) int64 {
	named := transcriptFlag != "" && transcriptFlag != "off"
	switch {
	case remote != "":
		logger.Info("checkpoints", "remote", remote)
	case named && c.max > 0:
		logger.Info("checkpoints", "store", "git bundles in the transcript store", "bound", checkout.Size(c.max))
		return c.max
	default:
		logger.Info("checkpoints", "store", "the session's repository only: a lost worker's checkout is restored only on its own disk (set --checkpoint-remote, or a --transcript store the workers share)")
	}
	return 0
}
