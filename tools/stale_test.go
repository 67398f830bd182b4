package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// guardSession plays the workflow's part of the stale-write guard: it
// keeps the latest FileVersion per path from every result and hands the
// map back to each call.
type guardSession struct {
	t    *testing.T
	ws   *Workspace
	seen map[string]string
}

func newGuardSession(t *testing.T, files map[string]string) *guardSession {
	return &guardSession{t: t, ws: testWorkspace(t, files), seen: map[string]string{}}
}

func (g *guardSession) run(tool Tool, args any) Result {
	g.t.Helper()
	env := Env{Workspace: g.ws, GuardWrites: true, Seen: map[string]string{}}
	for k, v := range g.seen {
		env.Seen[k] = v
	}
	res := runTool(g.t, context.Background(), tool, env, args)
	for _, f := range res.Files {
		if f.SHA256 == "" {
			delete(g.seen, f.Path)
		} else {
			g.seen[f.Path] = f.SHA256
		}
	}
	return res
}

func (g *guardSession) file(name string) string {
	g.t.Helper()
	b, err := os.ReadFile(filepath.Join(g.ws.Root(), name))
	require.NoError(g.t, err)
	return string(b)
}

func (g *guardSession) change(name, content string) {
	g.t.Helper()
	require.NoError(g.t, os.WriteFile(filepath.Join(g.ws.Root(), name), []byte(content), 0o644))
}

func TestStaleWriteGuard(t *testing.T) {
	t.Parallel()
	const notRead, changed = "has not been read in this session", "has changed on disk since this session last read it"
	edit := func(path, from, to string) EditParams { return EditParams{Path: path, OldString: from, NewString: to} }

	t.Run("write over an unread file is refused", func(t *testing.T) {
		g := newGuardSession(t, map[string]string{"a.txt": "mine\n"})
		res := g.run(NewWrite(), WriteParams{Path: "a.txt", Content: "theirs\n"})
		require.True(t, res.IsError)
		require.Contains(t, res.Content, "a.txt "+notRead)
		require.Contains(t, res.Content, "Nothing was written")
		require.Equal(t, "mine\n", g.file("a.txt"))
	})
	t.Run("edit of an unread file is refused", func(t *testing.T) {
		g := newGuardSession(t, map[string]string{"a.txt": "one\n"})
		res := g.run(NewEdit(), edit("a.txt", "one", "two"))
		require.True(t, res.IsError)
		require.Contains(t, res.Content, notRead)
		require.Equal(t, "one\n", g.file("a.txt"))
	})
	t.Run("read then edit then edit again", func(t *testing.T) {
		g := newGuardSession(t, map[string]string{"a.txt": "one\ntwo\n"})
		require.False(t, g.run(NewRead(), ReadParams{Path: "a.txt"}).IsError)
		require.False(t, g.run(NewEdit(), edit("a.txt", "one", "uno")).IsError)
		// The edit's own result records the new version: no re-read needed.
		require.False(t, g.run(NewEdit(), edit("a.txt", "two", "dos")).IsError)
		require.Equal(t, "uno\ndos\n", g.file("a.txt"))
	})
	t.Run("a change on disk after the read is caught", func(t *testing.T) {
		g := newGuardSession(t, map[string]string{"a.txt": "one\n"})
		g.run(NewRead(), ReadParams{Path: "a.txt"})
		g.change("a.txt", "one\nadded by a person\n")
		res := g.run(NewEdit(), edit("a.txt", "one", "uno"))
		require.True(t, res.IsError)
		require.Contains(t, res.Content, "a.txt "+changed)
		res = g.run(NewWrite(), WriteParams{Path: "a.txt", Content: "x"})
		require.Contains(t, res.Content, changed)
		require.Equal(t, "one\nadded by a person\n", g.file("a.txt"))
		// Reading again is the way out.
		g.run(NewRead(), ReadParams{Path: "a.txt"})
		require.False(t, g.run(NewEdit(), edit("a.txt", "one", "uno")).IsError)
		require.Equal(t, "uno\nadded by a person\n", g.file("a.txt"))
	})
	t.Run("a partial read of a large file records the whole file", func(t *testing.T) {
		big := strings.Repeat("line\n", 10000) + "last\n"
		g := newGuardSession(t, map[string]string{"big.txt": big})
		res := g.run(NewRead(), ReadParams{Path: "big.txt", Limit: 1})
		require.Len(t, res.Files, 1)
		require.Equal(t, hashBytes([]byte(big)), res.Files[0].SHA256)
		require.False(t, g.run(NewEdit(), edit("big.txt", "last", "end")).IsError)
	})
	t.Run("creating new files needs no read", func(t *testing.T) {
		g := newGuardSession(t, nil)
		require.False(t, g.run(NewWrite(), WriteParams{Path: "new.txt", Content: "a\n"}).IsError)
		require.False(t, g.run(NewEdit(), edit("made.txt", "", "b\n")).IsError)
		// And what this session wrote it may change again.
		require.False(t, g.run(NewWrite(), WriteParams{Path: "new.txt", Content: "c\n"}).IsError)
		require.False(t, g.run(NewEdit(), edit("made.txt", "b", "d")).IsError)
		require.Equal(t, "d\n", g.file("made.txt"))
	})
	t.Run("apply_patch checks every file before writing any", func(t *testing.T) {
		g := newGuardSession(t, map[string]string{"a.txt": "a1\n", "b.txt": "b1\n", "c.txt": "c1\n"})
		g.run(NewRead(), ReadParams{Path: "a.txt"})
		patch := "*** Begin Patch\n*** Update File: a.txt\n@@\n-a1\n+a2\n*** Update File: b.txt\n@@\n-b1\n+b2\n*** Delete File: c.txt\n*** End Patch"
		res := g.run(NewApplyPatch(), PatchParams{Patch: patch})
		require.True(t, res.IsError)
		require.Contains(t, res.Content, "b.txt "+notRead)
		require.Contains(t, res.Content, "c.txt "+notRead, "every stale file is named at once")
		require.NotContains(t, res.Content, "a.txt")
		require.Equal(t, "a1\n", g.file("a.txt"))
		require.Equal(t, "b1\n", g.file("b.txt"))

		g.run(NewRead(), ReadParams{Path: "b.txt"})
		g.run(NewRead(), ReadParams{Path: "c.txt"})
		res = g.run(NewApplyPatch(), PatchParams{Patch: patch})
		require.False(t, res.IsError, res.Content)
		require.Equal(t, "a2\n", g.file("a.txt"))
		require.NotContains(t, g.seen, "c.txt", "a deleted file leaves the session's record")
		require.Equal(t, hashBytes([]byte("b2\n")), g.seen["b.txt"])
	})
	t.Run("off for sessions recorded before the guard", func(t *testing.T) {
		ws := testWorkspace(t, map[string]string{"a.txt": "one\n"})
		res := runTool(t, context.Background(), NewWrite(), Env{Workspace: ws}, WriteParams{Path: "a.txt", Content: "two\n"})
		require.False(t, res.IsError, res.Content)
	})
}
