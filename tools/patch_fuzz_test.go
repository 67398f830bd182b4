package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// patchFuzzSeeds are the corpus both fuzz targets start from: valid patches
// of every kind and a few near misses.
var patchFuzzSeeds = []string{
	"*** Begin Patch\n*** Add File: n.txt\n+hello\n*** End Patch",
	"*** Begin Patch\n*** Delete File: a.txt\n*** End Patch",
	"*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+2\n three\n*** End Patch",
	"*** Begin Patch\n*** Update File: a.txt\n*** Move to: d/b.txt\n@@ one\n-two\n+TWO\n*** End of File\n*** End Patch",
	"*** Begin Patch\r\n*** Update File: crlf.txt\r\n-x\r\n+y\r\n*** End Patch\r\n",
	"<<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n-one\n+1\n*** Add File: a.txt\n+x\n*** End Patch\nEOF",
	"*** Update File: a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n\n+2\n*** End Patch",
	"*** Begin Patch\n*** Update File: a.txt\n-one\n+1\n*** Update File: missing.txt\n-x\n+y\n*** End Patch",
	"*** Begin Patch\n*** Update File: ../a.txt\n-one\n*** End Patch",
	"cat <<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n+four\n@@\n-one\n+1\n*** End Patch\nEOF",
	"*** Begin Patch\n*** Update File: d/e.txt\n-e\u2014 \u201cq\u201d\n+cafe\u0301\n*** End Patch",
}

func FuzzParsePatch(f *testing.F) {
	for _, s := range patchFuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParsePatch(text)
		if err != nil {
			var pe *PatchError
			require.ErrorAs(t, err, &pe)
			require.Nil(t, p)
			return
		}
		require.NotEmpty(t, p.Files)
		for _, fp := range p.Files {
			require.NotEmpty(t, fp.Path)
			for _, h := range fp.Hunks {
				require.Len(t, h.Context, len(h.New))
				require.Equal(t, len(h.Old)-h.Removed, len(h.New)-h.Added)
			}
		}
	})
}

func FuzzApplyPatch(f *testing.F) {
	for _, s := range patchFuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ws := testWorkspace(t, map[string]string{
			"a.txt":    "one\ntwo\nthree\n",
			"crlf.txt": "\ufeffx\r\nz\r\n",
			"d/e.txt":  "e\u2014 \u201cq\u201d  \n\tlast",
		})
		before := patchTree(t, ws.Root())
		raw, err := json.Marshal(PatchParams{Patch: text})
		require.NoError(t, err)
		res, err := NewApplyPatch().Run(context.Background(), Env{Workspace: ws}, raw)
		if err != nil || res.IsError {
			require.Equal(t, before, patchTree(t, ws.Root()), "failed patch changed the tree: %v %s", err, res.Content)
			return
		}
		require.Contains(t, res.Content, "Success.")
	})
}
