package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/codec"
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
	m, err = ParseFlags(nil, env(map[string]string{"LONGRUN_TRANSCRIPT_DIR": "s3://transcripts/team?endpoint=minio:9000"}))
	require.NoError(t, err)
	require.Equal(t, "s3://transcripts/team?endpoint=minio:9000", m.Transcript, "the environment takes the URL form too")
}

func TestOpenTranscript(t *testing.T) {
	t.Parallel()
	root := t.TempDir() // the state directory
	store, dir, err := openTranscript("", root, nil)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, "transcript"), dir, "the default is the state directory's")
	require.DirExists(t, dir)
	ctx := context.Background()
	head, err := transcript.Append(ctx, store, "", []conversation.Message{{Role: conversation.RoleUser, Content: "hi"}})
	require.NoError(t, err)
	h := head[len("sha256:"):]
	require.FileExists(t, filepath.Join(dir, h[:2], h), "the cache writes through to the directory")

	other := filepath.Join(t.TempDir(), "shared")
	_, dir, err = openTranscript(other, root, nil)
	require.NoError(t, err)
	require.Equal(t, other, dir)

	store, _, err = openTranscript("off", root, nil)
	require.NoError(t, err)
	require.Nil(t, store)

	_, _, err = openTranscript("s3://transcripts?endpiont=minio:9000", root, nil)
	require.ErrorContains(t, err, `--transcript: transcript store "s3://transcripts?endpiont=minio:9000": unknown parameter "endpiont"`)
}

// TestOpenTranscriptS3 opens a bucket as the worker does at start-up, the
// credentials in the standard variables. Not parallel: it sets them.
func TestOpenTranscriptS3(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test-key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket("transcripts"))
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	defer srv.Close()
	endpoint := strings.TrimPrefix(srv.URL, "http://")
	root := t.TempDir()

	store, where, err := openTranscript("s3://transcripts/longrun?insecure=1&endpoint="+endpoint, root, nil)
	require.NoError(t, err)
	require.Equal(t, "s3://transcripts/longrun/ at http://"+endpoint, where)
	head, err := transcript.Append(context.Background(), store, "", []conversation.Message{{Role: conversation.RoleUser, Content: "hi"}})
	require.NoError(t, err)
	h := head[len("sha256:"):]
	_, err = backend.HeadObject("transcripts", "longrun/"+h[:2]+"/"+h)
	require.NoError(t, err, "the cache writes through to the bucket")
	require.NoDirExists(t, filepath.Join(root, ".longrun", "transcript"), "nothing is kept in the workspace")

	_, _, err = openTranscript("s3://missing-bucket?insecure=1&endpoint="+endpoint, root, nil)
	require.ErrorContains(t, err, `--transcript: transcript store s3://missing-bucket/ at http://`+endpoint+`: bucket "missing-bucket" does not exist`)
}

// TestEncryptionKeys: --encryption-keys (or LONGRUN_ENCRYPTION_KEYS) loads
// the key ring, a bad file stops the worker naming the line, and the
// transcript store then keeps blobs encrypted under their plaintext
// reference.
func TestEncryptionKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "keys")
	k := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32))
	require.NoError(t, os.WriteFile(good, []byte("new="+k+"\nold="+k+"\n"), 0o600))
	bad := filepath.Join(dir, "bad")
	require.NoError(t, os.WriteFile(bad, []byte("new="+k+"\nold=short\n"), 0o600))

	m, err := ParseFlags(nil, env(nil))
	require.NoError(t, err)
	require.Nil(t, m.Keys, "no keys, no encryption")
	m, err = ParseFlags(nil, env(map[string]string{"LONGRUN_ENCRYPTION_KEYS": good}))
	require.NoError(t, err)
	require.Equal(t, []string{"new", "old"}, m.Keys.IDs())
	_, err = ParseFlags([]string{"--encryption-keys", bad}, env(map[string]string{"LONGRUN_ENCRYPTION_KEYS": good}))
	require.ErrorContains(t, err, "--encryption-keys: encryption keys "+bad+" line 2:")
	require.NotContains(t, err.Error(), strings.TrimRight(k, "="))

	root := t.TempDir()
	store, where, err := openTranscript("", root, m.Keys)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, "transcript")+" (encrypted)", where)
	head, err := transcript.Append(context.Background(), store, "", []conversation.Message{{Role: conversation.RoleUser, Content: "MARKER-in-transcript"}})
	require.NoError(t, err)
	h := head[len("sha256:"):]
	raw, err := os.ReadFile(filepath.Join(root, "transcript", h[:2], h))
	require.NoError(t, err)
	require.NotContains(t, string(raw), "MARKER-in-transcript", "plaintext at rest")
	msgs, err := transcript.NewCache(mustSeal(t, root, m.Keys), 0).Load(context.Background(), head)
	require.NoError(t, err)
	require.Equal(t, "MARKER-in-transcript", msgs[0].Content)
}

func mustSeal(t *testing.T, root string, keys *codec.Keys) transcript.Store {
	d, err := transcript.NewDir(filepath.Join(root, "transcript"))
	require.NoError(t, err)
	s, err := transcript.Seal(d, keys)
	require.NoError(t, err)
	return s
}
