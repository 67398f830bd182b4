package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/contrib/envconfig"

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

	fs = flag.NewFlagSet("start", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o, err = parseStart(fs, []string{"--approval", "guardian", "--worker-lost-after", "30s", "p"})
	require.NoError(t, err)
	require.Equal(t, workflows.ApproverGuardian, o.input.Approval)
	require.Equal(t, workflows.Duration(30*time.Second), o.input.WorkerLostAfter)
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
		"worker lost at 0":  {"--worker-lost-after", "0s", "p"},
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
		getenv: func(k string) string { return cmp.Or(env[k], noEnv(k)) },
		dial: func(_ context.Context, cfg config) (sessionClient, error) {
			got = cfg
			return nil, errors.New("stop here")
		},
	}
	// --namespace before the command, --task-queue after it: both apply.
	code := a.run(context.Background(), []string{"--namespace", "flagns", "status", "s1", "--task-queue", "q-flag", "--json"})
	require.Equal(t, exitFailure, code)
	require.Equal(t, "temporal.example:7233", got.Address)
	require.Equal(t, "flagns", got.Namespace)
	require.Equal(t, "q-flag", got.TaskQueue)
	require.True(t, got.JSON)
	opts, err := got.client.ToClientOptions(envconfig.ToClientOptionsRequest{})
	require.NoError(t, err)
	require.Equal(t, "temporal.example:7233", opts.HostPort)
	require.Equal(t, "flagns", opts.Namespace)
	require.NotNil(t, opts.Credentials, "TEMPORAL_API_KEY is sent")
	require.NotNil(t, opts.ConnectionOptions.TLS, "an API key turns TLS on")
}

// resolve runs the CLI with env and returns the config it would dial.
func resolve(t *testing.T, env map[string]string, args ...string) (config, int, string) {
	t.Helper()
	var got config
	var errb bytes.Buffer
	a := &app{
		stdout: io.Discard, stderr: &errb,
		getenv: func(k string) string { return cmp.Or(env[k], noEnv(k)) },
		dial: func(_ context.Context, cfg config) (sessionClient, error) {
			got = cfg
			return nil, errors.New("stop here")
		},
	}
	code := a.run(context.Background(), append(args, "status", "s1"))
	return got, code, errb.String()
}

func TestDefaultConfig(t *testing.T) {
	t.Parallel()
	// An empty config file, so the test does not read the user's own.
	got, _, _ := resolve(t, map[string]string{"TEMPORAL_CONFIG_FILE": filepath.Join(t.TempDir(), "none.toml")})
	require.Equal(t, "localhost:7233", got.Address)
	require.Equal(t, "default", got.Namespace)
	require.Equal(t, "longrun", got.TaskQueue)
	opts, err := got.client.ToClientOptions(envconfig.ToClientOptionsRequest{})
	require.NoError(t, err)
	require.Nil(t, opts.ConnectionOptions.TLS)
	require.Nil(t, opts.Credentials)
}

// The temporal CLI's config file and profiles work, with the environment
// over the file and flags over both, as in the temporal CLI.
func TestConfigProfiles(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "temporal.toml")
	require.NoError(t, os.WriteFile(file, []byte(`
[profile.default]
address = "file-default:7233"
namespace = "ns-default"

[profile.cloud]
address = "my-ns.a1b2c.tmprl.cloud:7233"
namespace = "my-ns.a1b2c"
api_key = "file-key"
`), 0o600))

	got, _, _ := resolve(t, map[string]string{"TEMPORAL_CONFIG_FILE": file})
	require.Equal(t, "file-default:7233", got.Address)
	require.Equal(t, "ns-default", got.Namespace)

	got, _, _ = resolve(t, map[string]string{"TEMPORAL_CONFIG_FILE": file, "TEMPORAL_PROFILE": "cloud", "TEMPORAL_NAMESPACE": "env-ns"})
	require.Equal(t, "my-ns.a1b2c.tmprl.cloud:7233", got.Address)
	require.Equal(t, "env-ns", got.Namespace, "environment over file")
	require.Equal(t, "file-key", got.client.APIKey)

	got, _, _ = resolve(t, map[string]string{}, "--config-file", file, "--temporal-profile", "cloud", "--address", "flag:1")
	require.Equal(t, "flag:1", got.Address, "flag over file")
	require.Equal(t, "my-ns.a1b2c", got.Namespace)

	_, code, stderr := resolve(t, map[string]string{"TEMPORAL_CONFIG_FILE": file, "TEMPORAL_PROFILE": "nope"})
	require.Equal(t, exitFailure, code)
	require.Contains(t, stderr, "unable to find profile nope")
}

