package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/transcript"
)

func TestTranscriptFlag(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags(nil, env(nil))
	require.NoError(t, err)
	require.Empty(t, m.Transcript)
	m, err = ParseFlags(nil, env(map[string]string{"LONGRUN_TRANSCRIPT_DIR": "/srv/transcript"}))
	require.NoError(t, err)
	require.Equal(t, "/srv/transcript", m.Transcript)
	m, err = ParseFlags([]string{"--transcript", "off"}, env(map[string]string{"LONGRUN_TRANSCRIPT_DIR": "/srv/transcript"}))
	require.NoError(t, err)
	require.Equal(t, "off", m.Transcript, "the flag wins over the environment")
}

func TestOpenTranscript(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	store, dir, err := openTranscript("", root)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, ".longrun", "transcript"), dir)
	require.DirExists(t, dir)
	ctx := context.Background()
	head, err := transcript.Append(ctx, store, "", []conversation.Message{{Role: conversation.RoleUser, Content: "hi"}})
	require.NoError(t, err)
	h := head[len("sha256:"):]
	require.FileExists(t, filepath.Join(dir, h[:2], h), "the cache writes through to the directory")

	other := filepath.Join(t.TempDir(), "shared")
	_, dir, err = openTranscript(other, root)
	require.NoError(t, err)
	require.Equal(t, other, dir)

	store, _, err = openTranscript("off", root)
	require.NoError(t, err)
	require.Nil(t, store)
}
