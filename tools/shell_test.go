package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestShell(t *testing.T) {
	t.Parallel()
	ws := testWorkspace(t, map[string]string{"sub/f.txt": "in sub\n"})
	sh := NewShell(ShellConfig{OutputLimit: 1000})
	tests := []struct {
		name     string
		args     ShellParams
		isError  bool
		contains []string
		excludes []string
	}{
		{name: "exit 0", args: ShellParams{Command: "echo hello"}, contains: []string{"hello\n[exit code 0, "}},
		{name: "exit 3", args: ShellParams{Command: "echo oops >&2; exit 3"}, isError: true,
			contains: []string{"oops\n", "[exit code 3, "}},
		{name: "interleaved", args: ShellParams{Command: "echo a; echo b >&2; echo c"},
			contains: []string{"a\nb\nc\n[exit code 0"}},
		{name: "workdir", args: ShellParams{Command: "cat f.txt; pwd", Workdir: "sub"},
			contains: []string{"in sub\n", filepath.Join(ws.Root(), "sub") + "\n"}},
		{name: "workdir outside", args: ShellParams{Command: "pwd", Workdir: "../"}, isError: true,
			contains: []string{"outside the workspace"}},
		{name: "workdir missing", args: ShellParams{Command: "pwd", Workdir: "nope"}, isError: true,
			contains: []string{`workdir "nope" is not an existing directory`}},
		{name: "stdin is empty", args: ShellParams{Command: "cat; echo done"}, contains: []string{"done\n[exit code 0"}},
		{name: "pager env", args: ShellParams{Command: "echo $TERM $PAGER $GIT_PAGER"}, contains: []string{"dumb cat cat\n"}},
		{name: "truncation keeps head and tail", args: ShellParams{Command: "echo START; seq 1 5000; echo END"},
			contains: []string{"START\n1\n", "characters dropped] ...", "5000\nEND\n[full output (", " bytes) saved to /"},
			excludes: []string{"\n2500\n"}},
		// Unsandboxed bash's wait status says signal; in the sandbox bwrap
		// reports 128+9 and the footer names the likely signal.
		{name: "killed by signal", args: ShellParams{Command: "kill -KILL $$"}, isError: true,
			contains: []string{"killed by signal killed"}},
		{name: "no trailing newline", args: ShellParams{Command: "printf x"}, contains: []string{"x\n[exit code 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := runTool(t, context.Background(), sh, Env{Workspace: ws}, tt.args)
			require.Equal(t, tt.isError, res.IsError, res.Content)
			for _, s := range tt.contains {
				require.Contains(t, res.Content, s)
			}
			for _, s := range tt.excludes {
				require.NotContains(t, res.Content, s)
			}
			// The limit, the footer, and a cut result's note naming
			// the absolute path of the saved output.
			require.Less(t, len(res.Content), 1400)
		})
	}
}

// pidAlive reports whether a process exists (and is not a zombie we could
// still signal: kill(0) succeeds on zombies, so check /proc state too).
func pidAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(data))
	return len(fields) < 3 || fields[2] != "Z"
}

// childPIDs reads the PIDs a command printed, one per line, before the footer.
func childPIDs(t *testing.T, out string) []int {
	t.Helper()
	var pids []int
	for _, line := range strings.Split(out, "\n") {
		if n, err := strconv.Atoi(strings.TrimPrefix(line, "pid ")); err == nil && strings.HasPrefix(line, "pid ") {
			pids = append(pids, n)
		}
	}
	return pids
}

// shellModes are the sandbox modes the process tests run in: always off,
// and on when bwrap works here, so process-group handling is checked both
// with bash as our child and with bash inside bwrap's pid namespace.
func shellModes(t *testing.T) []SandboxMode {
	t.Helper()
	if p := hostSandbox(); p.sb == nil {
		t.Logf("sandboxed variants skipped: %s", p.why)
		return []SandboxMode{SandboxOff}
	}
	return []SandboxMode{SandboxOff, SandboxOn}
}