// TEMPORAL_TLS=yes turned TLS on before envconfig, which knows only
// true/false/1/0: it still does.
func TestTLSFromEnvironment(t *testing.T) {
	t.Parallel()
	none := filepath.Join(t.TempDir(), "none.toml")
	for _, v := range []string{"yes", "true", "1"} {
		got, _, _ := resolve(t, map[string]string{"TEMPORAL_CONFIG_FILE": none, "TEMPORAL_TLS": v, "TEMPORAL_TLS_SERVER_NAME": "tmprl.example"})
		opts, err := got.client.ToClientOptions(envconfig.ToClientOptionsRequest{})
		require.NoError(t, err)
		require.NotNil(t, opts.ConnectionOptions.TLS, v)
		require.Equal(t, "tmprl.example", opts.ConnectionOptions.TLS.ServerName)
	}
}

// A mistyped command or flag gets one line naming the closest one and
// where help is, not the usage screen.
func TestTyposGetADidYouMean(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"command, two letters swapped", []string{"stauts", "s1"}, `longrun: unknown command "stauts", did you mean "status"? longrun help lists the commands` + "\n"},
		{"command, a letter missing", []string{"aprove", "s1"}, `did you mean "approve"?`},
		{"command, nothing close", []string{"frobnicate"}, `longrun: unknown command "frobnicate"; longrun help lists the commands` + "\n"},
		{"global flag", []string{"--adress", "h:1", "list"}, `longrun: unknown flag --adress, did you mean "--address"? longrun help lists the commands and global flags` + "\n"},
		{"command flag", []string{"start", "--alow", "shell:x", "hi"}, `longrun start: unknown flag --alow, did you mean "--allow"?`},
		{"subcommand flag", []string{"schedule", "create", "--evry", "1h", "n"}, `longrun schedule create: unknown flag --evry, did you mean "--every"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runFake(t, &fakeClient{}, tc.args...)
			require.Equal(t, exitUsage, code)
			require.Empty(t, stdout)
			require.Contains(t, stderr, tc.want)
			require.LessOrEqual(t, strings.Count(stderr, "\n"), 3, "a line or three, not the usage screen:\n%s", stderr)
		})
	}
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
				getenv: noEnv,
				dial: func(context.Context, config) (sessionClient, error) {
					dialed = true
					return nil, errors.New("no server in this test")
				},
			}
			code := a.run(context.Background(), tc.args)
			require.Equal(t, tc.code, code, "stdout=%s stderr=%s", out.String(), errb.String())
			if tc.code == exitUsage {
				require.False(t, dialed, "usage errors are caught before dialing")
				require.Regexp(t, `Usage: |longrun help lists`, errb.String(), "it says where help is")
				require.NotContains(t, errb.String(), "Flags:", "help only on request: no flag list")
				require.NotContains(t, errb.String(), "Commands:", "help only on request: no command list")
			}
		})
	}
}

func TestDialErrorIsReported(t *testing.T) {
	t.Parallel()
	var errb bytes.Buffer
	a := &app{
		stdout: io.Discard, stderr: &errb,
		getenv: noEnv,
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
