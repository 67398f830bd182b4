package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTinyScenarios runs the ratio and overhead scenarios with two turns
// and one run against the embedded server, to prove the command works. It
// checks the tables are printed, never the times in them.
func TestTinyScenarios(t *testing.T) {
	t.Parallel()
	bin := os.Getenv("LONGRUN_DEVSERVER")
	if bin == "" {
		bin = filepath.Join("..", ".longrun-bin", "devserver")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no devserver binary at %s (make devserver)", bin)
	}
	cfg, err := ParseFlags([]string{"-scenario", "ratio,overhead", "-runs", "1", "-turns", "2", "-latency", "1ms", "-devserver", bin})
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, Run(cfg, &out))
	require.Contains(t, out.String(), "ratio durable/baseline")
	require.Contains(t, out.String(), "model activity scheduled→started")
}

func TestResponderShape(t *testing.T) {
	t.Parallel()
	wd, err := newWorld(0)
	require.NoError(t, err)
	defer wd.close()
	res, err := runBaseline(t.Context(), wd.acts, 3)
	require.NoError(t, err)
	require.Equal(t, 4, res.Turns, "three tool turns and the final text")
	require.Len(t, res.perTurn(), 3)
}
