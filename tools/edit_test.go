package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEdit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		file     *string // nil: the file does not exist
		args     EditParams
		isError  bool
		want     string // file content afterwards
		contains []string
	}{
		{name: "exact unique", file: ptr("a\nb\nc\n"), args: EditParams{OldString: "b", NewString: "B"},
			want: "a\nB\nc\n", contains: []string{"edited f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"}},
		{name: "ambiguous", file: ptr("x\nx\n"), args: EditParams{OldString: "x", NewString: "y"}, isError: true,
			want: "x\nx\n", contains: []string{"occurs 2 times", "replace_all"}},
		{name: "replace all", file: ptr("x\nx\n"), args: EditParams{OldString: "x", NewString: "y", ReplaceAll: true},
			want: "y\ny\n", contains: []string{"(2 replacements)"}},
		{name: "missing text", file: ptr("a\n"), args: EditParams{OldString: "zzz", NewString: "y"}, isError: true,
			want: "a\n", contains: []string{"not found", "copy the exact text"}},
		{name: "identical strings", file: ptr("a\n"), args: EditParams{OldString: "a", NewString: "a"}, isError: true, want: "a\n"},
		{name: "crlf kept", file: ptr("one\r\ntwo\r\nthree\r\n"), args: EditParams{OldString: "two\nthree", NewString: "2\n3\n4"},
			want: "one\r\n2\r\n3\r\n4\r\n"},
		{name: "crlf in old_string", file: ptr("one\r\ntwo\r\n"), args: EditParams{OldString: "one\r\ntwo", NewString: "1\r\n2"},
			want: "1\r\n2\r\n"},
		{name: "bom kept", file: ptr("\ufeffpackage a\n"), args: EditParams{OldString: "package a", NewString: "package b"},
			want: "\ufeffpackage b\n"},
		{name: "bom and crlf", file: ptr("\ufeffx\r\ny\r\n"), args: EditParams{OldString: "y", NewString: "z"},
			want: "\ufeffx\r\nz\r\n"},
		{name: "no trailing newline", file: ptr("a\nlast"), args: EditParams{OldString: "last", NewString: "end"},
			want: "a\nend", contains: []string{"\\ No newline at end of file"}},
		{name: "empty file filled by empty old_string", file: ptr(""), args: EditParams{OldString: "", NewString: "hello\n"},
			want: "hello\n"},
		{name: "empty file, non-empty old_string", file: ptr(""), args: EditParams{OldString: "x", NewString: "y"}, isError: true, want: ""},
		{name: "empty old_string on existing content", file: ptr("a\n"), args: EditParams{OldString: "", NewString: "b"}, isError: true,
			want: "a\n", contains: []string{"use write"}},
		{name: "create missing file", args: EditParams{OldString: "", NewString: "new\n"}, want: "new\n",
			contains: []string{"created f.txt", "+new"}},
		{name: "missing file", args: EditParams{OldString: "a", NewString: "b"}, isError: true, contains: []string{"file not found"}},
		{name: "fallback named", file: ptr("\t\tif x {\n\t\t\tg()\n\t\t}\n"), args: EditParams{OldString: "if x {\n\tg()\n}", NewString: "if y {\n\tg()\n}"},
			want: "\t\tif y {\n\t\t\tg()\n\t\t}\n", contains: []string{"matched with indentation-flexible"}},
		{name: "delete text", file: ptr("keep\ndrop\n"), args: EditParams{OldString: "drop\n", NewString: ""}, want: "keep\n"},
		{name: "binary refused", file: ptr("a\x00b"), args: EditParams{OldString: "a", NewString: "c"}, isError: true, want: "a\x00b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{}
			if tt.file != nil {
				files["f.txt"] = *tt.file
			}
			ws := testWorkspace(t, files)
			tt.args.Path = "f.txt"
			res := runTool(t, context.Background(), NewEdit(), Env{Workspace: ws}, tt.args)
			require.Equal(t, tt.isError, res.IsError, res.Content)
			for _, c := range tt.contains {
				require.Contains(t, res.Content, c)
			}
			data, err := os.ReadFile(filepath.Join(ws.Root(), "f.txt"))
			if tt.file == nil && (tt.isError || tt.args.OldString != "") {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, string(data))
		})
	}
}

