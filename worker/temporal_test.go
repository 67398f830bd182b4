package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
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

// gzip only pays across a network: auto leaves requests to a loopback
// server uncompressed and compresses the rest; the flag and the variable
// override it, and a bad value is refused.
func TestGRPCCompression(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		vars map[string]string
		want any
	}{
		{nil, nil, &client.GrpcCompressionNone{}}, // localhost:7233
		{[]string{"--address", "127.0.0.1:7233"}, nil, &client.GrpcCompressionNone{}},
		{[]string{"--address", "[::1]:7233"}, nil, &client.GrpcCompressionNone{}},
		{[]string{"--address", "temporal.example:7233"}, nil, &client.GrpcCompressionGzip{}},
		{[]string{"--address", "10.0.0.5:7233"}, nil, &client.GrpcCompressionGzip{}},
		{[]string{"--grpc-compression", "gzip"}, nil, &client.GrpcCompressionGzip{}},
		{nil, map[string]string{"LONGRUN_GRPC_COMPRESSION": "gzip"}, &client.GrpcCompressionGzip{}},
		{[]string{"--address", "temporal.example:7233", "--grpc-compression", "none"}, nil, &client.GrpcCompressionNone{}},
	} {
		m, err := ParseFlags(tc.args, env(tc.vars))
		require.NoError(t, err)
		opts, err := m.Temporal.clientOptions()
		require.NoError(t, err, tc.args)
		require.IsType(t, tc.want, opts.ConnectionOptions.GrpcCompression, "%v %v", tc.args, tc.vars)
	}
	m, err := ParseFlags([]string{"--grpc-compression", "zstd"}, env(nil))
	require.NoError(t, err)
	_, err = m.Temporal.clientOptions()
	require.ErrorContains(t, err, `--grpc-compression "zstd": want auto, gzip or none`)
}
