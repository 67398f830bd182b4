package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// --deployment and --build-id: both or neither, from the flags or
// LONGRUN_DEPLOYMENT / LONGRUN_BUILD_ID, in the form the server takes; a
// mistake names the flag to fix.
func TestDeploymentFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    deploymentFlags
		wantErr string
	}{
		{name: "unversioned by default"},
		{name: "flags", args: []string{"--deployment", "longrun", "--build-id", "v2"}, want: deploymentFlags{"longrun", "v2"}},
		{name: "environment", env: map[string]string{"LONGRUN_DEPLOYMENT": "longrun", "LONGRUN_BUILD_ID": "abc123"}, want: deploymentFlags{"longrun", "abc123"}},
		{name: "flag over environment", args: []string{"--build-id", "v3"}, env: map[string]string{"LONGRUN_DEPLOYMENT": "longrun", "LONGRUN_BUILD_ID": "v2"}, want: deploymentFlags{"longrun", "v3"}},
		{name: "build id alone", args: []string{"--build-id", "v2"}, wantErr: "--build-id v2 without --deployment"},
		{name: "deployment alone", env: map[string]string{"LONGRUN_DEPLOYMENT": "longrun"}, wantErr: "--deployment longrun without --build-id"},
		{name: "dot in the name", args: []string{"--deployment", "longrun.prod", "--build-id", "v2"}, wantErr: `--deployment "longrun.prod": a deployment name cannot contain '.' or ':'`},
		{name: "reserved build id", args: []string{"--deployment", "longrun", "--build-id", "__x"}, wantErr: "cannot start with '__'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := ParseFlags(tt.args, env(tt.env))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, m.deployment)
		})
	}
}

// Only the workers that run sessions are versioned, and only when the
// flags are given; the session is registered pinned then, and as it
// always was otherwise.
func TestDeploymentOptions(t *testing.T) {
	t.Parallel()
	base := worker.Options{WorkerStopTimeout: time.Minute}
	var none deploymentFlags
	require.Equal(t, base, none.sessionOptions(base))
	require.Equal(t, workflow.RegisterOptions{Name: "AgentSession"}, none.registerOptions("AgentSession"))

	d := deploymentFlags{name: "longrun", buildID: "v2"}
	o := d.sessionOptions(base)
	require.Equal(t, time.Minute, o.WorkerStopTimeout, "the drain still holds")
	require.True(t, o.DeploymentOptions.UseVersioning)
	require.Equal(t, worker.WorkerDeploymentVersion{DeploymentName: "longrun", BuildID: "v2"}, o.DeploymentOptions.Version)
	require.Equal(t, workflow.VersioningBehaviorPinned, d.registerOptions("AgentSession").VersioningBehavior)
	require.False(t, base.DeploymentOptions.UseVersioning, "the options of the other queues are left as they were")
}
