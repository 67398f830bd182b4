package workflows

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/tools"
	"github.com/longrun/longrun/toolsearch"
)

// TestSelfToolSchemasMatchGolden: the tools the session answers itself
// generate their schemas from their Params structs, and the model sees
// what it saw when they were written by hand (testdata/schemas holds
// those, as they were).
func TestSelfToolSchemasMatchGolden(t *testing.T) {
	t.Parallel()
	for _, sp := range []tools.Spec{todoSpec(), taskSpec(), toolsearch.SearchSpec()} {
		t.Run(sp.Name, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(filepath.Join("testdata", "schemas", sp.Name+".json"))
			require.NoError(t, err)
			var want, have any
			require.NoError(t, json.Unmarshal(raw, &want))
			require.NoError(t, json.Unmarshal(sp.Parameters, &have), "generated: %s", sp.Parameters)
			require.Equal(t, want, have, "generated: %s", sp.Parameters)
		})
	}
	// Every self tool is checked.
	require.Len(t, selfTools, 3)
}
