package permission

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// ShellTool is the built-in command tool's name, as the tests write rules
// and calls for it. The engine itself never compares a name with it: a
// call's Kind says what its subject is.
const ShellTool = "shell"

// kindOf is the kind the built-in tools the tests name declare.
func kindOf(tool string) Kind {
	switch tool {
	case ShellTool, "run": // run: a second command tool
		return KindCommand
	case "web_fetch":
		return KindURL
	case "read", "write", "edit", "list", "glob", "grep", "apply_patch":
		return KindPath
	}
	return KindNone
}

// TestASecondCommandToolIsACommand: a tool named other than shell whose
// calls are of kind command gets everything a shell call gets: the hard
// block, the read-only classifier (and so the read-only sandbox), command
// patterns, exact remembered rules, no control-file ask (the sandbox
// confines it), the no-sandbox ask; and the same call of kind path gets
// none of it.
func TestASecondCommandToolIsACommand(t *testing.T) {
	t.Parallel()
	run := func(line string) Call { return Call{Tool: "run", Kind: KindCommand, Subject: line} }
	e, err := New(Config{Profile: ProfileAuto})
	require.NoError(t, err)
	d := e.Decide(run("curl x | sh"))
	require.Equal(t, Deny, d.Action, d.Reason)
	require.Equal(t, LayerHardBlock, d.Layer)
	asPath := Call{Tool: "run", Kind: KindPath, Subject: "curl x | sh"}
	require.NotEqual(t, LayerHardBlock, e.Decide(asPath).Layer, "the hard block is for commands, not for a path that reads like one")

	e, err = New(Config{})
	require.NoError(t, err)
	d = e.Decide(run("git status && ls"))
	require.Equal(t, Allow, d.Action, d.Reason)
	require.True(t, d.Classified, "allowed by the read-only classifier: it runs in the read-only sandbox")
	require.Equal(t, Ask, e.Decide(Call{Tool: "run", Kind: KindPath, Subject: "git status"}).Action)

	r := Remembered(run(" go test ./... "), "")
	require.Equal(t, Rule{Tool: "run", Pattern: "go test ./...", Action: Allow, Exact: true}, r)
	require.NoError(t, e.Remember(r))
	require.Equal(t, Allow, e.Decide(run("go test ./...")).Action)
	require.Equal(t, Ask, e.Decide(run("go test ./... -exec x")).Action)

	e, err = New(Config{Layers: []Layer{layer(LayerSession, Rule{Tool: "run", Pattern: "git *", Action: Allow})}})
	require.NoError(t, err)
	require.Equal(t, Allow, e.Decide(run("git log -p")).Action, "a command pattern matches each command")
	require.Equal(t, Ask, e.Decide(run("git log && rm -rf x")).Action)
	require.Equal(t, Allow, e.Decide(run("git add .git/config")).Action, "a command names no control file")
	require.True(t, e.Visible("run", KindCommand, false))

	e, err = New(Config{NoSandbox: true})
	require.NoError(t, err)
	d = e.Decide(run("ls"))
	require.Equal(t, Ask, d.Action, d.Reason)
	require.Equal(t, LayerSandbox, d.Layer)

	e, err = New(Config{Approver: ApproverNone})
	require.NoError(t, err)
	require.Contains(t, e.Decide(run("make build")).Reason, `{"tool":"run","pattern":"make *","action":"allow"}`)
}

// TestCallKindIsRecorded: a call's kind is always written, and a call
// recorded before kinds existed reads as it was decided then: the shell
// tool's as a command, a web call's host as a URL, any other subject as a
// path.
func TestCallKindIsRecorded(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(Call{Tool: "mcp_x"})
	require.NoError(t, err)
	require.JSONEq(t, `{"tool":"mcp_x","kind":""}`, string(b))
	var back Call
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, Call{Tool: "mcp_x"}, back)

	for _, tt := range []struct {
		old  string
		want Kind
	}{
		{`{"tool":"shell","subject":"ls"}`, KindCommand},
		{`{"tool":"web_fetch","read_only":true,"subject":"go.dev","web":true}`, KindURL},
		{`{"tool":"web_search","read_only":true,"web":true}`, KindNone},
		{`{"tool":"write","subject":"a.go","paths":["a.go"]}`, KindPath},
		{`{"tool":"apply_patch","paths":["a.go"]}`, KindNone},
		{`{"tool":"run","kind":"command","subject":"ls"}`, KindCommand},
		{`{"tool":"shell","kind":"path","subject":"ls"}`, KindPath},
	} {
		var c Call
		require.NoError(t, json.Unmarshal([]byte(tt.old), &c), tt.old)
		require.Equal(t, tt.want, c.Kind, tt.old)
	}
}
