package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/toolspec"
)

func TestBuiltinSpecs(t *testing.T) {
	t.Parallel()
	tools := Builtin(DefaultConfig())
	names := map[string]bool{}
	for _, tool := range tools {
		spec := tool.Spec()
		names[spec.Name] = true
		t.Run(spec.Name, func(t *testing.T) {
			t.Parallel()
			require.NotEmpty(t, spec.Description)
			require.Positive(t, spec.TimeoutSeconds)
			err := toolspec.CheckSchema(spec)
			require.NoError(t, err)
			var schema struct {
				Type                 string                     `json:"type"`
				Properties           map[string]json.RawMessage `json:"properties"`
				Required             []string                   `json:"required"`
				AdditionalProperties *bool                      `json:"additionalProperties"`
			}
			require.NoError(t, json.Unmarshal(spec.Parameters, &schema))
			require.Equal(t, "object", schema.Type)
			require.NotNil(t, schema.Required)
			require.NotNil(t, schema.AdditionalProperties)
			require.False(t, *schema.AdditionalProperties)
			for name, raw := range schema.Properties {
				var prop struct {
					Description string `json:"description"`
				}
				require.NoError(t, json.Unmarshal(raw, &prop))
				require.NotEmpty(t, prop.Description, "property %s", name)
			}
		})
	}
	require.Equal(t, map[string]bool{ReadName: true, ListName: true, GlobName: true, GrepName: true, WriteName: true, EditName: true, PatchName: true, ShellName: true,
		JobOutputName: true, JobListName: true, JobKillName: true, SkillName: true, WebFetchName: true}, names)
	require.NotPanics(t, func() { NewRegistry(tools...) })
	require.Equal(t, 600, NewShell(DefaultShellConfig()).Spec().TimeoutSeconds)
	require.True(t, NewRead().Spec().ReadOnly)
	require.True(t, NewList().Spec().ReadOnly)
	require.False(t, NewWrite().Spec().ReadOnly)
	require.False(t, NewShell(DefaultShellConfig()).Spec().ReadOnly)
	// The job tools touch only the session's own jobs and are safe to
	// retry: none of them asks for approval.
	for _, tool := range tools[len(tools)-4 : len(tools)-1] {
		require.True(t, tool.Spec().ReadOnly, tool.Spec().Name)
	}
}

// TestBuiltinOrder pins the order models and recorded histories see: new
// tools are appended, never inserted.
func TestBuiltinOrder(t *testing.T) {
	t.Parallel()
	var names []string
	for _, tool := range Builtin(DefaultConfig()) {
		names = append(names, tool.Spec().Name)
	}
	require.Equal(t, []string{ReadName, ListName, GlobName, GrepName, WriteName, EditName, PatchName, ShellName,
		JobOutputName, JobListName, JobKillName, SkillName, WebFetchName}, names)
}

// TestBuiltinSharesJobs checks that Builtin wires the shell and the job
// tools to the worker's job manager, so KillSession reaches what shell
// started.
func TestBuiltinSharesJobs(t *testing.T) {
	t.Parallel()
	jobs := NewJobs()
	t.Cleanup(jobs.Close)
	ts := Builtin(Config{Jobs: jobs, Shell: ShellConfig{Sandbox: SandboxOff}})
	reg := NewRegistry(ts...)
	shell, _ := reg.Lookup(ShellName)
	list, _ := reg.Lookup(JobListName)
	ws := testWorkspace(t, nil)
	env := Env{Workspace: ws, Session: "s", JobID: "job-1"}
	res := runTool(t, context.Background(), shell, env, ShellParams{Command: "sleep 30", Background: true})
	require.False(t, res.IsError, res.Content)
	require.Contains(t, runTool(t, context.Background(), list, env, struct{}{}).Content, "job-1  running for ")
	require.Equal(t, []string{"job-1"}, jobs.KillSession("s"))
}

func TestValidateBuiltinArguments(t *testing.T) {
	t.Parallel()
	shell := NewShell(DefaultShellConfig()).Spec()
	tests := []struct {
		name string
		spec Spec
		args string
		want []string // substrings of the error; none means valid
	}{
		{name: "read ok", spec: NewRead().Spec(), args: `{"path":"a","offset":3,"limit":10}`},
		{name: "read missing path", spec: NewRead().Spec(), args: `{}`, want: []string{"field `path`: required"}},
		{name: "read limit type", spec: NewRead().Spec(), args: `{"path":"a","limit":"x"}`, want: []string{"field `limit`:", "integer"}},
		{name: "read offset zero", spec: NewRead().Spec(), args: `{"path":"a","offset":0}`, want: []string{"field `offset`:"}},
		{name: "read unknown field", spec: NewRead().Spec(), args: `{"path":"a","lines":3}`, want: []string{"field `lines`: unknown field"}},
		{name: "read invalid json", spec: NewRead().Spec(), args: `{"path":`, want: []string{"arguments are not valid JSON", "send one JSON object"}},
		{name: "write missing content", spec: NewWrite().Spec(), args: `{"path":"a"}`, want: []string{"field `content`: required"}},
		{name: "list empty ok", spec: NewList().Spec(), args: ``},
		{name: "shell timeout max", spec: shell, args: `{"command":"ls","timeout":601}`, want: []string{"field `timeout`:"}},
		{name: "shell ok", spec: shell, args: `{"command":"ls","timeout":600,"workdir":"x"}`},
		{name: "shell background", spec: shell, args: `{"command":"ls","background":true}`},
		{name: "shell background type", spec: shell, args: `{"command":"ls","background":"yes"}`, want: []string{"field `background`:"}},
		{name: "job_output ok", spec: NewJobOutput(nil, 0).Spec(), args: `{"id":"job-1","tail":5}`},
		{name: "job_output missing id", spec: NewJobOutput(nil, 0).Spec(), args: `{}`, want: []string{"field `id`: required"}},
		{name: "job_output tail zero", spec: NewJobOutput(nil, 0).Spec(), args: `{"id":"job-1","tail":0}`, want: []string{"field `tail`:"}},
		{name: "job_list empty ok", spec: NewJobList(nil).Spec(), args: ``},
		{name: "job_kill missing id", spec: NewJobKill(nil).Spec(), args: `{}`, want: []string{"field `id`: required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateArguments(tt.spec, tt.args)
			if len(tt.want) == 0 {
				require.NoError(t, err)
				return
			}
			var ae *ArgumentError
			require.ErrorAs(t, err, &ae)
			require.Equal(t, tt.spec.Name, ae.Tool)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}
