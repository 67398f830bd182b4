package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// --push-remote (or LONGRUN_PUSH_REMOTE) turns publishing on; the token
// comes from LONGRUN_FORGE_TOKEN or a file, never a flag; without a
// token the worker refuses to start, naming the setting.
func TestPushFlags(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags(nil, env(nil))
	require.NoError(t, err)
	require.Nil(t, m.push.forge(), "nothing is published by default")

	_, err = ParseFlags([]string{"--push-remote", "origin"}, env(nil))
	require.ErrorContains(t, err, "LONGRUN_FORGE_TOKEN")

	m, err = ParseFlags([]string{"--push-remote", "origin", "--console-url", "http://console.test/"}, env(map[string]string{
		"LONGRUN_FORGE_TOKEN": "tok-env", "LONGRUN_FORGE": "gitea", "LONGRUN_FORGE_API_URL": "https://gitea.test/api/v1/",
	}))
	require.NoError(t, err)
	f := m.push.forge()
	require.NotNil(t, f)
	require.Equal(t, "origin", f.Remote)
	require.Equal(t, "gitea", f.Kind)
	require.Equal(t, "tok-env", f.Token)
	require.Equal(t, "http://console.test/", f.ConsoleURL)
	require.NotContains(t, f.String(), "tok-env")

	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte("tok-file\n"), 0o600))
	m, err = ParseFlags([]string{"--forge-token-file", file}, env(map[string]string{"LONGRUN_PUSH_REMOTE": "https://forge.test/acme/app.git"}))
	require.NoError(t, err)
	require.Equal(t, "tok-file", m.push.forge().Token)

	m, err = ParseFlags([]string{"--push-remote", "origin", "--forge", "gitlab", "--forge-repo", "acme/tools/app"}, env(map[string]string{"LONGRUN_FORGE_TOKEN": "t"}))
	require.NoError(t, err)
	require.Equal(t, "gitlab", m.push.forge().Kind)
	require.Contains(t, m.push.forge().String(), "https://gitlab.com/api/v4/")
	_, err = ParseFlags([]string{"--push-remote", "origin", "--forge", "gitlab", "--forge-repo", "app"}, env(map[string]string{"LONGRUN_FORGE_TOKEN": "t"}))
	require.ErrorContains(t, err, "GROUP/NAME")
}
