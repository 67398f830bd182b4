package tools

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParsePatch(t *testing.T) {
	t.Parallel()
	p, err := ParsePatch("\n  *** Begin Patch  \n*** Add File: a.txt\n+x\n*** Update File: b.txt\n*** Move to: c.txt\n@@ func f() {\n@@ inner\n ctx\n-old\n+new\n\n@@\n-z\n*** End of File\n*** Delete File: d.txt\n*** End Patch\n\n")
	require.NoError(t, err)
	require.Equal(t, []FilePatch{
		{Op: PatchAdd, Path: "a.txt", Lines: []string{"x"}, Line: 3},
		{Op: PatchUpdate, Path: "b.txt", MoveTo: "c.txt", Line: 5, Hunks: []Hunk{
			{Anchors: []string{"func f() {", "inner"}, Old: []string{"ctx", "old", ""}, New: []string{"ctx", "new", ""}, Added: 1, Removed: 1, Line: 7, Context: []int{0, -1, 2}},
			{Old: []string{"z"}, Removed: 1, EOF: true, Line: 13, Context: nil},
		}},
		{Op: PatchDelete, Path: "d.txt", Line: 16},
	}, p.Files)
}

func TestParsePatchErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		patch string
		line  int
		msg   string
	}{
		{name: "empty", patch: "  \n\n", line: 0, msg: "the patch is empty"},
		{name: "no begin", patch: "hello\n*** End Patch", line: 1, msg: "the first line of the patch must be"},
		{name: "no end", patch: "*** Begin Patch\n*** Delete File: a\n", line: 2, msg: "may be cut off"},
		{name: "no files", patch: "*** Begin Patch\n*** End Patch", line: 2, msg: "changes no files"},
		{name: "bad header", patch: "*** Begin Patch\n*** Frobnicate File: a\n*** End Patch", line: 2, msg: "is not a file header"},
		{name: "empty path", patch: "*** Begin Patch\n*** Add File:   \n+x\n*** End Patch", line: 2, msg: "names no file"},
		{name: "add with stray line", patch: "*** Begin Patch\n*** Add File: a\n+x\ny\n*** End Patch", line: 4, msg: "is not a file header"},
		{name: "update without hunks", patch: "*** Begin Patch\n*** Update File: a\n*** End Patch", line: 2, msg: "has no hunks"},
		{name: "empty hunk", patch: "*** Begin Patch\n*** Update File: a\n@@ x\n*** End Patch", line: 3, msg: "the hunk has no lines"},
		{name: "second hunk without @@", patch: "*** Begin Patch\n*** Update File: a\n-x\n*** End of File\n-y\n*** End Patch", line: 5, msg: "is not a valid patch line"},
		{name: "bad first line of hunk", patch: "*** Begin Patch\n*** Update File: a\nfoo\n*** End Patch", line: 3, msg: "is not a valid patch line"},
		{name: "misplaced move", patch: "*** Begin Patch\n*** Update File: a\n-x\n+y\n*** Move to: b\n*** End Patch", line: 5, msg: "must come right after"},
		{name: "stray end of file", patch: "*** Begin Patch\n*** Update File: a\n*** End of File\n*** End Patch", line: 3, msg: "with no hunk before it"},
		{name: "two patches", patch: "*** Begin Patch\n*** Delete File: a\n*** End Patch\n*** Begin Patch\n*** Delete File: b\n*** End Patch", line: 3, msg: "before the end of the patch"},
		{name: "heredoc line numbers are the given text's", patch: "<<EOF\n*** Begin Patch\n*** Update File: a\n@@\n*** End Patch\nEOF", line: 4, msg: "the hunk has no lines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParsePatch(tt.patch)
			var pe *PatchError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, tt.line, pe.Line, pe.Error())
			require.Contains(t, pe.Msg, tt.msg)
		})
	}
}
