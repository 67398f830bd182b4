package tools

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// patchTree reads every regular file under root (path -> content), with
// the mode appended, so a test can assert a tree is unchanged byte for
// byte.
func patchTree(t *testing.T, root string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			tree[filepath.ToSlash(rel)+"/"] = fi.Mode().Perm().String()
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		tree[filepath.ToSlash(rel)] = string(data) + "\x00" + fi.Mode().Perm().String()
		return nil
	})
	require.NoError(t, err)
	return tree
}

func TestApplyPatch(t *testing.T) {
	t.Parallel()
	goFile := "package a\n\nfunc One() int {\n\treturn 1\n}\n\nfunc Two() int {\n\treturn 2\n}\n\nfunc Three() int {\n\treturn 3\n}\n"
	tests := []struct {
		name    string
		files   map[string]string
		patch   string
		isError bool
		// contains are substrings of the result; want are files after a
		// successful apply ("" with gone lists removed files).
		contains []string
		want     map[string]string
		gone     []string
	}{
		{
			name:     "add",
			patch:    "*** Begin Patch\n*** Add File: new/dir/a.txt\n+hello\n+\n+world\n*** End Patch",
			want:     map[string]string{"new/dir/a.txt": "hello\n\nworld\n"},
			contains: []string{"Success. Updated the following files:\nA new/dir/a.txt (+3 -0)"},
		},
		{
			name:     "add empty file",
			patch:    "*** Begin Patch\n*** Add File: empty.txt\n*** End Patch",
			want:     map[string]string{"empty.txt": ""},
			contains: []string{"A empty.txt (+0 -0)"},
		},
		{
			name:     "delete",
			files:    map[string]string{"gone.txt": "a\nb\nc\n", "keep.txt": "k\n"},
			patch:    "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch\n",
			gone:     []string{"gone.txt"},
			want:     map[string]string{"keep.txt": "k\n"},
			contains: []string{"D gone.txt (+0 -3)"},
		},
		{
			name:  "update with several hunks",
			files: map[string]string{"a.go": goFile},
			patch: `*** Begin Patch
*** Update File: a.go
@@
 func One() int {
-	return 1
+	return 10
 }
@@
 func Two() int {
-	return 2
+	x := 20
+	return x
 }
@@ func Three() int {
-	return 3
+	return 30
*** End Patch`,
			want:     map[string]string{"a.go": strings.NewReplacer("return 1\n", "return 10\n", "return 2\n", "x := 20\n\treturn x\n", "return 3\n", "return 30\n").Replace(goFile)},
			contains: []string{"M a.go (+4 -3)"},
		},
		{
			name:  "first hunk without @@",
			files: map[string]string{"a.txt": "one\ntwo\nthree\n"},
			patch: "*** Begin Patch\n*** Update File: a.txt\n one\n-two\n+2\n three\n*** End Patch",
			want:  map[string]string{"a.txt": "one\n2\nthree\n"},
		},
		{
			name:     "move and update",
			files:    map[string]string{"old/a.txt": "one\ntwo\nthree\n"},
			patch:    "*** Begin Patch\n*** Update File: old/a.txt\n*** Move to: new/b.txt\n@@\n one\n-two\n+TWO\n*** End Patch",
			want:     map[string]string{"new/b.txt": "one\nTWO\nthree\n"},
			gone:     []string{"old/a.txt"},
			contains: []string{"R old/a.txt -> new/b.txt (+1 -1)"},
		},
		{
			name:     "pure rename",
			files:    map[string]string{"a.txt": "x\n"},
			patch:    "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n*** End Patch",
			want:     map[string]string{"b.txt": "x\n"},
			gone:     []string{"a.txt"},
			contains: []string{"R a.txt -> b.txt (+0 -0)"},
		},
		{
			name:     "all four operations in one patch",
			files:    map[string]string{"m.txt": "m\n", "r.txt": "r\n", "d.txt": "d\n"},
			patch:    "*** Begin Patch\n*** Add File: a.txt\n+a\n*** Update File: m.txt\n-m\n+M\n*** Update File: r.txt\n*** Move to: r2.txt\n-r\n+R\n*** Delete File: d.txt\n*** End Patch",
			want:     map[string]string{"a.txt": "a\n", "m.txt": "M\n", "r2.txt": "R\n"},
			gone:     []string{"r.txt", "d.txt"},
			contains: []string{"A a.txt (+1 -0)\nM m.txt (+1 -1)\nR r.txt -> r2.txt (+1 -1)\nD d.txt (+0 -1)"},
		},
		{
			name:  "CRLF kept",
			files: map[string]string{"w.txt": "one\r\ntwo\r\nthree\r\n"},
			patch: "*** Begin Patch\r\n*** Update File: w.txt\r\n@@\r\n one\r\n-two\r\n+2\r\n+2b\r\n three\r\n*** End Patch\r\n",
			want:  map[string]string{"w.txt": "one\r\n2\r\n2b\r\nthree\r\n"},
		},
		{
			name:  "mixed endings: untouched lines keep theirs",
			files: map[string]string{"m.txt": "a\r\nb\nc\r\nd\r\n"},
			patch: "*** Begin Patch\n*** Update File: m.txt\n-c\n+C\n*** End Patch",
			want:  map[string]string{"m.txt": "a\r\nb\nC\r\nd\r\n"},
		},
		{
			name:  "BOM kept",
			files: map[string]string{"b.txt": "\ufefffirst\nsecond\n"},
			patch: "*** Begin Patch\n*** Update File: b.txt\n first\n-second\n+2nd\n*** End Patch",
			want:  map[string]string{"b.txt": "\ufefffirst\n2nd\n"},
		},
		{
			name:  "no trailing newline kept",
			files: map[string]string{"n.txt": "a\nb\nc"},
			patch: "*** Begin Patch\n*** Update File: n.txt\n b\n-c\n+C\n+D\n*** End of File\n*** End Patch",
			want:  map[string]string{"n.txt": "a\nb\nC\nD"},
		},
		{
			name:  "append after a last line without newline",
			files: map[string]string{"n.txt": "a\nb"},
			patch: "*** Begin Patch\n*** Update File: n.txt\n@@\n+c\n*** End Patch",
			want:  map[string]string{"n.txt": "a\nb\nc"},
		},
		{
			name:  "rung: trailing whitespace ignored",
			files: map[string]string{"r.txt": "alpha  \nbeta\t\ngamma\n"},
			patch: "*** Begin Patch\n*** Update File: r.txt\n alpha\n-beta\n+BETA\n*** End Patch",
			want:  map[string]string{"r.txt": "alpha  \nBETA\ngamma\n"}, // context keeps the file's text
		},
		{
			name:  "rung: surrounding whitespace ignored",
			files: map[string]string{"r.txt": "\tif x {\n\t\treturn\n\t}\n"},
			patch: "*** Begin Patch\n*** Update File: r.txt\n  if x {\n-   return\n+\t\treturn nil\n*** End Patch",
			want:  map[string]string{"r.txt": "\tif x {\n\t\treturn nil\n\t}\n"},
		},
		{
			name:  "rung: unicode punctuation normalised",
			files: map[string]string{"u.txt": "say \u201chi\u201d \u2014 it\u2019s\u00a0ok\nnext\n"},
			patch: "*** Begin Patch\n*** Update File: u.txt\n-say \"hi\" - it's ok\n+say hello\n next\n*** End Patch",
			want:  map[string]string{"u.txt": "say hello\nnext\n"},
		},
		{
			name:  "ambiguous context: first occurrence after the cursor",
			files: map[string]string{"d.txt": "x\nsame\nx\nsame\n"},
			patch: "*** Begin Patch\n*** Update File: d.txt\n-same\n+first\n*** End Patch",
			want:  map[string]string{"d.txt": "x\nfirst\nx\nsame\n"},
		},
		{
			name:  "ambiguous context: @@ anchors pick the second",
			files: map[string]string{"d.go": "func A() {\n\treturn nil\n}\nfunc B() {\n\treturn nil\n}\n"},
			patch: "*** Begin Patch\n*** Update File: d.go\n@@ func B() {\n-\treturn nil\n+\treturn errB\n*** End Patch",
			want:  map[string]string{"d.go": "func A() {\n\treturn nil\n}\nfunc B() {\n\treturn errB\n}\n"},
		},
		{
			name:  "nested @@ anchors",
			files: map[string]string{"n.py": "class A:\n  def f(self):\n    pass\nclass B:\n  def f(self):\n    pass\n"},
			patch: "*** Begin Patch\n*** Update File: n.py\n@@ class B:\n@@   def f(self):\n-    pass\n+    return 1\n*** End Patch",
			want:  map[string]string{"n.py": "class A:\n  def f(self):\n    pass\nclass B:\n  def f(self):\n    return 1\n"},
		},
		{
			name:  "later hunk searches after the earlier one",
			files: map[string]string{"s.txt": "k\nv\nk\nv\n"},
			patch: "*** Begin Patch\n*** Update File: s.txt\n@@\n k\n-v\n+v1\n@@\n k\n-v\n+v2\n*** End Patch",
			want:  map[string]string{"s.txt": "k\nv1\nk\nv2\n"},
		},
		{
			name:  "End of File anchors at the end",
			files: map[string]string{"e.txt": "}\nmid\n}\n"},
			patch: "*** Begin Patch\n*** Update File: e.txt\n-}\n+} // end\n*** End of File\n*** End Patch",
			want:  map[string]string{"e.txt": "}\nmid\n} // end\n"},
		},
		{
			name:  "pure insertion after an anchor",
			files: map[string]string{"i.go": "import (\n\t\"fmt\"\n)\n"},
			patch: "*** Begin Patch\n*** Update File: i.go\n@@ import (\n+\t\"errors\"\n*** End Patch",
			want:  map[string]string{"i.go": "import (\n\t\"errors\"\n\t\"fmt\"\n)\n"},
		},
		{
			name:  "trailing blank context line retried without it",
			files: map[string]string{"t.txt": "a\nb"},
			patch: "*** Begin Patch\n*** Update File: t.txt\n a\n-b\n+B\n\n*** End Patch",
			want:  map[string]string{"t.txt": "a\nB"},
		},
		{
			name:  "heredoc wrapper",
			files: map[string]string{"h.txt": "old\n"},
			patch: "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: h.txt\n-old\n+new\n*** End Patch\nEOF\n",
			want:  map[string]string{"h.txt": "new\n"},
		},
		{
			name:  "missing Begin Patch tolerated",
			files: map[string]string{"h.txt": "old\n"},
			patch: "*** Update File: h.txt\n-old\n+new\n*** End Patch",
			want:  map[string]string{"h.txt": "new\n"},
		},
		{
			name:  "unified-diff hunk header",
			files: map[string]string{"h.txt": "a\nold\nb\n"},
			patch: "*** Begin Patch\n*** Update File: h.txt\n@@ -1,3 +1,3 @@\n a\n-old\n+new\n b\n*** End Patch",
			want:  map[string]string{"h.txt": "a\nnew\nb\n"},
		},
		{
			name:     "missing hunk names file, hunk and nearest lines",
			files:    map[string]string{"a.go": goFile},
			patch:    "*** Begin Patch\n*** Update File: a.go\n@@\n func One() int {\n-\treturn 1\n+\treturn 10\n@@\n func Two() int {\n-\treturn 22\n+\treturn 20\n*** End Patch",
			isError:  true,
			contains: []string{"a.go, hunk 2, patch line 7: cannot find", "\treturn 22", "starting at line 7:", "    8: \treturn 2", "No files were modified."},
		},
		{
			name:     "missing @@ context line",
			files:    map[string]string{"a.go": goFile},
			patch:    "*** Begin Patch\n*** Update File: a.go\n@@ func Four() int {\n-\treturn 4\n+\treturn 40\n*** End Patch",
			isError:  true,
			contains: []string{"a.go, hunk 1, patch line 3: cannot find the '@@' context line", "func Four() int {", "Closest lines"},
		},
		{
			name:     "hunks out of order",
			files:    map[string]string{"o.txt": "a\nb\nc\nd\n"},
			patch:    "*** Begin Patch\n*** Update File: o.txt\n-c\n+C\n@@\n-a\n+A\n*** End Patch",
			isError:  true,
			contains: []string{"hunk 2", "These lines are at line 1, before the previous hunk"},
		},
		{
			name:     "End of File hunk not at the end",
			files:    map[string]string{"e.txt": "x\ny\n"},
			patch:    "*** Begin Patch\n*** Update File: e.txt\n-x\n+X\n*** End of File\n*** End Patch",
			isError:  true,
			contains: []string{"at the end of the file"},
		},
		{
			name:     "second file fails, first untouched",
			files:    map[string]string{"first.txt": "one\ntwo\n", "second.txt": "alpha\n"},
			patch:    "*** Begin Patch\n*** Update File: first.txt\n-one\n+ONE\n*** Add File: added.txt\n+x\n*** Delete File: second.txt\n*** Update File: second.txt\n-alpha\n+beta\n*** End Patch",
			isError:  true,
			contains: []string{"second.txt, patch line 8: does not exist; use '*** Add File:'", "No files were modified."},
		},
		{
			name:     "add over an existing file",
			files:    map[string]string{"a.txt": "a\n"},
			patch:    "*** Begin Patch\n*** Add File: a.txt\n+b\n*** End Patch",
			isError:  true,
			contains: []string{"a.txt, patch line 2: already exists"},
		},
		{
			name:     "update a missing file",
			patch:    "*** Begin Patch\n*** Update File: nope.txt\n-a\n+b\n*** End Patch",
			isError:  true,
			contains: []string{"nope.txt, patch line 2: does not exist"},
		},
		{
			name:     "delete a missing file",
			patch:    "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch",
			isError:  true,
			contains: []string{"nope.txt, patch line 2: does not exist"},
		},
		{
			name:     "move onto an existing file",
			files:    map[string]string{"a.txt": "a\n", "b.txt": "b\n"},
			patch:    "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n*** End Patch",
			isError:  true,
			contains: []string{"cannot move to b.txt: it already exists"},
		},
		{
			name:     "delete a directory",
			files:    map[string]string{"dir/x.txt": "x\n"},
			patch:    "*** Begin Patch\n*** Delete File: dir\n*** End Patch",
			isError:  true,
			contains: []string{"dir, patch line 2: is a directory"},
		},
		{
			name:     "add under a file",
			files:    map[string]string{"f.txt": "x\n"},
			patch:    "*** Begin Patch\n*** Add File: f.txt/sub/new.txt\n+x\n*** End Patch",
			isError:  true,
			contains: []string{"parent f.txt is a file"},
		},
		{
			name:     "outside the workspace refused",
			files:    map[string]string{"a.txt": "a\n"},
			patch:    "*** Begin Patch\n*** Update File: a.txt\n-a\n+b\n*** Add File: ../escape.txt\n+x\n*** End Patch",
			isError:  true,
			contains: []string{"outside the workspace", "No files were modified."},
		},
		{
			name:     "absolute path outside refused",
			patch:    "*** Begin Patch\n*** Delete File: /etc/hostname\n*** End Patch",
			isError:  true,
			contains: []string{"outside the workspace"},
		},
		{
			name:     "move outside refused",
			files:    map[string]string{"a.txt": "a\n"},
			patch:    "*** Begin Patch\n*** Update File: a.txt\n*** Move to: ../../a.txt\n*** End Patch",
			isError:  true,
			contains: []string{"outside the workspace"},
		},
		// Codex compatibility (issue 18): patches Codex accepts.
		{
			name:  "codex: pure addition appends at the end and leaves the search position",
			files: map[string]string{"c.py": "import os\n\ndef f():\n    return 1\n"},
			patch: "*** Begin Patch\n*** Update File: c.py\n@@\n+\n+def g():\n+    return 2\n@@\n def f():\n-    return 1\n+    return 10\n*** End Patch",
			want:  map[string]string{"c.py": "import os\n\ndef f():\n    return 10\n\ndef g():\n    return 2\n"},
		},
		{
			name:  "codex: pure addition after an edit of the last line",
			files: map[string]string{"c.txt": "a\nb\n"},
			patch: "*** Begin Patch\n*** Update File: c.txt\n+c\n@@\n-b\n+B\n*** End Patch",
			want:  map[string]string{"c.txt": "a\nB\nc\n"},
		},
		{
			name:  "codex: cat heredoc wrapper",
			files: map[string]string{"h.txt": "old\n"},
			patch: "cat <<'EOF'\n*** Begin Patch\n*** Update File: h.txt\n-old\n+new\n*** End Patch\nEOF\n",
			want:  map[string]string{"h.txt": "new\n"},
		},
		{
			name:  "codex: cat heredoc piped to apply_patch",
			files: map[string]string{"h.txt": "old\n"},
			patch: "cat <<\"EOF\" | apply_patch\n*** Begin Patch\n*** Update File: h.txt\n-old\n+new\n*** End Patch\nEOF",
			want:  map[string]string{"h.txt": "new\n"},
		},
		{
			// The file was written decomposed (NFD, as macOS often does):
			// "й" is "и" + U+0306, "é" is "e" + U+0301. The model writes
			// them composed (NFC). The context line keeps the file's form.
			name:  "codex: NFD file, NFC context and - lines",
			files: map[string]string{"ru.txt": "мои\u0306 дом\ncafe\u0301 = 1\nend\n"},
			patch: "*** Begin Patch\n*** Update File: ru.txt\n мой дом\n-café = 1\n+café = 2\n end\n*** End Patch",
			want:  map[string]string{"ru.txt": "мои\u0306 дом\ncafé = 2\nend\n"},
		},
		{
			name:  "codex: NFC file, NFD - line",
			files: map[string]string{"n.txt": "naïve\n"},
			patch: "*** Begin Patch\n*** Update File: n.txt\n-nai\u0308ve\n+naive\n*** End Patch",
			want:  map[string]string{"n.txt": "naive\n"},
		},
		{
			// Exact wins over a normalised match earlier in the file.
			name:  "codex: exact match preferred over an NFD one before it",
			files: map[string]string{"p.txt": "cafe\u0301\ncafé\n"},
			patch: "*** Begin Patch\n*** Update File: p.txt\n-café\n+tea\n*** End Patch",
			want:  map[string]string{"p.txt": "cafe\u0301\ntea\n"},
		},
		{
			name:  "codex: @@ anchor matched across normalisation forms",
			files: map[string]string{"a.txt": "[re\u0301sume\u0301]\nx = 1\n[other]\nx = 1\n"},
			patch: "*** Begin Patch\n*** Update File: a.txt\n@@ [résumé]\n-x = 1\n+x = 2\n*** End Patch",
			want:  map[string]string{"a.txt": "[re\u0301sume\u0301]\nx = 2\n[other]\nx = 1\n"},
		},
		{
			name:     "malformed patch reports its line",
			files:    map[string]string{"a.txt": "a\n"},
			patch:    "*** Begin Patch\n*** Update File: a.txt\n-a\n+b\nstray line\n*** End Patch",
			isError:  true,
			contains: []string{"a.txt, patch line 5: \"stray line\" is not a valid patch line"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws := testWorkspace(t, tt.files)
			before := patchTree(t, ws.Root())
			res := runTool(t, context.Background(), NewApplyPatch(), Env{Workspace: ws}, PatchParams{Patch: tt.patch})
			require.Equal(t, tt.isError, res.IsError, res.Content)
			for _, c := range tt.contains {
				require.Contains(t, res.Content, c)
			}
			if tt.isError {
				require.Equal(t, before, patchTree(t, ws.Root()), "a failed patch must leave the tree unchanged")
				return
			}
			for name, content := range tt.want {
				got, err := os.ReadFile(filepath.Join(ws.Root(), filepath.FromSlash(name)))
				require.NoError(t, err, name)
				require.Equal(t, content, string(got), name)
			}
			for _, name := range tt.gone {
				_, err := os.Stat(filepath.Join(ws.Root(), filepath.FromSlash(name)))
				require.ErrorIs(t, err, fs.ErrNotExist, name)
			}
			leftovers, err := filepath.Glob(filepath.Join(ws.Root(), "*", ".*.tmp-*"))
			require.NoError(t, err)
			require.Empty(t, leftovers)
		})
	}
}

