package toolspec

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/permission"
)

// TestKind: a declared kind is the kind; a spec recorded before kinds
// existed (no subject_kind in its JSON) reads as the engine then treated
// it, so a recorded catalog replays with the same decisions.
func TestKind(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		spec string
		want permission.Kind
	}{
		{"declared command", `{"name":"run","subject_arg":"line","subject_kind":"command"}`, permission.KindCommand},
		{"declared path", `{"name":"note","subject_arg":"command","subject_kind":"path"}`, permission.KindPath},
		{"recorded shell", `{"name":"shell","subject_arg":"command"}`, permission.KindCommand},
		{"recorded web_fetch", `{"name":"web_fetch","subject_arg":"url","web":true}`, permission.KindURL},
		{"recorded web_search", `{"name":"web_search","web":true}`, permission.KindNone},
		{"recorded write", `{"name":"write","subject_arg":"path","paths":"path"}`, permission.KindPath},
		{"recorded apply_patch", `{"name":"apply_patch","paths":"patch"}`, permission.KindNone},
		{"an MCP tool", `{"name":"mcp_x","server":"x"}`, permission.KindNone},
	} {
		var s Spec
		require.NoError(t, json.Unmarshal([]byte(tt.spec), &s), tt.name)
		require.Equal(t, tt.want, s.Kind(), tt.name)
	}
	// The host of a URL subject is what the rules match.
	s := Spec{Name: "web_fetch", SubjectArg: "url", Web: true}
	require.Equal(t, "go.dev", s.Subject(map[string]any{"url": "https://Go.Dev./doc"}))
	s = Spec{Name: "run", SubjectArg: "line", SubjectKind: SubjectCommand}
	require.Equal(t, "ls -la", s.Subject(map[string]any{"line": "ls -la"}))
}
