package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// --drain-timeout: 10 minutes by default, LONGRUN_DRAIN_TIMEOUT under the
// flag, 0 allowed (stop at once), a negative or unreadable value refused
// with the name to fix.
func TestDrainTimeoutFlag(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags(nil, env(nil))
	require.NoError(t, err)
	require.Equal(t, 10*time.Minute, m.drain.timeout)

	m, err = ParseFlags(nil, env(map[string]string{"LONGRUN_DRAIN_TIMEOUT": "90s"}))
	require.NoError(t, err)
	require.Equal(t, 90*time.Second, m.drain.timeout)

	m, err = ParseFlags([]string{"--drain-timeout", "0"}, env(map[string]string{"LONGRUN_DRAIN_TIMEOUT": "90s"}))
	require.NoError(t, err)
	require.Zero(t, m.drain.timeout)

	_, err = ParseFlags(nil, env(map[string]string{"LONGRUN_DRAIN_TIMEOUT": "soon"}))
	require.ErrorContains(t, err, `LONGRUN_DRAIN_TIMEOUT="soon": want a duration`)
	_, err = ParseFlags([]string{"--drain-timeout=-1s"}, env(nil))
	require.ErrorContains(t, err, "--drain-timeout -1s: want a duration of 0 or more")
}
