package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCommandEnvStripsCredentials cannot be parallel (t.Setenv). The Go
// settings a command gets lose the user:password@ of their URLs, and a
// variable named like a credential never passes from the allowlist; the
// worker's configuration can still pass either by name. Before, `go env
// GOPROXY` in a command printed the proxy's password.
func TestCommandEnvStripsCredentials(t *testing.T) {
	for name, value := range map[string]string{
		"GOPROXY":    "https://alice:pw-proxy@proxy.corp.example/go,https://proxy.golang.org,direct",
		"GOSUMDB":    "sum.corp+key https://bob:pw-sum@sum.corp.example",
		"GONOSUMDB":  "corp.example/*",
		"GOINSECURE": "git.corp.example",
		"GOAUTH":     "netrc",
		"GOFLAGS":    "-mod=mod",
	} {
		t.Setenv(name, value)
	}
	env := strings.Join(commandEnv(ShellConfig{}), "\n") + "\n"
	require.NotContains(t, env, "pw-proxy")
	require.NotContains(t, env, "pw-sum")
	require.NotContains(t, env, "GOAUTH")
	for _, want := range []string{
		"GOPROXY=https://proxy.corp.example/go,https://proxy.golang.org,direct\n",
		"GOSUMDB=sum.corp+key https://sum.corp.example\n",
		"GONOSUMDB=corp.example/*\n", "GOINSECURE=git.corp.example\n", "GOFLAGS=-mod=mod\n",
	} {
		require.Contains(t, env, want)
	}
	passed := strings.Join(commandEnv(ShellConfig{PassEnv: []string{"GOPROXY"}}), "\n")
	require.Contains(t, passed, "GOPROXY=https://alice:pw-proxy@proxy.corp.example/go,", "a variable passed by name passes as it is")

	for _, name := range []string{"GITHUB_TOKEN", "DB_PASSWORD", "SIGNING_KEY", "APP_SECRET", "GOAUTH"} {
		require.True(t, isSecret(name, envCredentialNames), name)
	}
	require.False(t, isSecret("GOPROXY", envCredentialNames))
	require.Equal(t, "s3://bucket/x ssh://host/y", stripUserinfo("s3://k:s@bucket/x ssh://git@host/y"))
}

// TestHostModuleCacheIsReadOnlyEvenWithTheNetwork: an approved command
// of a session that allows the network (the case that was writable) can
// neither write nor chmod a file of the host's module cache; its go
// command uses the worker's own module cache, with the host's download
// cache as the first proxy. Before, `chmod u+w` and an append rewrote a
// cached dependency the person's next plain `go run` used.
func TestHostModuleCacheIsReadOnlyEvenWithTheNetwork(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	sb := hostSandbox().sb
	if sb.goModCache == "" {
		t.Skip("SKIPPED LOUDLY: no go command on the PATH, so no host module cache to protect")
	}
	requirePasta(t)
	mark := randomName(t)
	dir := filepath.Join(sb.goModCache, "cache", "download", "longrun.test", mark)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755); os.RemoveAll(filepath.Dir(dir)) })
	planted := filepath.Join(dir, "v1.0.0.mod")
	require.NoError(t, os.WriteFile(planted, []byte("module longrun.test/"+mark+"\n"), 0o444))

	ws := testWorkspace(t, nil)
	state := t.TempDir()
	sh := NewShell(ShellConfig{Sandbox: SandboxOn})
	sh.stateDir = state
	res := runTool(t, context.Background(), sh, Env{Workspace: ws, AllowNetwork: true}, ShellParams{Timeout: 60, Command: `
chmod u+w ` + planted + ` 2>&1; echo trojan >> ` + planted + ` 2>&1; rm -f ` + planted + ` 2>&1
echo "MODCACHE=$(go env GOMODCACHE)"; echo "PROXY=$(go env GOPROXY)"`})
	got, err := os.ReadFile(planted)
	require.NoError(t, err)
	require.Equal(t, "module longrun.test/"+mark+"\n", string(got), res.Content)
	fi, err := os.Stat(planted)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o444), fi.Mode().Perm(), "not even chmod reaches the host's cache")
	require.Contains(t, res.Content, "Read-only file system")
	own := realDir(filepath.Join(state, "go-mod"))
	require.NotEmpty(t, own)
	require.Contains(t, res.Content, "MODCACHE="+own+"\n")
	require.Contains(t, res.Content, "PROXY=file://"+filepath.Join(sb.goModCache, "cache", "download")+",")
}
