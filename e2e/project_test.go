package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

const calcGo = `package calc

// Add returns the sum of a and b.
func Add(a, b int) int {
	return a - b
}
`

const calcTestGo = `package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("Add(2, 3) = %d, want 5", got)
	}
}
`

const mulPatch = `*** Begin Patch
*** Update File: calc.go
@@ func Add(a, b int) int {
 	return a + b
 }
+
+// Mul returns the product of a and b.
+func Mul(a, b int) int {
+	return a * b
+}
*** Add File: mul_test.go
+package calc
+
+import "testing"
+
+func TestMul(t *testing.T) {
+	if got := Mul(4, 5); got != 20 {
+		t.Fatalf("Mul(4, 5) = %d, want 20", got)
+	}
+}
*** End Patch`

// The scripted model works on a small Go project the way a real one would:
// it reads and greps, fixes a bug with edit, adds a function and its test
// with apply_patch, and runs go test through shell, every change approved.
func TestSessionEditsAndTestsAGoProject(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(
			sm.Call{ID: "c_read", Name: "read", Arguments: `{"path": "calc.go"}`},
			sm.Call{ID: "c_grep", Name: "grep", Arguments: `{"pattern": "func \\w+\\(", "include": "*.go"}`},
			sm.Call{ID: "c_glob", Name: "glob", Arguments: `{"pattern": "**/*_test.go"}`},
		),
		sm.Tools(sm.Call{ID: "c_edit", Name: "edit", Arguments: jsonArgs(t, map[string]any{"path": "calc.go", "old_string": "return a - b", "new_string": "return a + b"})}),
		sm.Tools(sm.Call{ID: "c_patch", Name: "apply_patch", Arguments: jsonArgs(t, map[string]any{"patch": mulPatch})}),
		sm.Tools(sm.Call{ID: "c_test", Name: "shell", Arguments: `{"command": "go test ./...", "timeout": 300}`}),
		sm.Text("fixed Add, added Mul, tests pass"),
	)
	for name, body := range map[string]string{
		"go.mod": "module example.com/calc\n\ngo 1.26\n", "calc.go": calcGo, "calc_test.go": calcTestGo,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(e.workspace, name), []byte(body), 0o644))
	}
	id := e.start(workflows.SessionInput{Prompt: "fix the calc package and add Mul"})

	// Approve each change as it comes, as a person at the CLI would.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := tc.GetWorkflow(ctx, id, "")
	done := make(chan error, 1)
	var r workflows.SessionResult
	go func() { done <- run.Get(ctx, &r) }()
	approved := map[string]bool{}
	for waiting := true; waiting; {
		select {
		case err := <-done:
			require.NoError(t, err)
			waiting = false
		case <-time.After(200 * time.Millisecond):
			for _, p := range pendingNow(id) {
				if !approved[p.CallID] {
					approved[p.CallID] = true
					out, err := e.starter("approve", id, p.CallID)
					require.NoError(t, err, out)
				}
			}
		}
	}
	require.Equal(t, workflows.ResultCompleted, r.Status)
	require.Equal(t, map[string]bool{"c_edit": true, "c_patch": true, "c_test": true}, approved)

	msgs := e.checkSession(id)
	require.Contains(t, resultFor(msgs, "c_read").Content, "return a - b")
	require.Contains(t, resultFor(msgs, "c_grep").Content, "calc.go:4:")
	require.Contains(t, resultFor(msgs, "c_glob").Content, "calc_test.go")
	require.Contains(t, resultFor(msgs, "c_edit").Content, "+\treturn a + b")
	require.Contains(t, resultFor(msgs, "c_patch").Content, "mul_test.go")
	test := resultFor(msgs, "c_test")
	require.Equal(t, conversation.ReasonRan, test.Reason, test.Content)
	require.Contains(t, test.Content, "ok")
	got, err := os.ReadFile(filepath.Join(e.workspace, "calc.go"))
	require.NoError(t, err)
	require.Contains(t, string(got), "return a + b")
	require.Contains(t, string(got), "func Mul(a, b int) int")
	require.FileExists(t, filepath.Join(e.workspace, "mul_test.go"))
}

func pendingNow(id string) []workflows.PendingApproval {
	val, err := tc.QueryWorkflow(context.Background(), id, "", workflows.QueryPendingApprovals)
	if err != nil {
		return nil
	}
	var p []workflows.PendingApproval
	if val.Get(&p) != nil {
		return nil
	}
	return p
}

func jsonArgs(t *testing.T, v map[string]any) string {
	t.Helper()
	var b strings.Builder
	enc := jsonEncoder(&b)
	require.NoError(t, enc.Encode(v))
	return strings.TrimSpace(b.String())
}