func ptr(s string) *string { return &s }

func TestEditKeepsModeAndRefusesOutside(t *testing.T) {
	t.Parallel()
	ws := testWorkspace(t, map[string]string{"run.sh": "echo a\n"})
	p := filepath.Join(ws.Root(), "run.sh")
	require.NoError(t, os.Chmod(p, 0o755))
	res := runTool(t, context.Background(), NewEdit(), Env{Workspace: ws}, EditParams{Path: "run.sh", OldString: "a", NewString: "b"})
	require.False(t, res.IsError, res.Content)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
	res = runTool(t, context.Background(), NewEdit(), Env{Workspace: ws}, EditParams{Path: "../x", OldString: "", NewString: "b"})
	require.True(t, res.IsError)
}

// TestEditConcurrent runs many edits of one file at once: with the per-file
// lock none is lost.
func TestEditConcurrent(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	ws := testWorkspace(t, map[string]string{"f.txt": b.String()})
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := fmt.Sprintf(`{"path":"f.txt","old_string":"line %d\n","new_string":"edited %d\n"}`, i, i)
			res, err := NewEdit().Run(context.Background(), Env{Workspace: ws}, []byte(args))
			if err != nil || res.IsError {
				t.Errorf("edit %d: %v %s", i, err, res.Content)
			}
		}()
	}
	wg.Wait()
	data, err := os.ReadFile(filepath.Join(ws.Root(), "f.txt"))
	require.NoError(t, err)
	require.Equal(t, 20, strings.Count(string(data), "edited "))
	editLocks.Lock()
	defer editLocks.Unlock()
	require.NotContains(t, editLocks.m, filepath.Join(ws.Root(), "f.txt"), "unused locks are dropped")
}

func FuzzEditMatch(f *testing.F) {
	f.Add("a\nb\nc\n", "b", "B", false)
	f.Add("\tif x {\n\t\tg()\n\t}\n", "if x {\n\tg()\n}", "if y {}", false)
	f.Add("x  y\nx y\n", "x y", "z", true)
	f.Add("print(\"a\")\n", `print(\"a\")`, "p", false)
	f.Add("{\n a\n b\n}\n", "{\n a\n c\n}", "{}", false)
	f.Add("one\r\ntwo\r\n", "two", "2", false)
	f.Add("\ufeffx\n", "x", "y", false)
	f.Fuzz(func(t *testing.T, content, old, repl string, all bool) {
		p := EditParams{Path: "f", OldString: old, NewString: repl, ReplaceAll: all}
		res, after, ok := editContent(content, p)
		if !ok {
			if !res.IsError {
				t.Fatalf("refused edit without an error result: %q", res.Content)
			}
			return
		}
		norm := strings.TrimPrefix(strings.ReplaceAll(repl, "\r\n", "\n"), editBOM)
		got := strings.ReplaceAll(strings.TrimPrefix(after, editBOM), "\r\n", "\n")
		out := findEditMatches(strings.ReplaceAll(strings.TrimPrefix(content, editBOM), "\r\n", "\n"), strings.TrimPrefix(strings.ReplaceAll(old, "\r\n", "\n"), editBOM), norm, all)
		if out.matcher == matchIndentFlex {
			return // new_string was re-indented on purpose
		}
		// Check the raw result too: normalising CRLF can hide a lone "\r"
		// the edit did write, and in an LF file normalising the result
		// again folds "\r\r\n" (written as "\r\n") once more.
		if !strings.Contains(got, norm) && !strings.Contains(after, norm) && !strings.Contains(after, repl) {
			t.Fatalf("edit applied (%s) but the result %q lacks new_string %q", res.Content, after, repl)
		}
	})
}
