package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/tools"
)

// The per-session bounds: defaults, flags over the environment, and
// values that would not bound anything refused with the flag's name.
func TestBoundsFlags(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags(nil, env(nil))
	require.NoError(t, err)
	require.Equal(t, int64(tools.DefaultSessionQuotaBytes), m.Tools.Shell.SessionQuotaBytes)
	require.Equal(t, int64(tools.DefaultTmpBytes), m.Tools.Shell.TmpBytes)
	require.Equal(t, tools.DefaultMaxJobs, m.Tools.Shell.MaxJobs)
	require.Equal(t, defaultReapEvery, m.bounds.reapEvery)

	m, err = ParseFlags([]string{"--session-quota-bytes", "2G", "--max-jobs", "3", "--reap-interval", "1s"},
		env(map[string]string{"LONGRUN_SESSION_QUOTA_BYTES": "1M", "LONGRUN_SANDBOX_TMP_BYTES": "64M", "LONGRUN_MAX_JOBS": "4"}))
	require.NoError(t, err)
	require.Equal(t, int64(2<<30), m.Tools.Shell.SessionQuotaBytes)
	require.Equal(t, int64(64<<20), m.Tools.Shell.TmpBytes)
	require.Equal(t, 3, m.Tools.Shell.MaxJobs)
	require.Equal(t, time.Second, m.bounds.reapEvery)

	for args, want := range map[string]string{
		"--session-quota-bytes=0":  `--session-quota-bytes / LONGRUN_SESSION_QUOTA_BYTES "0": want a positive size`,
		"--sandbox-tmp-bytes=lots": `--sandbox-tmp-bytes / LONGRUN_SANDBOX_TMP_BYTES: "lots": want a size`,
		"--max-jobs=0":             `--max-jobs / LONGRUN_MAX_JOBS "0": want a positive number of jobs`,
	} {
		_, err := ParseFlags([]string{args}, env(nil))
		require.ErrorContains(t, err, want, args)
	}
}
