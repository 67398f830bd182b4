package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/workflows"
)

func TestParseArgsInterleaved(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		wantPos  []string
		wantAll  bool
		wantFeed string
	}{
		{"flags first", []string{"--all", "s1"}, []string{"s1"}, true, ""},
		{"flags last", []string{"s1", "--all"}, []string{"s1"}, true, ""},
		{"flags between", []string{"s1", "--feedback", "no", "c1", "c2"}, []string{"s1", "c1", "c2"}, false, "no"},
		{"double dash keeps dashes", []string{"s1", "--", "-v", "--all"}, []string{"s1", "-v", "--all"}, false, ""},
		{"none", nil, nil, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			all := fs.Bool("all", false, "")
			feedback := fs.String("feedback", "", "")
			pos, err := parseArgs(fs, tc.args)
			require.NoError(t, err)
			require.Equal(t, tc.wantPos, pos)
			require.Equal(t, tc.wantAll, *all)
			require.Equal(t, tc.wantFeed, *feedback)
		})
	}
}

func TestParseArgsBadFlagIsUsageError(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	_, err := parseArgs(fs, []string{"s1", "--nope"})
	var ue usageError
	require.True(t, errors.As(err, &ue), "got %v", err)
}

func TestParseStart(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("start", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o, err := parseStart(fs, []string{"--model", "m1", "fix", "the", "--max-turns", "7", "bug", "--idle-timeout", "10m", "--workdir", "proj", "--wait", "--id", "s1", "--system", "be brief", "--approval", "none", "--approval-timeout", "1h"})
	require.NoError(t, err)
	require.Equal(t, workflows.SessionInput{
		Prompt:          "fix the bug",
		Model:           "m1",
		SystemPrompt:    "be brief",
		MaxTurns:        7,
		WorkDir:         "proj",
		IdleTimeout:     workflows.Duration(10 * time.Minute),
		Approval:        workflows.ApproverNone,
		ApprovalTimeout: workflows.Duration(time.Hour),
	}, o.input)
	require.Equal(t, "s1", o.id)
	require.True(t, o.wait)
}

func TestParseStartErrors(t *testing.T) {
	t.Parallel()
	for name, args := range map[string][]string{
		"no prompt":         {"--model", "m"},
		"blank prompt":      {"  "},
		"negative turns":    {"--max-turns", "-1", "p"},
		"negative idle":     {"--idle-timeout", "-1s", "p"},
		"bad duration":      {"--idle-timeout", "soon", "p"},
		"unknown flag":      {"--bogus", "p"},
		"max-turns not int": {"--max-turns", "many", "p"},
		"bad approver":      {"--approval", "robot", "p"},
		"negative approval": {"--approval-timeout", "-1m", "p"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("start", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			_, err := parseStart(fs, args)
			var ue usageError
			require.True(t, errors.As(err, &ue), "got %v", err)
		})
	}
}

func TestConfigFromEnvAndFlags(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"TEMPORAL_ADDRESS":   "temporal.example:7233",
		"TEMPORAL_NAMESPACE": "prod",
		"TEMPORAL_API_KEY":   "k",
		"LONGRUN_TASK_QUEUE": "q-env",
	}
	var got config
	a := &app{
		stdout: io.Discard, stderr: io.Discard,
		getenv: func(k string) string { return env[k] },
		dial: func(_ context.Context, cfg config) (sessionClient, error) {
			got = cfg
			return nil, errors.New("stop here")
		},
	}
	// --namespace before the command, --task-queue after it: both apply.
	code := a.run(context.Background(), []string{"--namespace", "flagns", "status", "s1", "--task-queue", "q-flag", "--json"})
	require.Equal(t, exitFailure, code)
	require.Equal(t, config{Address: "temporal.example:7233", Namespace: "flagns", TaskQueue: "q-flag", APIKey: "k", JSON: true}, got)
}

func TestDefaultConfig(t *testing.T) {
	t.Parallel()
	a := &app{getenv: func(string) string { return "" }}
	require.Equal(t, config{Address: "localhost:7233", Namespace: "default", TaskQueue: "longrun"}, a.defaultConfig())
}

func TestUsageExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"no command", nil, exitUsage},
		{"unknown command", []string{"frobnicate"}, exitUsage},
		{"help", []string{"help"}, exitOK},
		{"dash h", []string{"-h"}, exitOK},
		{"command help", []string{"approve", "-h"}, exitOK},
		{"start without prompt", []string{"start"}, exitUsage},
		{"send without text", []string{"send", "s1"}, exitUsage},
		{"status without session", []string{"status"}, exitUsage},
		{"status with extra", []string{"status", "s1", "s2"}, exitUsage},
		{"deny without feedback", []string{"deny", "s1", "c1"}, exitUsage},
		{"all with ids", []string{"approve", "s1", "c1", "--all"}, exitUsage},
		{"bad global flag", []string{"--bogus", "status", "s1"}, exitUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errb bytes.Buffer
			dialed := false
			a := &app{
				stdout: &out, stderr: &errb,
				getenv: func(string) string { return "" },
				dial: func(context.Context, config) (sessionClient, error) {
					dialed = true
					return nil, errors.New("no server in this test")
				},
			}
			code := a.run(context.Background(), tc.args)
			require.Equal(t, tc.code, code, "stdout=%s stderr=%s", out.String(), errb.String())
			if tc.code == exitUsage {
				require.False(t, dialed, "usage errors are caught before dialing")
				require.Contains(t, errb.String(), "Usage:")
			}
		})
	}
}

func TestDialErrorIsReported(t *testing.T) {
	t.Parallel()
	var errb bytes.Buffer
	a := &app{
		stdout: io.Discard, stderr: &errb,
		getenv: func(string) string { return "" },
		dial:   dialTemporal,
	}
	// Port 1 on loopback refuses at once; the message names the address.
	code := a.run(context.Background(), []string{"--address", "127.0.0.1:1", "status", "s1"})
	require.Equal(t, exitFailure, code)
	require.Contains(t, errb.String(), "cannot reach Temporal at 127.0.0.1:1")
}

func TestNewSessionID(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	id := newSessionID(now)
	require.Regexp(t, `^session-20260102-150405-[0-9a-f]{6}$`, id)
	require.NotEqual(t, id, newSessionID(now))
}