// groupMembers returns the live processes whose process group is pgid.
func groupMembers(pgid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, en := range entries {
		pid, err := strconv.Atoi(en.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + en.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		rest := string(data[strings.LastIndexByte(string(data), ')')+1:])
		f := strings.Fields(rest)
		if len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// watchGroup makes sh report the process group of the command it runs and
// records, by polling /proc, every process seen in that group. The
// returned function stops watching and gives the group and the processes.
// Host pids are what count: inside the sandbox a command's $$ is a pid of
// its own namespace.
func watchGroup(sh *Shell) func() (int, []int) {
	var (
		mu   sync.Mutex
		pgid int
		seen = map[int]bool{}
	)
	quit := make(chan struct{})
	done := make(chan struct{})
	sh.onStart = func(g int) {
		mu.Lock()
		pgid = g
		mu.Unlock()
		go func() {
			defer close(done)
			for {
				for _, p := range groupMembers(g) {
					mu.Lock()
					seen[p] = true
					mu.Unlock()
				}
				select {
				case <-quit:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		}()
	}
	return func() (int, []int) {
		close(quit)
		mu.Lock()
		started := pgid != 0
		mu.Unlock()
		if started {
			<-done
		}
		mu.Lock()
		defer mu.Unlock()
		var pids []int
		for p := range seen {
			pids = append(pids, p)
		}
		return pgid, pids
	}
}

// requireGroupGone checks that none of the processes seen in the group
// survives and that the group itself is empty.
func requireGroupGone(t *testing.T, pgid int, pids []int) {
	t.Helper()
	require.NotZero(t, pgid)
	requireDead(t, pids)
	require.Eventually(t, func() bool { return len(groupMembers(pgid)) == 0 },
		3*time.Second, 20*time.Millisecond, "process group %d still has members", pgid)
}

func requireDead(t *testing.T, pids []int) {
	t.Helper()
	require.NotEmpty(t, pids)
	require.Eventually(t, func() bool {
		for _, p := range pids {
			if pidAlive(p) {
				return false
			}
		}
		return true
	}, 3*time.Second, 20*time.Millisecond, "processes %v survived", pids)
}

func TestShellTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		command string
		signal  string
		maxTime time.Duration
		procs   int // at least this many processes are seen in the group
	}{
		// bash execs the last command, so sleep is the only process.
		{name: "sleep", command: "echo pid $$; sleep 60", signal: "SIGTERM", maxTime: 3 * time.Second, procs: 1},
		{name: "background child", command: "sleep 60 & echo pid $!; echo pid $$; sleep 60", signal: "SIGTERM", maxTime: 3 * time.Second, procs: 2},
		{name: "ignores SIGTERM", command: "trap '' TERM; echo pid $$; sleep 60 & echo pid $!; while :; do sleep 0.1; done",
			signal: "SIGKILL", maxTime: 5 * time.Second, procs: 2},
	}
	for _, mode := range shellModes(t) {
		for _, tt := range tests {
			t.Run(string(mode)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				ws := testWorkspace(t, nil)
				sh := NewShell(ShellConfig{Sandbox: mode})
				watched := watchGroup(sh)
				start := time.Now()
				res := runTool(t, context.Background(), sh, Env{Workspace: ws},
					ShellParams{Command: tt.command, Timeout: 1})
				require.Less(t, time.Since(start), tt.maxTime)
				require.True(t, res.IsError)
				require.Contains(t, res.Content, "[killed by "+tt.signal+" after timeout 1s]")
				pgid, pids := watched()
				require.GreaterOrEqual(t, len(pids), tt.procs, "processes seen in group %d", pgid)
				requireGroupGone(t, pgid, pids)
				if mode == SandboxOff {
					requireDead(t, childPIDs(t, res.Content))
				}
			})
		}
	}
}

func TestShellBackgroundChildDiesAfterExit(t *testing.T) {
	t.Parallel()
	for _, mode := range shellModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			ws := testWorkspace(t, nil)
			sh := NewShell(ShellConfig{Sandbox: mode})
			watched := watchGroup(sh)
			start := time.Now()
			res := runTool(t, context.Background(), sh, Env{Workspace: ws},
				ShellParams{Command: "sleep 60 & echo pid $!; sleep 0.2; echo started"})
			require.Less(t, time.Since(start), 3*time.Second)
			require.False(t, res.IsError, res.Content)
			require.Contains(t, res.Content, "started\n[exit code 0")
			pgid, pids := watched()
			requireGroupGone(t, pgid, pids)
			if mode == SandboxOff {
				requireDead(t, childPIDs(t, res.Content))
			}
		})
	}
}

func TestShellCancel(t *testing.T) {
	t.Parallel()
	for _, mode := range shellModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			testShellCancel(t, mode)
		})
	}
}