func TestApplyPatchKeepsMode(t *testing.T) {
	t.Parallel()
	ws := testWorkspace(t, map[string]string{"run.sh": "echo a\n"})
	p := filepath.Join(ws.Root(), "run.sh")
	require.NoError(t, os.Chmod(p, 0o755))
	res := runTool(t, context.Background(), NewApplyPatch(), Env{Workspace: ws},
		PatchParams{Patch: "*** Begin Patch\n*** Update File: run.sh\n*** Move to: bin/run.sh\n-echo a\n+echo b\n*** End Patch"})
	require.False(t, res.IsError, res.Content)
	fi, err := os.Stat(filepath.Join(ws.Root(), "bin", "run.sh"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
}

// TestPatchRollback fails the write of the second file and checks that
// the first, already written, is restored byte for byte, deleted and moved
// files come back and created directories go away.
func TestPatchRollback(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		failAt string // base name whose write fails
	}{
		{name: "fail on second file", failAt: "b.txt"},
		{name: "fail on last file", failAt: "zz.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws := testWorkspace(t, map[string]string{
				"a.txt":   "a1\r\na2\r\n",
				"b.txt":   "b\n",
				"del.txt": "gone\n",
				"mv.txt":  "m\n",
			})
			before := patchTree(t, ws.Root())
			patch, err := ParsePatch(`*** Begin Patch
*** Update File: a.txt
-a1
+A1
*** Update File: b.txt
-b
+B
*** Add File: new/deep/n.txt
+n
*** Delete File: del.txt
*** Update File: mv.txt
*** Move to: moved/mv.txt
-m
+M
*** Add File: zz.txt
+z
*** End Patch`)
			require.NoError(t, err)
			plan, err := PlanPatch(patch, ws)
			require.NoError(t, err)
			plan.writeHook = func(abs string) error {
				if filepath.Base(abs) == tt.failAt {
					return errors.New("injected write failure")
				}
				return nil
			}
			err = plan.Apply(context.Background())
			require.ErrorContains(t, err, "injected write failure")
			require.ErrorContains(t, err, "every file was restored")
			require.Equal(t, before, patchTree(t, ws.Root()))
		})
	}
}

