package main

import (
	"encoding/base64"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWorkerHidesWhatItKnowsAbout cannot be parallel (t.Setenv). Every
// existing file and directory the worker's flags and LONGRUN_* /
// TEMPORAL_* variables name reaches tools.Config.HidePaths, which every
// sandbox hides: the encryption keys, a checkpoint remote on disk (as a
// path or a file:// URL), the transcript store, TLS files, the Temporal
// config file. The workspace, a directory holding it, system directories
// and programs are not hidden: sessions need them.
func TestWorkerHidesWhatItKnowsAbout(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	keys := path("keys")
	require.NoError(t, os.WriteFile(keys, []byte("k1="+base64.StdEncoding.EncodeToString(make([]byte, 32))+"\n"), 0o600))
	for _, d := range []string{"remote.git", "transcripts", "ws", "tls", "bin"} {
		require.NoError(t, os.MkdirAll(path(d), 0o700))
	}
	for _, f := range []string{"tls/client.key", "tls/client.pem", "temporal.toml"} {
		require.NoError(t, os.WriteFile(path(f), []byte("x"), 0o600))
	}
	require.NoError(t, os.WriteFile(path("bin/gopls"), []byte("#!/bin/sh\n"), 0o755))
	t.Setenv("TEMPORAL_TLS_CLIENT_KEY_PATH", path("tls/client.key"))
	t.Setenv("TEMPORAL_TLS_CLIENT_CERT_PATH", path("tls/client.pem"))
	t.Setenv("LONGRUN_GOPLS", path("bin/gopls"))
	t.Setenv("LONGRUN_SOMETHING", "file://"+path("remote.git")+","+dir+"/missing")
	t.Setenv("LONGRUN_WIDE", dir) // holds the workspace: not hidden

	m, err := ParseFlags([]string{"--encryption-keys", keys, "--checkpoint-remote", path("remote.git"),
		"--transcript", path("transcripts"), "--config-file", path("temporal.toml"),
		"--state-dir", path("state"), "--config", path("config"), "--workspace", path("ws")}, os.Getenv)
	require.NoError(t, err)
	_, err = m.prepare(path("ws"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	got := m.Tools.HidePaths
	for _, want := range []string{keys, path("remote.git"), path("transcripts"), path("temporal.toml"), path("tls/client.key"), path("tls/client.pem")} {
		require.Contains(t, got, want)
	}
	for _, p := range got {
		require.False(t, strings.HasPrefix(path("ws"), p), "%s holds the workspace", p)
		require.NotEqual(t, path("bin/gopls"), p, "a program is not hidden")
		require.NotContains(t, systemDirs, p)
	}
}