func testShellCancel(t *testing.T, mode SandboxMode) {
	ws := testWorkspace(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var beats []string
	env := Env{Workspace: ws, Heartbeat: func(p string) {
		mu.Lock()
		defer mu.Unlock()
		beats = append(beats, p)
	}}
	go func() {
		// No require here: FailNow must not run outside the test goroutine.
		defer cancel()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			ready := len(beats) > 0 && strings.Contains(beats[len(beats)-1], "ready")
			mu.Unlock()
			if ready {
				return
			}
		}
	}()
	start := time.Now()
	raw, err := json.Marshal(ShellParams{Command: "sleep 60 & echo pid $!; echo pid $$; echo ready; sleep 60"})
	require.NoError(t, err)
	sh := NewShell(ShellConfig{Sandbox: mode})
	watched := watchGroup(sh)
	res, err := sh.Run(ctx, env, raw)
	require.NoError(t, err)
	require.Less(t, time.Since(start), 5*time.Second)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "ready\n[cancelled: process group killed]")
	pgid, pids := watched()
	require.GreaterOrEqual(t, len(pids), 2, "bash and sleep should have been seen in group %d", pgid)
	requireGroupGone(t, pgid, pids)
	if mode == SandboxOff {
		requireDead(t, childPIDs(t, res.Content))
	}
}

func TestShellCancelledBeforeStart(t *testing.T) {
	t.Parallel()
	ws := testWorkspace(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := runTool(t, ctx, NewShell(DefaultShellConfig()), Env{Workspace: ws}, ShellParams{Command: "touch x"})
	require.True(t, res.IsError)
	_, err := os.Stat(filepath.Join(ws.Root(), "x"))
	require.True(t, os.IsNotExist(err))
}

// TestShellEnvAllowlist cannot be parallel: t.Setenv changes the process
// environment. A command gets the allowlisted variables and what PassEnv
// names, nothing else of the worker's: with the old denylist,
// AWS_ACCESS_KEY_ID and LONGRUN_SECRET_X reached the command.
func TestShellEnvAllowlist(t *testing.T) {
	secret := "LONGRUN_SECRET_" + strings.ToUpper(strings.ReplaceAll(randomName(t), "-", "_"))
	for name, value := range map[string]string{
		"AWS_ACCESS_KEY_ID":              "aws-123",
		"OPENAI_API_KEY":                 "sk-456",
		"TEMPORAL_API_KEY":               "tmp-789",
		"LONGRUN_NOTIFY":                 "http://hook.example/nt-1",
		"LONGRUN_NOTIFY_SLACK":           "http://hook.example/ns-2",
		"LONGRUN_NOTIFY_SECRET":          "nsec-3",
		"TEMPORAL_ADDRESS":               "temporal-addr:7233",
		"GOOGLE_APPLICATION_CREDENTIALS": "/creds-g.json",
		secret:                           "x-000",
		"LONGRUN_PASSED":                 "passed-ok",
		"GOFLAGS":                        "-mod=mod",
		"LANG":                           "C.UTF-8",
		"PAGER":                          "less",
	} {
		t.Setenv(name, value)
	}
	ws := testWorkspace(t, nil)
	cfg := ShellConfig{PassEnv: []string{"LONGRUN_PASSED", "OPENAI_API_KEY", "LONGRUN_SET=set-ok", "LONGRUN_UNSET",
		"LONGRUN_NOTIFY", "LONGRUN_NOTIFY_SLACK", "LONGRUN_NOTIFY_SECRET"}}
	for _, mode := range shellModes(t) {
		cfg.Sandbox = mode
		res := runTool(t, context.Background(), NewShell(cfg), Env{Workspace: ws}, ShellParams{Command: "env"})
		require.False(t, res.IsError, res.Content)
		for _, leaked := range []string{"aws-123", "sk-456", "tmp-789", "temporal-addr", "creds-g", "x-000", "PAGER=less", "LONGRUN_UNSET", "nt-1", "ns-2", "nsec-3"} {
			require.NotContains(t, res.Content, leaked, "sandbox %s", mode)
		}
		for _, want := range []string{"\nPATH=/", "\nLANG=C.UTF-8\n", "\nGOFLAGS=-mod=mod\n", "\nLONGRUN_PASSED=passed-ok\n",
			"\nLONGRUN_SET=set-ok\n", "\nTERM=dumb\n", "\nPAGER=cat\n", "\nHOME=/"} {
			require.Contains(t, "\n"+res.Content, want, "sandbox %s", mode)
		}
	}
}

func TestCappedBuffer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		limit  int
		writes []string
		want   string
	}{
		{name: "fits", limit: 10, writes: []string{"abc", "de"}, want: "abcde"},
		{name: "exactly", limit: 4, writes: []string{"ab", "cd"}, want: "abcd"},
		{name: "drops middle", limit: 4, writes: []string{"ab", "cdef", "gh"}, want: "ab\n... [4 characters dropped] ...\ngh"},
		{name: "many small writes", limit: 6, writes: strings.Split("abcdefghijklmnop", ""), want: "abc\n... [10 characters dropped] ...\nnop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newCappedBuffer(tt.limit)
			for _, w := range tt.writes {
				c.Write([]byte(w))
			}
			require.Equal(t, tt.want, c.String())
		})
	}
}
