package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The files under testdata/schemas are the parameter schemas models were
// sent when each one was still written by hand. They are not regenerated
// from the code: a change to what a model is told about a tool's arguments
// is a change to one of these files, made on purpose and seen in review.

// TestParamSchemasMatchGolden checks that every built-in tool's parameter
// schema means exactly what its golden file says: the same types,
// descriptions, required lists, enums, bounds and additionalProperties.
// Key order and whitespace may differ; validation and the model read the
// schema as JSON, not as text.
func TestParamSchemasMatchGolden(t *testing.T) {
	t.Parallel()
	var names []string
	for _, tool := range Builtin(DefaultConfig()) {
		spec := tool.Spec()
		names = append(names, spec.Name+".json")
		t.Run(spec.Name, func(t *testing.T) {
			t.Parallel()
			requireSchemaEqual(t, filepath.Join("testdata", "schemas", spec.Name+".json"), spec.Parameters)
		})
	}
	// A golden file for a tool that no longer exists is a schema nobody checks.
	files, err := filepath.Glob(filepath.Join("testdata", "schemas", "*.json"))
	require.NoError(t, err)
	var golden []string
	for _, f := range files {
		if base := filepath.Base(f); !strings.HasPrefix(base, ShellName+"_") {
			golden = append(golden, base)
		}
	}
	sort.Strings(names)
	require.Equal(t, names, golden)
}

// TestShellSchemaFollowsConfig checks the one schema that depends on the
// worker's configuration: shell's timeout bound and its description.
func TestShellSchemaFollowsConfig(t *testing.T) {
	t.Parallel()
	spec := NewShell(ShellConfig{DefaultTimeout: 45 * time.Second, MaxTimeout: 90 * time.Second}).Spec()
	requireSchemaEqual(t, filepath.Join("testdata", "schemas", "shell_max90s.json"), spec.Parameters)
}

func requireSchemaEqual(t *testing.T, goldenFile string, got json.RawMessage) {
	t.Helper()
	raw, err := os.ReadFile(goldenFile)
	require.NoError(t, err, "every built-in tool needs its schema pinned in %s", goldenFile)
	var want, have any
	require.NoError(t, json.Unmarshal(raw, &want), goldenFile)
	require.NoError(t, json.Unmarshal(got, &have), "generated schema: %s", got)
	require.Equal(t, want, have, "generated schema: %s", got)
}

// TestValidationMatchesGolden checks that arguments are accepted or refused
// by the generated schemas exactly as by the golden ones, with the same
// message to the model: for every property, values of each JSON kind,
// empty and out of range, plus an unknown field and no arguments at all.
func TestValidationMatchesGolden(t *testing.T) {
	t.Parallel()
	values := []string{`""`, `"x"`, `0`, `1`, `-1`, `100000`, `1.5`, `true`, `null`, `[]`, `{}`, `"content"`}
	for _, tool := range Builtin(DefaultConfig()) {
		spec := tool.Spec()
		t.Run(spec.Name, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(filepath.Join("testdata", "schemas", spec.Name+".json"))
			require.NoError(t, err)
			golden := Spec{Name: spec.Name, Parameters: raw}
			var schema struct {
				Properties map[string]any `json:"properties"`
			}
			require.NoError(t, json.Unmarshal(raw, &schema))
			args := []string{``, `{}`, `[]`, `{"unknown_field":1}`}
			for name := range schema.Properties {
				for _, v := range values {
					args = append(args, `{"`+name+`":`+v+`}`)
				}
			}
			for _, a := range args {
				want, got := ValidateArguments(golden, a), ValidateArguments(spec, a)
				if want == nil {
					require.NoError(t, got, a)
					continue
				}
				require.Error(t, got, a)
				require.Equal(t, want.Error(), got.Error(), a)
			}
		})
	}
}

// TestParamsSchemaRefusesWhatItCannotDescribe checks that a Params struct
// the library cannot turn into a schema stops the program at once rather
// than sending a model a wrong schema.
func TestParamsSchemaRefusesWhatItCannotDescribe(t *testing.T) {
	t.Parallel()
	type withFunc struct {
		F func() `json:"f"`
	}
	type withReservedTag struct {
		S string `json:"s" jsonschema:"minimum=1"`
	}
	require.Panics(t, func() { paramsSchema[withFunc](nil) })
	require.Panics(t, func() { paramsSchema[withReservedTag](nil) })
}
