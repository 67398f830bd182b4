package transcript

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpenS3FromTheEnvironment opens a store the way the worker does,
// with the credentials in the standard variables. Not parallel: it sets
// the environment.
func TestOpenS3FromTheEnvironment(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "env-key-id")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "env-secret")
	t.Setenv("AWS_SESSION_TOKEN", "env-session-token")
	f := newFakeS3(t)
	store, desc, err := Open(context.Background(), "s3://transcripts/team/a?endpoint="+f.endpoint+"&insecure=1")
	require.NoError(t, err)
	require.Equal(t, "s3://transcripts/team/a/ at http://"+f.endpoint, desc)
	ref, err := store.Put(context.Background(), []byte("hello"))
	require.NoError(t, err)
	require.Equal(t, "hello", f.object(t, "team/a/2c/"+ref[len(refPrefix):]))

	f.mu.Lock()
	defer f.mu.Unlock()
	require.NotEmpty(t, f.auth)
	for _, h := range f.auth {
		require.Contains(t, h.Get("Authorization"), "Credential=env-key-id/", "requests are signed with AWS_ACCESS_KEY_ID")
		require.Equal(t, "env-session-token", h.Get("X-Amz-Security-Token"))
	}
}

// TestOpenS3FromTheSharedCredentialsFile finds the keys where `aws
// configure` writes them, in the profile AWS_PROFILE names, when the
// environment has none. Not parallel: it sets the environment.
func TestOpenS3FromTheSharedCredentialsFile(t *testing.T) {
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY", "AWS_SESSION_TOKEN"} {
		t.Setenv(v, "")
	}
	file := filepath.Join(t.TempDir(), "credentials")
	require.NoError(t, os.WriteFile(file, []byte(
		"[default]\naws_access_key_id = default-key\naws_secret_access_key = default-secret\n\n"+
			"[team]\naws_access_key_id = team-key\naws_secret_access_key = team-secret\n"), 0o600))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", file)
	t.Setenv("AWS_PROFILE", "team")
	f := newFakeS3(t)
	store, _, err := Open(context.Background(), "s3://transcripts/p?endpoint="+f.endpoint+"&insecure=1")
	require.NoError(t, err)
	_, err = store.Put(context.Background(), []byte("hello"))
	require.NoError(t, err)

	f.mu.Lock()
	defer f.mu.Unlock()
	require.NotEmpty(t, f.auth)
	for _, h := range f.auth {
		require.Contains(t, h.Get("Authorization"), "Credential=team-key/", "requests are signed with the AWS_PROFILE profile's key")
	}
}

func TestOpenDirAndRefusedSchemes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() + "/store"
	store, desc, err := Open(context.Background(), dir)
	require.NoError(t, err)
	require.IsType(t, &Dir{}, store)
	require.Equal(t, dir, desc)
	require.DirExists(t, dir)

	for _, spec := range []string{"gs://bucket/x", "S3://bucket", "file:///tmp/x"} {
		_, _, err := Open(context.Background(), spec)
		require.ErrorContains(t, err, "unknown scheme", spec)
	}
}

func TestParseS3URL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, spec string
		want       S3Config
		err        string
	}{
		{name: "bucket only", spec: "s3://transcripts", want: S3Config{Bucket: "transcripts"}},
		{name: "bucket and slash", spec: "s3://transcripts/", want: S3Config{Bucket: "transcripts"}},
		{name: "prefix gets a slash", spec: "s3://transcripts/team/a", want: S3Config{Bucket: "transcripts", Prefix: "team/a/"}},
		{name: "prefix keeps its slash", spec: "s3://transcripts/team/", want: S3Config{Bucket: "transcripts", Prefix: "team/"}},
		{name: "minio", spec: "s3://transcripts/p?endpoint=minio.lan:9000&region=eu-west-1&insecure=1",
			want: S3Config{Bucket: "transcripts", Prefix: "p/", Endpoint: "minio.lan:9000", Region: "eu-west-1", Insecure: true}},
		{name: "insecure spelled out", spec: "s3://transcripts?insecure=true", want: S3Config{Bucket: "transcripts", Insecure: true}},
		{name: "secure said", spec: "s3://transcripts?insecure=0", want: S3Config{Bucket: "transcripts"}},

		{name: "no bucket", spec: "s3:///prefix", err: "no bucket"},
		{name: "bad bucket", spec: "s3://ab", err: `bucket "ab": Bucket name cannot be shorter than 3 characters`},
		{name: "port on the bucket", spec: "s3://transcripts:9000/p", err: "the bucket is the host part, alone"},
		{name: "credentials in the URL", spec: "s3://AKIA:secret@transcripts", err: "credentials do not go in the URL: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"},
		{name: "endpoint with scheme", spec: "s3://transcripts?endpoint=http://minio:9000", err: `endpoint "http://minio:9000": want host or host:port, no scheme or path`},
		{name: "unknown parameter", spec: "s3://transcripts?endpiont=minio:9000", err: `unknown parameter "endpiont" (have: endpoint, region, insecure)`},
		{name: "parameter twice", spec: "s3://transcripts?region=a&region=b", err: `parameter "region" given 2 times`},
		{name: "bad insecure", spec: "s3://transcripts?insecure=yes", err: `insecure="yes": want 1 or 0`},
		{name: "empty segment", spec: "s3://transcripts/a//b", err: `prefix "a//b/" has an empty segment`},
		{name: "empty first segment", spec: "s3://transcripts//", err: `prefix "/" has an empty segment`},
		{name: "other scheme", spec: "gs://transcripts", err: `unknown scheme "gs"`},
		{name: "fragment", spec: "s3://transcripts#x", err: "the bucket is the host part, alone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseS3URL(tc.spec)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				require.NotContains(t, err.Error(), "secret", "a secret in the URL stays out of the error")
				require.ErrorContains(t, err, "want s3://bucket/prefix?endpoint=host:port", "every refusal shows the form")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func FuzzParseS3URL(f *testing.F) {
	for _, s := range []string{"s3://b", "s3://transcripts/team/a?endpoint=h:1&insecure=1", "s3://a:b@c", "s3:///x", "s3://b/a//c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		cfg, err := ParseS3URL(spec)
		if err != nil {
			return
		}
		// What parses makes a key a service accepts and cannot escape
		// its prefix into another's.
		if cfg.Bucket == "" || strings.Contains(cfg.Endpoint, "/") {
			t.Fatalf("%q parsed to %+v", spec, cfg)
		}
		if cfg.Prefix != "" && (!strings.HasSuffix(cfg.Prefix, "/") || strings.HasPrefix(cfg.Prefix, "/") || strings.Contains(cfg.Prefix, "//")) {
			t.Fatalf("%q: prefix %q", spec, cfg.Prefix)
		}
		if !bytes.HasPrefix([]byte(spec), []byte("s3://")) {
			t.Fatalf("%q is not an s3:// URL", spec)
		}
	})
}
