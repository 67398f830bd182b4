package main

import (
	"bytes"
	"context"
	"flag"
	"testing"

	"github.com/stretchr/testify/require"
)

// An unknown profile or a rule naming no tool is refused before the CLI
// even connects: exit 2, the reason with a hint, and nothing started.
func TestStartValidatesProfileAndRulesBeforeStarting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown profile", []string{"start", "--profile", "xyz", "hi"}, []string{`--profile "xyz" is not a profile: use build, plan or auto`, "nothing was started"}},
		{"profile typo", []string{"start", "--profile", "plna", "hi"}, []string{`did you mean "plan"?`}},
		{"unknown allow tool", []string{"start", "--allow", "shel", "hi"}, []string{`--allow "shel": no tool is called "shel", did you mean "shell"?`, "nothing was started"}},
		{"unknown deny tool with pattern", []string{"start", "--deny-rule", "wirte:secrets/**", "hi"}, []string{`--deny-rule "wirte:secrets/**"`, `did you mean "write"?`}},
		{"schedule too", []string{"schedule", "create", "--every", "1h", "--allow", "shel", "n1", "--prompt", "hi"}, []string{`did you mean "shell"?`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errb bytes.Buffer
			a := &app{stdout: &out, stderr: &errb, getenv: noEnv,
				dial: func(context.Context, config) (sessionClient, error) {
					t.Error("the CLI connected to Temporal for input it must refuse first")
					return nil, context.Canceled
				}}
			code := a.run(context.Background(), tc.args)
			require.Equal(t, exitUsage, code, errb.String())
			for _, w := range tc.want {
				require.Contains(t, errb.String(), w)
			}
			require.NotContains(t, errb.String(), "Flags:", "the reason is not buried under the usage screen")
			require.Empty(t, out.String())
		})
	}
}

// Names a worker may add are not refused: wildcards and MCP tools.
func TestStartAcceptsWildcardAndMCPRules(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("start", flag.ContinueOnError)
	o, err := parseStart(fs, []string{"--allow", "*", "--allow", "shell:go test *", "--deny-rule", "github__delete_repo", "--profile", "plan", "hi"})
	require.NoError(t, err)
	require.Len(t, o.input.Rules, 3)
}
