package gitsafe

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// HostEnvFor neutralises the program-naming keys of every repository it
// is given, each once: a fetch from a session's repository into the
// person's runs git upload-pack in the session's, with the environment
// the fetch was given.
func TestHostEnvForNeutralisesEveryRepository(t *testing.T) {
	t.Parallel()
	repo := func(config string) string {
		dir := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "config"), []byte(config), 0o644))
		return dir
	}
	person := repo("[filter \"lfs\"]\n\tclean = git-lfs clean\n[core]\n\tsshCommand = evil-ssh\n")
	session := repo("[diff \"x\"]\n\ttextconv = evil-textconv\n[core]\n\tsshCommand = other-ssh\n")
	env, err := HostEnvFor(person, HostLocal, session)
	require.NoError(t, err)
	keys := map[string]int{}
	for _, kv := range env {
		if name, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(name, "GIT_CONFIG_KEY_") {
			keys[v]++
		}
	}
	require.Equal(t, 1, keys["filter.lfs.clean"], "the person's filter")
	require.Equal(t, 1, keys["diff.x.textconv"], "the session's textconv")
	require.Equal(t, 2, keys["core.sshCommand"]+keys["core.sshcommand"], "named by both: once from their configuration, once by hostLocal")

	alone, err := HostEnv(person, HostLocal)
	require.NoError(t, err)
	require.NotContains(t, strings.Join(alone, "\n"), "diff.x.textconv", "HostEnv reads only its own repository")
}

// WithConfig adds keys after HostEnv's, counted, so git reads them all:
// a real git sees the added key.
func TestWithConfigAddsKeysGitReads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env, err := HostEnv(dir, HostLocal)
	require.NoError(t, err)
	env = WithConfig(env, [2]string{"http.https://example.test/.extraheader", "X-Test: yes"})
	cmd := exec.Command("git", "config", "--get", "http.https://example.test/.extraheader")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.Output()
	require.NoError(t, err)
	require.Equal(t, "X-Test: yes\n", string(out))
	cmd = exec.Command("git", "config", "--get", "core.hooksPath")
	cmd.Dir, cmd.Env = dir, env
	out, err = cmd.Output()
	require.NoError(t, err)
	require.Equal(t, "/dev/null\n", string(out), "HostEnv's own keys still hold")
}
