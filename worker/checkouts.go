package main

import (
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/longrun/longrun/checkout"
)

// checkoutLimit is --max-checkout-bytes: the most disk the worker's
// sessions' checkouts take together (0: no bound).
type checkoutLimit struct {
	flag string
	max  int64
}

// bind reads LONGRUN_MAX_CHECKOUT_BYTES as the flag's default.
func (c *checkoutLimit) bind(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&c.flag, "max-checkout-bytes", getenv("LONGRUN_MAX_CHECKOUT_BYTES"),
		"most disk all sessions' checkouts on this worker take together, e.g. 20G or 500M (K, M, G, T are powers of 1024); a session whose checkout would go past it fails to start, saying so (default: no bound; env LONGRUN_MAX_CHECKOUT_BYTES)")
}

// parse checks the flag once the flags are read.
func (c *checkoutLimit) parse() error {
	if c.flag == "" {
		return nil
	}
	n, err := checkout.ParseSize(c.flag)
	if err != nil {
		return fmt.Errorf("--max-checkout-bytes / LONGRUN_MAX_CHECKOUT_BYTES: %w", err)
	}
	c.max = n
	return nil
}

// report says at start-up what the checkouts take: where they are, how
// many, how much, and the bound (activities.Config.MaxCheckoutBytes), so
// an operator reads it in the worker's log (starter checkouts lists them
// one by one).
func (c *checkoutLimit) report(stateDir string, logger *slog.Logger) {
	uses, used, err := checkout.DiskUse(stateDir)
	if err != nil {
		logger.Warn("cannot measure the checkouts' disk", "error", err)
		return
	}
	bound := "none (set --max-checkout-bytes)"
	if c.max > 0 {
		bound = checkout.Size(c.max)
	}
	logger.Info("sessions' checkouts", "dir", filepath.Join(stateDir, checkout.Dir), "checkouts", len(uses),
		"disk", checkout.Size(used), "bound", bound)
}
