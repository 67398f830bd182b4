package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// history shows each decision with its call id: the approve update and
// the approval signal, read from histories recorded on the real server.
func TestHistoryShowsApprovalCallAndDecision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, want string }{
		{"approve_read_write_shell.json", "approve update: call c2, decision approve"},
		{"approve_read_write_shell.json", "decided approve for c3"},
		{"deny_with_feedback.json", "decision deny, feedback "},
	} {
		f, err := os.Open("../workflows/testdata/" + tc.file)
		require.NoError(t, err)
		h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
		f.Close()
		require.NoError(t, err)
		var b bytes.Buffer
		renderHistory(&b, converter.GetDefaultDataConverter(), h)
		require.Contains(t, b.String(), tc.want, "%s:\n%s", tc.file, b.String())
	}
}
