package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/longrun/longrun/codec"
)

// TestCodecServerCommand runs `starter codec-server` as a person would and
// decodes through it over HTTP, with and without the token, and checks the
// refusals that keep it from serving keys to anyone.
func TestCodecServerCommand(t *testing.T) {
	dir := t.TempDir()
	keysFile := filepath.Join(dir, "keys")
	raw := bytes.Repeat([]byte{3}, codec.KeySize)
	require.NoError(t, os.WriteFile(keysFile, []byte("k1="+base64.StdEncoding.EncodeToString(raw)+"\n"), 0o600))
	tokenFile := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600))

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"codec-server", "--token-file", tokenFile}, "no keys: give --encryption-keys"},
		{[]string{"--encryption-keys", keysFile, "codec-server"}, "give --token-file F"},
		{[]string{"--encryption-keys", keysFile, "codec-server", "--no-token", "--listen", "0.0.0.0:0"}, "--no-token on 0.0.0.0:0"},
		{[]string{"--encryption-keys", keysFile, "codec-server", "--token-file", tokenFile, "--origin", "localhost:8233"}, "want scheme://host[:port]"},
		{[]string{"--encryption-keys", keysFile, "codec-server", "--token-file", tokenFile, "--max-body", "0"}, "--max-body 0: want a number of bytes above 0"},
		{[]string{"--encryption-keys", keysFile, "codec-server", "--token-file", tokenFile, "--allowed-host", "http://codec.example.com"}, `--allowed-host "http://codec.example.com": want a host name`},
	} {
		var out, errb bytes.Buffer
		a := &app{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
		code := a.run(context.Background(), tt.args)
		require.Equal(t, exitUsage, code, errb.String())
		require.Contains(t, errb.String(), tt.want)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var errb syncBuffer
	go func() {
		a := &app{stdout: io.Discard, stderr: &errb, getenv: func(k string) string {
			if k == codec.EnvKeysFile {
				return keysFile
			}
			return ""
		}}
		done <- a.run(ctx, []string{"codec-server", "--listen", addr, "--token-file", tokenFile, "--origin", "http://localhost:8233"})
	}()
	keys, err := codec.LoadKeys(keysFile)
	require.NoError(t, err)
	p, _ := converter.GetDefaultDataConverter().ToPayload("decoded through the server")
	enc, err := codec.New(keys).Encode([]*commonpb.Payload{p})
	require.NoError(t, err)
	body, _ := protojson.Marshal(&commonpb.Payloads{Payloads: enc})
	post := func(token string, host ...string) (int, string) {
		req, _ := http.NewRequest("POST", "http://"+addr+"/decode", bytes.NewReader(body))
		if len(host) > 0 {
			req.Host = host[0]
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		var resp *http.Response
		for range 100 {
			if resp, err = http.DefaultClient.Do(req); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, _ := post("")
	require.Equal(t, http.StatusUnauthorized, status)
	status, got := post("s3cret")
	require.Equal(t, http.StatusOK, status, got)
	var out commonpb.Payloads
	require.NoError(t, protojson.Unmarshal([]byte(got), &out))
	var s string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(out.Payloads[0], &s))
	require.Equal(t, "decoded through the server", s)
	// The Host check is in front: a name that is not the server's (a
	// page rebinding its own name to 127.0.0.1) is refused, token or not.
	status, got = post("s3cret", "rebind.test:8081")
	require.Equal(t, http.StatusMisdirectedRequest, status, got)
	require.Contains(t, got, "--allowed-host")
	status, _ = post("s3cret", "localhost:8081")
	require.Equal(t, http.StatusOK, status)
	cancel()
	require.Equal(t, exitOK, <-done, errb.String())
	require.Contains(t, errb.String(), fmt.Sprintf("codec server on http://%s", addr))
	require.NotContains(t, errb.String(), "s3cret")
}

// syncBuffer is a bytes.Buffer safe to write from the server's goroutine
// and read from the test's.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCodecServerPublishedOnLoopback: in a container the server must listen
// on 0.0.0.0 for its published port to reach it; --published-on-loopback
// says the host publishes that port on 127.0.0.1 alone, and only then is
// --no-token accepted there (the compose stack's longrun-codec service).
func TestCodecServerPublishedOnLoopback(t *testing.T) {
	t.Parallel()
	keysFile := filepath.Join(t.TempDir(), "keys")
	raw := bytes.Repeat([]byte{5}, codec.KeySize)
	require.NoError(t, os.WriteFile(keysFile, []byte("k1="+base64.StdEncoding.EncodeToString(raw)+"\n"), 0o600))
	ctx, cancel := context.WithCancel(context.Background())
	var errb syncBuffer
	done := make(chan int)
	go func() {
		a := &app{stdout: io.Discard, stderr: &errb, getenv: func(string) string { return "" }}
		done <- a.run(ctx, []string{"--encryption-keys", keysFile, "codec-server", "--listen", "0.0.0.0:0", "--no-token", "--published-on-loopback"})
	}()
	require.Eventually(t, func() bool { return strings.Contains(errb.String(), "codec server on http://") }, 10*time.Second, 20*time.Millisecond, errb.String())
	cancel()
	require.Equal(t, 0, <-done, errb.String())
}