func TestPatchChangedSincePlan(t *testing.T) {
	t.Parallel()
	ws := testWorkspace(t, map[string]string{"a.txt": "a\n"})
	patch, err := ParsePatch("*** Begin Patch\n*** Update File: a.txt\n-a\n+b\n*** End Patch")
	require.NoError(t, err)
	plan, err := PlanPatch(patch, ws)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root(), "a.txt"), []byte("edited\n"), 0o644))
	err = plan.Apply(context.Background())
	var pe *PatchError
	require.ErrorAs(t, err, &pe)
	require.Contains(t, pe.Msg, "changed on disk")
	got, err := os.ReadFile(filepath.Join(ws.Root(), "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "edited\n", string(got))
}

func TestPatchSeekRungs(t *testing.T) {
	t.Parallel()
	// patchLines computes its views on first use and is not safe for
	// concurrent use (a plan reads one file on one goroutine), so each
	// parallel case has its own.
	file := []string{"a  ", "  b\t", "c \u2013 \u201cq\u201d", "cafe\u0301 \u2013 x", "café"}
	tests := []struct {
		name string
		pat  []string
		pos  int
		rung int
	}{
		{name: "exact", pat: []string{"a  "}, pos: 0, rung: rungExact},
		{name: "trim end", pat: []string{"a"}, pos: 0, rung: rungTrimEnd},
		{name: "trim", pat: []string{"b"}, pos: 1, rung: rungTrim},
		{name: "unicode", pat: []string{`c - "q"`}, pos: 2, rung: rungUnicode},
		{name: "nfc after punctuation", pat: []string{"café - x"}, pos: 3, rung: rungNFC},
		{name: "exact before nfc", pat: []string{"café"}, pos: 4, rung: rungExact},
		{name: "nfd pattern", pat: []string{"cafe\u0301"}, pos: 4, rung: rungNFC},
		{name: "missing", pat: []string{"z"}, pos: -1, rung: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lines := &patchLines{lines: file}
			pos, rung := lines.seek(tt.pat, 0, false)
			require.Equal(t, tt.pos, pos)
			require.Equal(t, tt.rung, rung)
		})
	}
}
