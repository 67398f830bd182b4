package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/checkout"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// A workspace that is not a git repository gets a copy under the state
// directory: the session's write lands there, not in the workspace; its
// result, status and starter diff show the change against the directory
// as it was; starter apply copies it back; discard removes the copy.
func TestSessionOutsideGitWorksInACopy(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(sm.Call{ID: "r1", Name: "read", Arguments: `{"path": "notes.txt"}`}),
		sm.Tools(sm.Call{ID: "w1", Name: "write", Arguments: `{"path": "notes.txt", "content": "new notes\n"}`}),
		sm.Text("Wrote notes"),
	)
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, "notes.txt"), []byte("old notes\n"), 0o644))
	id := "e2e-copy-" + randHex(4)
	out, err := e.starter("start", "--id", id, "--profile", "auto", "write the notes")
	require.NoError(t, err, out)
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	require.Equal(t, checkout.Branch(id), r.Branch)
	require.NotEmpty(t, r.Commit, "the write is committed on the branch: %+v", r)
	require.NotNil(t, r.Changes)
	require.Equal(t, 1, r.Changes.Files)
	copyDir := filepath.Join(e.stateDir, checkout.Dir, checkout.Sanitize(id))
	b, err := os.ReadFile(filepath.Join(copyDir, "notes.txt"))
	require.NoError(t, err)
	require.Equal(t, "new notes\n", string(b), "the write landed in the copy")
	b, _ = os.ReadFile(filepath.Join(e.workspace, "notes.txt"))
	require.Equal(t, "old notes\n", string(b), "the workspace is untouched")

	out, err = e.starter("status", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "1 file changed, +1 -1")
	out, err = e.starter("diff", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "-old notes\n+new notes\n")

	out, err = e.starter("apply", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "1 files written or removed (notes.txt)")
	b, _ = os.ReadFile(filepath.Join(e.workspace, "notes.txt"))
	require.Equal(t, "new notes\n", string(b), "apply copied the change back")

	out, err = e.starter("discard", id)
	require.NoError(t, err, out)
	require.NoDirExists(t, copyDir)
}
