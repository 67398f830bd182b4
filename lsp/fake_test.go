package lsp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/stretchr/testify/require"
)

// TestMain runs the test binary as a fake language server when
// FAKE_LSP_SERVER is set (a server's env adds it).
func TestMain(m *testing.M) {
	if os.Getenv("FAKE_LSP_SERVER") == "quiet" {
		quietServer()
		return
	}
	os.Exit(m.Run())
}

// quietServer behaves as typescript-language-server does with
// diagnostics: no version in them, and nothing said of a file whose
// diagnostics were empty and stay empty. A line "ERR" is an error; a
// change holding "SLOW" is answered after 700 ms.
func quietServer() {
	ctx := context.Background()
	errs := map[string]bool{}
	done := make(chan struct{})
	publish := func(conn *jsonrpc2.Conn, uri, text string, always bool) {
		bad := strings.Contains(text, "ERR")
		if !always && !bad && !errs[uri] {
			return
		}
		errs[uri] = bad
		ds := []Diagnostic{}
		if bad {
			ds = append(ds, Diagnostic{Severity: SeverityError, Message: "ERR is not allowed"})
		}
		if strings.Contains(text, "SLOW") {
			time.Sleep(700 * time.Millisecond)
		}
		_ = conn.Notify(ctx, "textDocument/publishDiagnostics", map[string]any{"uri": uri, "diagnostics": ds})
	}
	h := jsonrpc2.HandlerWithError(func(_ context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
		var p struct {
			TextDocument   textDocumentItem    `json:"textDocument"`
			ContentChanges []map[string]string `json:"contentChanges"`
		}
		if req.Params != nil {
			_ = json.Unmarshal(*req.Params, &p)
		}
		switch req.Method {
		case "initialize":
			return map[string]any{"capabilities": map[string]any{"textDocumentSync": 1}}, nil
		case "textDocument/didOpen":
			publish(conn, p.TextDocument.URI, p.TextDocument.Text, true)
		case "textDocument/didChange":
			publish(conn, p.TextDocument.URI, p.ContentChanges[0]["text"], false)
		case "exit":
			close(done)
		}
		return nil, nil
	})
	stream := jsonrpc2.NewBufferedStream(stdio{os.Stdin, os.Stdout}, jsonrpc2.VSCodeObjectCodec{})
	conn := jsonrpc2.NewConn(ctx, stream, h)
	select {
	case <-conn.DisconnectNotify():
	case <-done:
	}
}

func TestSilenceOfAnUnversionedServerIsAnAnswer(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	f := filepath.Join(root, "a.txt")
	require.NoError(t, os.WriteFile(f, []byte("ok\n"), 0o644))
	self, err := os.Executable()
	require.NoError(t, err)
	m := NewManager(Config{Launch: testLaunch, Servers: map[string]ServerConfig{"quiet": {Command: self, Patterns: []string{"*.txt"},
		Env: map[string]string{"FAKE_LSP_SERVER": "quiet"}}}, DiagnosticsWait: "10s"})
	defer m.Close()
	ctx := context.Background()
	edit := func(text string) (string, time.Duration) {
		require.NoError(t, os.WriteFile(f, []byte(text), 0o644))
		start := time.Now()
		out := m.AfterEdit(ctx, root, []string{f})
		return out, time.Since(start)
	}

	// An open is always answered, with diagnostics or none.
	out, _ := edit("ok\n")
	require.Equal(t, "quiet reports no errors or warnings in a.txt.", out)
	// Clean to clean: the server says nothing; after Settle that is the
	// answer, long before the 10 s cap.
	out, took := edit("still ok\n")
	require.Equal(t, "quiet reports no errors or warnings in a.txt.", out)
	require.GreaterOrEqual(t, took, Settle)
	require.Less(t, took, 3*Settle)
	// An error is published, and its fix.
	out, _ = edit("ERR SLOW\n")
	require.Equal(t, "quiet diagnostics:\na.txt:1:1: error: ERR is not allowed", out)
	out, _ = edit("fine\n")
	require.Equal(t, "quiet reports no errors or warnings in a.txt.", out)
	// The server once took 700 ms to answer: its silence now counts only
	// after twice that.
	out, took = edit("fine again\n")
	require.Equal(t, "quiet reports no errors or warnings in a.txt.", out)
	require.GreaterOrEqual(t, took, 1400*time.Millisecond)
	// Silence is not taken from a server whose publications name versions
	// (gopls, pyright): missingLocked with a versioned publication.
	c, _, err := m.ForFile(ctx, root, f)
	require.NoError(t, err)
	c.mu.Lock()
	v := 3
	c.diags[FileURI(f)] = published{seq: 1, version: &v}
	require.Equal(t, []string{f}, c.missingLocked(map[string]int{f: 4}, 1, true))
	c.mu.Unlock()
}
