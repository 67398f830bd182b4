package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/tools"
)

// A prepared lsp_rename waits with its patch as an argument: the console
// shows it as a diff, file by file, as it shows an apply_patch.
func TestRenameApprovalShowsItsPatch(t *testing.T) {
	t.Parallel()
	patch := "*** Begin Patch\n*** Update File: a.go\n@@\n-func Total() {}\n+func Sum() {}\n*** Update File: b.go\n@@\n-var x = Total\n+var x = Sum\n*** End Patch\n"
	args, _ := json.Marshal(map[string]string{"path": "a.go", "symbol": "Total", "new_name": "Sum", "patch": patch})
	var shown *fieldView
	for _, f := range argumentFields(tools.LSPRenameName, string(args), 0) {
		if f.Key == "patch" {
			shown = &f
		}
	}
	require.NotNil(t, shown)
	require.NotEmpty(t, shown.Diff, "the patch is shown as a diff")
	var files []string
	for _, l := range shown.Diff {
		if l.Kind == diffFile {
			files = append(files, l.Text)
		}
	}
	require.Contains(t, files, "*** Update File: a.go")
	require.Contains(t, files, "*** Update File: b.go")
}
