package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClientDefaults(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags(nil, env(nil))
	require.NoError(t, err)
	opts, err := m.Temporal.clientOptions()
	require.NoError(t, err)
	require.Equal(t, "localhost:7233", opts.HostPort)
	require.Equal(t, "default", opts.Namespace)
	require.Nil(t, opts.Credentials)
	require.Nil(t, opts.ConnectionOptions.TLS)
}

// Today's variables and flags keep working, and an API key still turns on
// TLS, as before envconfig.
func TestClientFromEnvironmentAndFlags(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags([]string{"--namespace", "flag-ns"}, env(map[string]string{
		"TEMPORAL_ADDRESS": "temporal.example:7233", "TEMPORAL_NAMESPACE": "env-ns", "TEMPORAL_API_KEY": "k",
	}))
	require.NoError(t, err)
	opts, err := m.Temporal.clientOptions()
	require.NoError(t, err)
	require.Equal(t, "temporal.example:7233", opts.HostPort)
	require.Equal(t, "flag-ns", opts.Namespace)
	require.NotNil(t, opts.Credentials)
	require.NotNil(t, opts.ConnectionOptions.TLS)
}

func TestClientProfileFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "temporal.toml")
	require.NoError(t, os.WriteFile(file, []byte(`
[profile.prod]
address = "prod.example:7233"
namespace = "prod"
[profile.prod.tls]
server_name = "prod.internal"
[profile.prod.grpc_meta]
x-tenant = "longrun"
`), 0o600))

	m, err := ParseFlags([]string{"--config-file", file, "--temporal-profile", "prod"}, env(nil))
	require.NoError(t, err)
	opts, err := m.Temporal.clientOptions()
	require.NoError(t, err)
	require.Equal(t, "prod.example:7233", opts.HostPort)
	require.Equal(t, "prod", opts.Namespace)
	require.Equal(t, "prod.internal", opts.ConnectionOptions.TLS.ServerName)
	require.NotNil(t, opts.HeadersProvider)

	m, err = ParseFlags([]string{"--address", "127.0.0.1:7233"}, env(map[string]string{"TEMPORAL_CONFIG_FILE": file, "TEMPORAL_PROFILE": "prod"}))
	require.NoError(t, err)
	opts, err = m.Temporal.clientOptions()
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:7233", opts.HostPort, "a flag wins over the profile")

	m, err = ParseFlags([]string{"--config-file", file, "--temporal-profile", "staging"}, env(nil))
	require.NoError(t, err)
	_, err = m.Temporal.clientOptions()
	require.ErrorContains(t, err, "unable to find profile staging")
}
