// Command starter is the CLI, installed as longrun, a person uses to start and steer Longrun
// sessions: start one, send it messages, approve or deny its tool calls,
// watch it work, and read its result. Everything it does is also possible
// with the temporal CLI or the Web UI; this just knows the session contract.
package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	if base := filepath.Base(os.Args[0]); strings.HasPrefix(base, "longrun") {
		progName = base
	}
	// Ctrl-C stops watching; it never cancels the session (that is `cancel`).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
