package activities

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/permission"
)

// An untrusted workspace's .longrun/permissions.json is not read, even
// malformed; the session's notes say so, and the worker's own rules come
// through either way (issue 15 finding 4).
func TestWorkspaceRulesNeedTrust(t *testing.T) {
	t.Parallel()
	workerRules := []permission.Rule{{Tool: "shell", Pattern: "make *", Action: permission.Allow}}
	for _, tc := range []struct {
		name    string
		trusted bool
	}{{"untrusted", false}, {"trusted", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, root := newActs(t, nil)
			a = a.with(func(c *Config) {
				c.Worker = WorkerConfig{Rules: workerRules, TrustWorkspace: tc.trusted, Notes: []string{"from the worker"}}
			})
			write(t, root, "sub/.longrun/permissions.json", `{"rules":[{"tool":"shell","pattern":"*","action":"allow"}]}`)
			wc, err := a.LoadWorkspaceConfig(context.Background(), "sub")
			require.NoError(t, err)
			require.Equal(t, workerRules, wc.WorkerRules)
			if !tc.trusted {
				require.Empty(t, wc.Rules, "the model could have written these rules")
				require.Empty(t, wc.Path)
				require.Equal(t, []string{"from the worker", "sub/.longrun/permissions.json ignored: the workspace is not trusted; see README Security model"}, wc.Notes)
				write(t, root, "sub/.longrun/permissions.json", `not json`)
				_, err = a.LoadWorkspaceConfig(context.Background(), "sub")
				require.NoError(t, err, "an ignored file is never an error")
				return
			}
			require.Equal(t, []permission.Rule{{Tool: "shell", Pattern: "*", Action: permission.Allow}}, wc.Rules)
			require.Equal(t, filepath.Join("sub", PermissionsFile), wc.Path)
			require.Equal(t, []string{"from the worker"}, wc.Notes)
		})
	}

	// No file: no note, in either case.
	a, _ := newActs(t, nil)
	wc, err := a.LoadWorkspaceConfig(context.Background(), "")
	require.NoError(t, err)
	require.Empty(t, wc.Notes)
}

func TestLoadRulesFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "permissions.json")
	rules, err := LoadRulesFile(path, permission.LayerWorker)
	require.NoError(t, err)
	require.Nil(t, rules, "no file, no rules")
	require.NoError(t, os.WriteFile(path, []byte(`{"rules":[{"tool":"shell","pattern":"go test *","action":"allow"}]}`), 0o600))
	rules, err = LoadRulesFile(path, permission.LayerWorker)
	require.NoError(t, err)
	require.Equal(t, []permission.Rule{{Tool: "shell", Pattern: "go test *", Action: permission.Allow}}, rules)
	require.NoError(t, os.WriteFile(path, []byte(`{"rules":[{"tool":"shell","action":"maybe"}]}`), 0o600))
	_, err = LoadRulesFile(path, permission.LayerWorker)
	require.ErrorContains(t, err, path+": ")
}
