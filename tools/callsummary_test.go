package tools

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCallSummary (moved from workflows, which only calls CallSummary).
func TestCallSummary(t *testing.T) {
	t.Parallel()
	specs := map[string]Spec{}
	for _, tl := range Builtin(DefaultConfig()) {
		specs[tl.Spec().Name] = tl.Spec()
	}
	summary := func(name, args string) string {
		return CallSummary(name, specs[name], args)
	}
	for args, want := range map[string]string{
		`{"path":"README.md","offset":1,"limit":200}`: "read: README.md [1-200]",
		`{"path":"README.md","offset":50}`:            "read: README.md [50-]",
		`{"path":"README.md","limit":10}`:             "read: README.md [1-10]",
		`{"path":"README.md"}`:                        "read: README.md",
	} {
		require.Equal(t, want, summary("read", args))
	}
	require.Equal(t, "shell: go test ./...", summary("shell", `{"command":"go test ./..."}`))
	require.Equal(t, "job_output: job-1", summary("job_output", `{"id":"job-1"}`))
	require.Equal(t, "apply_patch", summary("apply_patch", `{"patch":"x"}`))
	require.Equal(t, "mcp_lookup", summary("mcp_lookup", `{"path":"x"}`), "an unknown tool is its name")
}
