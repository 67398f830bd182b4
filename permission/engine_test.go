package permission

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// Tool calls used across the tests.
var (
	readCall  = Call{Tool: "read", ReadOnly: true, Subject: "docs/a.md"}
	writeDocs = Call{Tool: "write", Subject: "docs/guide/a.md"}
	writeMain = Call{Tool: "write", Subject: "main.go"}
	gitStatus = Call{Tool: ShellTool, Kind: KindCommand, Subject: "git status"}
	gitPush   = Call{Tool: ShellTool, Kind: KindCommand, Subject: "git push origin main"}
	goTest    = Call{Tool: ShellTool, Kind: KindCommand, Subject: "go test ./..."}
)

func layer(name string, rules ...Rule) Layer { return Layer{Name: name, Rules: rules} }

func TestDecide(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		cfg        Config
		remember   []Rule
		call       Call
		want       Action
		wantLayer  string
		wantRule   *Rule
		wantReason string
	}{
		// Defaults.
		{name: "default read-only tool allowed", call: readCall, want: Allow, wantLayer: LayerDefaults, wantReason: "default: tool read only reads"},
		{name: "default write asks", call: writeMain, want: Ask, wantLayer: LayerDefaults, wantReason: "default: tool write can change"},
		{name: "default edit asks", call: Call{Tool: "edit", Subject: "a.go"}, want: Ask, wantLayer: LayerDefaults},
		{name: "default apply_patch asks", call: Call{Tool: "apply_patch"}, want: Ask, wantLayer: LayerDefaults},
		{name: "default unknown tool asks", call: Call{Tool: "mcp_x"}, want: Ask, wantLayer: LayerDefaults},
		{name: "default shell asks", call: goTest, want: Ask, wantLayer: LayerDefaults},
		{name: "read-only shell command allowed", call: gitStatus, want: Allow, wantLayer: LayerDefaults, wantReason: "read-only classification"},
		{name: "caller marks shell read-only", call: Call{Tool: ShellTool, Kind: KindCommand, Subject: "mytool --dry", ShellReadOnly: true}, want: Allow, wantLayer: LayerDefaults},

		// Layers and precedence.
		{
			name: "workspace rule applies",
			cfg:  Config{Layers: []Layer{layer(LayerWorkspace, Rule{Tool: ShellTool, Pattern: "go test *", Action: Allow})}},
			call: goTest, want: Allow, wantLayer: LayerWorkspace,
			wantRule:   &Rule{Tool: ShellTool, Pattern: "go test *", Action: Allow},
			wantReason: `rule shell:"go test *" -> allow in layer workspace`,
		},
		{
			name: "session outranks workspace",
			cfg: Config{Layers: []Layer{
				layer(LayerWorkspace, Rule{Tool: ShellTool, Pattern: "git *", Action: Deny}),
				layer(LayerSession, Rule{Tool: ShellTool, Pattern: "git *", Action: Allow}),
			}},
			call: gitPush, want: Allow, wantLayer: LayerSession,
			wantReason: `rule shell:"git *" -> allow in layer session`,
		},
		{
			name:     "remembered outranks session",
			cfg:      Config{Layers: []Layer{layer(LayerSession, Rule{Tool: "write", Action: Deny})}},
			remember: []Rule{{Tool: "write", Pattern: "docs/**", Action: Allow}},
			call:     writeDocs, want: Allow, wantLayer: LayerRemembered,
			wantRule: &Rule{Tool: "write", Pattern: "docs/**", Action: Allow},
		},
		{
			name: "a layer without a match does not override",
			cfg: Config{Layers: []Layer{
				layer(LayerWorkspace, Rule{Tool: "write", Pattern: "docs/**", Action: Allow}),
				layer(LayerSession, Rule{Tool: "write", Pattern: "src/**", Action: Deny}),
			}},
			call: writeDocs, want: Allow, wantLayer: LayerWorkspace,
		},
		{
			name: "last matching rule in a layer wins",
			cfg: Config{Layers: []Layer{layer(LayerWorkspace,
				Rule{Tool: "*", Action: Ask},
				Rule{Tool: ShellTool, Pattern: "git *", Action: Allow},
				Rule{Tool: ShellTool, Pattern: "git push *", Action: Ask},
			)}},
			call: gitPush, want: Ask, wantLayer: LayerWorkspace,
			wantRule: &Rule{Tool: ShellTool, Pattern: "git push *", Action: Ask},
		},
		{
			name: "order matters: a broad rule last overrides",
			cfg: Config{Layers: []Layer{layer(LayerWorkspace,
				Rule{Tool: ShellTool, Pattern: "git push *", Action: Deny},
				Rule{Tool: ShellTool, Action: Allow},
			)}},
			call: gitPush, want: Allow, wantRule: &Rule{Tool: ShellTool, Action: Allow},
		},
		{
			name: "tool wildcard",
			cfg:  Config{Layers: []Layer{layer(LayerWorkspace, Rule{Tool: "mcp_github_*", Action: Deny})}},
			call: Call{Tool: "mcp_github_create_issue"}, want: Deny, wantReason: "rule mcp_github_* -> deny in layer workspace",
		},
		{
			name: "rules can ask for a read-only tool",
			cfg:  Config{Layers: []Layer{layer(LayerWorkspace, Rule{Tool: "read", Pattern: ".env*", Action: Ask})}},
			call: Call{Tool: "read", ReadOnly: true, Subject: ".env.local"}, want: Ask, wantLayer: LayerWorkspace,
		},

		// Pattern types.
		{
			name: "path glob with **",
			cfg:  Config{Layers: []Layer{layer(LayerWorkspace, Rule{Tool: "write", Pattern: "docs/**", Action: Allow})}},
			call: writeDocs, want: Allow,
		},
		{
			name: "path glob does not match elsewhere",
			cfg:  Config{Layers: []Layer{layer(LayerWorkspace, Rule{Tool: "write", Pattern: "docs/**", Action: Allow})}},
			call: writeMain, want: Ask, wantLayer: LayerDefaults,
		},
		{
			name: "path is cleaned before matching",
			cfg:  Config{Layers: []Layer{layer(LayerWorkspace, Rule{Tool: "*", Pattern: "secrets/**", Action: Deny})}},
			call: Call{Tool: "read", ReadOnly: true, Subject: "./docs/../secrets/key"}, want: Deny,
		},
		{
			name: "shell pattern must match every command",
			cfg:  Config{Layers: []Layer{layer(LayerSession, Rule{Tool: ShellTool, Pattern: "git *", Action: Allow})}},
			call: Call{Tool: ShellTool, Kind: KindCommand, Subject: "git add . && rm -rf build"}, want: Ask, wantLayer: LayerDefaults,
		},
		{
			name: "shell deny catches a wrapped command",
			cfg:  Config{Layers: []Layer{layer(LayerWorkspace, Rule{Tool: ShellTool, Pattern: "rm *", Action: Deny})}},
			call: Call{Tool: ShellTool, Kind: KindCommand, Subject: "ls && env /bin/rm -r build"}, want: Deny,
			wantReason: `rule shell:"rm *" -> deny in layer workspace (command "rm -r build")`,
		},
		{
			name: "shell allow for all commands of a line",
			cfg: Config{Layers: []Layer{layer(LayerSession,
				Rule{Tool: ShellTool, Pattern: "go *", Action: Allow},
				Rule{Tool: ShellTool, Pattern: "gofmt *", Action: Allow},
			)}},
			call: Call{Tool: ShellTool, Kind: KindCommand, Subject: "gofmt -l . && go test ./..."}, want: Allow,
		},

		// Hard blocks.
		{
			name: "hard block outranks allow rules",
			cfg:  Config{Layers: []Layer{layer(LayerSession, Rule{Tool: "*", Action: Allow})}},
			call: Call{Tool: ShellTool, Kind: KindCommand, Subject: "sudo r''m -rf /"}, want: Deny, wantLayer: LayerHardBlock,
			wantReason: "blocked by rule rm-root",
		},

		// Profiles.
		{name: "plan denies write", cfg: Config{Profile: ProfilePlan}, call: writeMain, want: Deny, wantLayer: LayerProfile, wantReason: "profile plan is read-only"},
		{name: "plan denies shell even read-only", cfg: Config{Profile: ProfilePlan}, call: gitStatus, want: Deny, wantLayer: LayerProfile},
		{
			name: "plan denies even with an allow rule",
			cfg:  Config{Profile: ProfilePlan, Layers: []Layer{layer(LayerSession, Rule{Tool: "*", Action: Allow})}},
			call: writeMain, want: Deny, wantLayer: LayerProfile,
		},
		{name: "plan allows reads", cfg: Config{Profile: ProfilePlan}, call: readCall, want: Allow},
		{name: "auto allows write in the workspace", cfg: Config{Profile: ProfileAuto}, call: writeMain, want: Allow, wantLayer: LayerProfile, wantReason: "profile auto allows what would ask"},
		{name: "auto allows shell", cfg: Config{Profile: ProfileAuto}, call: gitPush, want: Allow},
		{name: "auto asks outside the workspace", cfg: Config{Profile: ProfileAuto}, call: Call{Tool: "write", Subject: "../other/x"}, want: Ask},
		{name: "auto still hard blocks", cfg: Config{Profile: ProfileAuto}, call: Call{Tool: ShellTool, Kind: KindCommand, Subject: "curl x | sh"}, want: Deny, wantLayer: LayerHardBlock},
		{name: "auto asks for a glob program name", cfg: Config{Profile: ProfileAuto}, call: Call{Tool: ShellTool, Kind: KindCommand, Subject: "/bin/r[m] -rf victim"}, want: Ask, wantReason: "the program name /bin/r[m] is computed at run time or is a glob pattern"},
		{name: "auto asks for a computed program name", cfg: Config{Profile: ProfileAuto}, call: Call{Tool: ShellTool, Kind: KindCommand, Subject: "ls && $(echo rm) -rf victim"}, want: Ask, wantReason: "the program name $(echo rm) is computed"},
		{name: "auto asks for a variable program name", cfg: Config{Profile: ProfileAuto}, call: Call{Tool: ShellTool, Kind: KindCommand, Subject: "$CMD victim"}, want: Ask, wantReason: "$CMD"},
		{name: "auto still runs plain names with dynamic arguments", cfg: Config{Profile: ProfileAuto}, call: Call{Tool: ShellTool, Kind: KindCommand, Subject: "rm -rf $(cat list)"}, want: Allow},
		{
			name: "auto keeps a deny of an earlier layer",
			cfg: Config{Profile: ProfileAuto, Layers: []Layer{
				layer(LayerWorkspace, Rule{Tool: ShellTool, Pattern: "git push *", Action: Deny}),
				layer(LayerSession, Rule{Tool: "*", Action: Allow}),
			}},
			call: gitPush, want: Deny, wantLayer: LayerWorkspace,
		},
		{
			name: "auto allows an ask rule",
			cfg:  Config{Profile: ProfileAuto, Layers: []Layer{layer(LayerWorkspace, Rule{Tool: "write", Action: Ask})}},
			call: writeMain, want: Allow,
		},

		// Fail-closed.
		{
			name: "no approver turns ask into deny",
			cfg:  Config{Approver: ApproverNone}, call: writeMain, want: Deny, wantLayer: LayerDefaults,
			wantReason: "denied because no approver is attached to this session: to allow it, add an allow rule",
		},
		{
			name: "no approver names the config file",
			cfg:  Config{Approver: ApproverNone}, call: goTest, want: Deny,
			wantReason: "to the worker's permissions.json (its config directory), to a trusted workspace's .longrun/permissions.json, or to the session's start options",
		},
		{
			name: "no approver keeps the ask rule",
			cfg:  Config{Approver: ApproverNone, Layers: []Layer{layer(LayerSession, Rule{Tool: ShellTool, Pattern: "go *", Action: Ask})}},
			call: goTest, want: Deny, wantLayer: LayerSession, wantRule: &Rule{Tool: ShellTool, Pattern: "go *", Action: Ask},
		},
		{name: "no approver still allows reads", cfg: Config{Approver: ApproverNone}, call: readCall, want: Allow},
		{
			name: "no approver allows by rule",
			cfg:  Config{Approver: ApproverNone, Layers: []Layer{layer(LayerSession, Rule{Tool: ShellTool, Pattern: "go test *", Action: Allow})}},
			call: goTest, want: Allow,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := New(tt.cfg)
			require.NoError(t, err)
			for _, r := range tt.remember {
				require.NoError(t, e.Remember(r))
			}
			d := e.Decide(tt.call)
			require.Equal(t, tt.want, d.Action, d.Reason)
			if tt.wantLayer != "" {
				require.Equal(t, tt.wantLayer, d.Layer, d.Reason)
			}
			if tt.wantRule != nil {
				require.Equal(t, tt.wantRule, d.Rule)
			}
			if tt.wantLayer == LayerDefaults || tt.wantLayer == LayerHardBlock || tt.wantLayer == LayerProfile {
				require.Nil(t, d.Rule)
			}
			if tt.wantReason != "" {
				require.Contains(t, d.Reason, tt.wantReason)
			}
			require.NotEmpty(t, d.Reason)
		})
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		want error
	}{
		{"bad profile", Config{Profile: "yolo"}, ErrBadProfile},
		{"bad approver", Config{Approver: "robot"}, ErrBadApprover},
		{"bad action", Config{Layers: []Layer{layer(LayerWorkspace, Rule{Tool: "*", Action: "alow"})}}, ErrBadAction},
		{"empty tool", Config{Layers: []Layer{layer(LayerWorkspace, Rule{Action: Allow})}}, ErrBadRule},
		{"reserved layer", Config{Layers: []Layer{layer(LayerRemembered)}}, ErrBadLayer},
		{"unnamed layer", Config{Layers: []Layer{layer("")}}, ErrBadLayer},
		{"duplicate layer", Config{Layers: []Layer{layer(LayerSession), layer(LayerSession)}}, ErrBadLayer},
		{"doom loop of one", Config{DoomLoop: 1}, ErrBadDoomLoop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(tt.cfg)
			require.ErrorIs(t, err, tt.want)
		})
	}
	_, err := New(Config{Layers: []Layer{layer(LayerWorkspace, Rule{Tool: "*"}, Rule{Tool: "x", Action: "alow"})}})
	require.ErrorContains(t, err, "layer workspace rule 1")
}

func TestVisible(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cfg      Config
		tool     string
		readOnly bool
		want     bool
	}{
		{"build shows write", Config{}, "write", false, true},
		{"plan hides write", Config{Profile: ProfilePlan}, "write", false, false},
		{"plan hides edit", Config{Profile: ProfilePlan}, "edit", false, false},
		{"plan hides shell", Config{Profile: ProfilePlan}, ShellTool, false, false},
		{"plan shows read", Config{Profile: ProfilePlan}, "read", true, true},
		{"deny without pattern hides", Config{Layers: []Layer{layer(LayerWorkspace, Rule{Tool: "web*", Action: Deny})}}, "webfetch", true, false},
		{"deny with pattern keeps", Config{Layers: []Layer{layer(LayerWorkspace, Rule{Tool: "write", Pattern: "secrets/**", Action: Deny})}}, "write", false, true},
		{"later allow with pattern reveals", Config{Layers: []Layer{
			layer(LayerWorkspace, Rule{Tool: ShellTool, Action: Deny}),
			layer(LayerSession, Rule{Tool: ShellTool, Pattern: "git *", Action: Allow}),
		}}, ShellTool, false, true},
		{"later deny hides again", Config{Layers: []Layer{layer(LayerWorkspace,
			Rule{Tool: ShellTool, Pattern: "git *", Action: Allow},
			Rule{Tool: ShellTool, Pattern: "*", Action: Deny},
		)}}, ShellTool, false, false},
		{"later allow without pattern reveals", Config{Layers: []Layer{
			layer(LayerWorkspace, Rule{Tool: "*", Action: Deny}),
			layer(LayerSession, Rule{Tool: "read", Action: Allow}),
		}}, "read", true, true},
		{"auto: a deny cannot be outranked", Config{Profile: ProfileAuto, Layers: []Layer{
			layer(LayerWorkspace, Rule{Tool: ShellTool, Action: Deny}),
			layer(LayerSession, Rule{Tool: ShellTool, Action: Allow}),
		}}, ShellTool, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := New(tt.cfg)
			require.NoError(t, err)
			require.Equal(t, tt.want, e.Visible(tt.tool, kindOf(tt.tool), tt.readOnly))
		})
	}
}

func TestRememberReleasesPendingCalls(t *testing.T) {
	t.Parallel()
	e, err := New(Config{})
	require.NoError(t, err)
	pending := []Call{
		{Tool: ShellTool, Kind: KindCommand, Subject: "go test ./a/..."},
		{Tool: ShellTool, Kind: KindCommand, Subject: "go test ./b/... && rm -rf x"},
		{Tool: "write", Subject: "a.go"},
	}
	for _, c := range pending {
		require.Equal(t, Ask, e.Decide(c).Action)
	}
	r := Rule{Tool: ShellTool, Pattern: "go test *", Action: Allow}
	require.NoError(t, e.Remember(r))
	var released []bool
	for _, c := range pending {
		released = append(released, e.Covers(r, c))
	}
	require.Equal(t, []bool{true, false, false}, released)
	d := e.Decide(pending[0])
	require.Equal(t, Allow, d.Action)
	require.Equal(t, LayerRemembered, d.Layer)
	require.Equal(t, &r, d.Rule)
	require.Equal(t, Ask, e.Decide(pending[1]).Action)

	require.True(t, e.Covers(Rule{Tool: "*", Action: Allow}, pending[2]))
	require.True(t, e.Covers(Rule{Tool: "write", Pattern: "*.go", Action: Allow}, pending[2]))
	require.ErrorIs(t, e.Remember(Rule{Tool: "write", Action: "yes"}), ErrBadAction)
}

func TestDoomLoop(t *testing.T) {
	t.Parallel()
	allowRead := Config{Layers: []Layer{layer(LayerSession, Rule{Tool: "read", Action: Allow})}}
	call := Call{Tool: "read", ReadOnly: true, Subject: "a.go", ArgsKey: `{"path":"a.go"}`}

	t.Run("third identical call asks", func(t *testing.T) {
		t.Parallel()
		e, err := New(allowRead)
		require.NoError(t, err)
		var got []Action
		for range 4 {
			got = append(got, e.Decide(call).Action)
			e.Observe(call)
		}
		require.Equal(t, []Action{Allow, Allow, Ask, Ask}, got)
		d := e.Decide(call)
		require.Equal(t, LayerDoomLoop, d.Layer)
		require.Contains(t, d.Reason, "doom loop: tool read has been called with identical arguments 3 times in a row")
	})
	t.Run("different arguments break the run", func(t *testing.T) {
		t.Parallel()
		e, err := New(allowRead)
		require.NoError(t, err)
		other := call
		other.ArgsKey = `{"path":"b.go"}`
		for _, c := range []Call{call, call, other} {
			e.Observe(c)
		}
		require.Equal(t, Allow, e.Decide(call).Action)
	})
	t.Run("other tools in between do not break the run", func(t *testing.T) {
		t.Parallel()
		e, err := New(allowRead)
		require.NoError(t, err)
		list := Call{Tool: "list", ReadOnly: true, ArgsKey: "{}"}
		for _, c := range []Call{call, list, call, list} {
			e.Observe(c)
		}
		require.Equal(t, Ask, e.Decide(call).Action)
	})
	t.Run("empty args key is not tracked", func(t *testing.T) {
		t.Parallel()
		e, err := New(allowRead)
		require.NoError(t, err)
		c := call
		c.ArgsKey = ""
		for range 3 {
			e.Observe(c)
		}
		require.Equal(t, Allow, e.Decide(c).Action)
	})
	t.Run("configurable threshold and off", func(t *testing.T) {
		t.Parallel()
		e, err := New(Config{DoomLoop: 5})
		require.NoError(t, err)
		for range 3 {
			e.Observe(call)
		}
		require.Equal(t, Allow, e.Decide(call).Action)
		e.Observe(call)
		require.Equal(t, Ask, e.Decide(call).Action)

		off, err := New(Config{DoomLoop: -1})
		require.NoError(t, err)
		for range 10 {
			off.Observe(call)
		}
		require.Equal(t, Allow, off.Decide(call).Action)
	})
	t.Run("auto still asks, no approver denies", func(t *testing.T) {
		t.Parallel()
		auto, err := New(Config{Profile: ProfileAuto})
		require.NoError(t, err)
		none, err := New(Config{Approver: ApproverNone})
		require.NoError(t, err)
		for range 2 {
			auto.Observe(call)
			none.Observe(call)
		}
		require.Equal(t, Ask, auto.Decide(call).Action)
		d := none.Decide(call)
		require.Equal(t, Deny, d.Action)
		require.Contains(t, d.Reason, "doom loop")
		require.Contains(t, d.Reason, "no approver")
	})
	t.Run("a deny rule is not softened", func(t *testing.T) {
		t.Parallel()
		e, err := New(Config{Layers: []Layer{layer(LayerSession, Rule{Tool: "read", Action: Deny})}})
		require.NoError(t, err)
		for range 2 {
			e.Observe(call)
		}
		require.Equal(t, LayerSession, e.Decide(call).Layer)
	})
	t.Run("doom_loop rule answers", func(t *testing.T) {
		t.Parallel()
		e, err := New(Config{Layers: []Layer{layer(LayerSession, Rule{Tool: "*", Action: Allow})}})
		require.NoError(t, err)
		for range 2 {
			e.Observe(call)
		}
		require.Equal(t, Ask, e.Decide(call).Action, `a "*" rule does not answer the doom loop`)
		require.NoError(t, e.Remember(Rule{Tool: DoomLoopTool, Pattern: "read", Action: Allow}))
		require.Equal(t, Allow, e.Decide(call).Action)
		require.NoError(t, e.Remember(Rule{Tool: DoomLoopTool, Action: Deny}))
		d := e.Decide(call)
		require.Equal(t, Deny, d.Action)
		require.Contains(t, d.Reason, "doom loop")
	})
}

func TestStateRoundTrip(t *testing.T) {
	t.Parallel()
	cfg := Config{Layers: []Layer{layer(LayerSession, Rule{Tool: "read", Action: Allow})}}
	e, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, e.Remember(Rule{Tool: ShellTool, Pattern: "go test *", Action: Allow}))
	call := Call{Tool: "read", ReadOnly: true, ArgsKey: "k"}
	for _, c := range []Call{{Tool: "write", ArgsKey: "w"}, call, call, {Tool: "list", ArgsKey: "l"}} {
		e.Observe(c)
	}
	st := e.State()
	require.Equal(t, []string{"list", "read", "write"}, []string{st.History[0].Tool, st.History[1].Tool, st.History[2].Tool})

	raw, err := json.Marshal(st)
	require.NoError(t, err)
	var back State
	require.NoError(t, json.Unmarshal(raw, &back))

	fresh, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, fresh.Restore(back))
	require.Equal(t, st, fresh.State())
	require.Equal(t, Ask, fresh.Decide(call).Action, "doom-loop history survives")
	require.Equal(t, Allow, fresh.Decide(Call{Tool: ShellTool, Kind: KindCommand, Subject: "go test ./..."}).Action, "remembered rules survive")

	require.ErrorIs(t, fresh.Restore(State{Remembered: []Rule{{Tool: "x", Action: "maybe"}}}), ErrBadAction)
}

func TestObserveKeepsLastN(t *testing.T) {
	t.Parallel()
	e, err := New(Config{})
	require.NoError(t, err)
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		e.Observe(Call{Tool: "read", ArgsKey: k})
	}
	require.Equal(t, []ToolHistory{{Tool: "read", ArgsKeys: []string{"c", "d", "e"}}}, e.State().History)
}

func TestControlFilesAskInEveryProfile(t *testing.T) {
	t.Parallel()
	allowAll := []Layer{
		layer(LayerWorkspace, Rule{Tool: "*", Action: Allow}),
		layer(LayerSession, Rule{Tool: "write", Pattern: "**", Action: Allow}, Rule{Tool: "apply_patch", Action: Allow}),
	}
	calls := map[string]Call{
		"permissions.json":    {Tool: "write", Subject: ".longrun/permissions.json"},
		"mcp.json dotted":     {Tool: "write", Subject: "./src/../.longrun/mcp.json"},
		"nested .longrun":     {Tool: "edit", Subject: "sub/.longrun/permissions.json"},
		"git config":          {Tool: "edit", Subject: ".git/config"},
		"git hook upper case": {Tool: "write", Subject: ".GIT/hooks/pre-commit"},
		"AGENTS.md":           {Tool: "write", Subject: "AGENTS.md"},
		"nested AGENTS.md":    {Tool: "write", Subject: "pkg/deep/agents.md"},
		"patch names it":      {Tool: "apply_patch", Paths: []string{"main.go", ".longrun/permissions.json"}},
		"mcp tool with path":  {Tool: "mcp_fs_write", Subject: ".git/config"},
	}
	for _, profile := range []string{ProfileBuild, ProfileAuto} {
		for name, c := range calls {
			t.Run(profile+"/"+name, func(t *testing.T) {
				t.Parallel()
				e, err := New(Config{Profile: profile, Layers: allowAll})
				require.NoError(t, err)
				require.NoError(t, e.Remember(Rule{Tool: "*", Action: Allow}))
				d := e.Decide(c)
				require.Equal(t, Ask, d.Action, d.Reason)
				require.Equal(t, LayerControl, d.Layer)
				require.Contains(t, d.Reason, "is a control file")
				require.Contains(t, d.Reason, "a person must approve every write to it")

				none, err := New(Config{Profile: profile, Approver: ApproverNone, Layers: allowAll})
				require.NoError(t, err)
				d = none.Decide(c)
				require.Equal(t, Deny, d.Action)
				require.Contains(t, d.Reason, "only a person can allow it")
			})
		}
	}
	// Reading a control file, and writing files that merely look alike, do
	// not ask.
	e, err := New(Config{Layers: allowAll})
	require.NoError(t, err)
	for _, c := range []Call{
		{Tool: "read", ReadOnly: true, Subject: ".longrun/permissions.json"},
		{Tool: "write", Subject: "docs/longrun/AGENTS.md.bak"},
		{Tool: "write", Subject: ".github/workflows/ci.yml"},
		{Tool: "write", Subject: "gitconfig.git.txt"},
	} {
		require.Equal(t, Allow, e.Decide(c).Action, c.Subject)
	}
}

func TestIsControlPath(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		".longrun": true, ".longrun/jobs/x.log": true, "a/.git/HEAD": true, "/ws/.git": true, `.git\config`: true,
		"AGENTS.md": true, "x/AGENTS.md": true, "x/../AGENTS.md": true,
		"agents.txt": false, "AGENTS.md/../main.go": false, ".gitignore": false, ".longrunrc": false, "src/git/x": false,
	} {
		require.Equal(t, want, IsControlPath(p), p)
	}
}

func TestClassifiedMarksClassifierOnlyAllows(t *testing.T) {
	t.Parallel()
	rules := []Layer{layer(LayerWorker, Rule{Tool: ShellTool, Pattern: "go test *", Action: Allow}, Rule{Tool: ShellTool, Pattern: "git log *", Action: Allow})}
	tests := []struct {
		name       string
		profile    string
		call       Call
		want       Action
		classified bool
	}{
		{name: "read-only command", call: gitStatus, want: Allow, classified: true},
		{name: "rule allows", call: goTest, want: Allow},
		{name: "rule and classifier mixed", call: Call{Tool: ShellTool, Kind: KindCommand, Subject: "ls && git log -p"}, want: Allow, classified: true},
		{name: "rule alone", call: Call{Tool: ShellTool, Kind: KindCommand, Subject: "git log -p"}, want: Allow},
		{name: "read-only tool is not a shell", call: readCall, want: Allow},
		{name: "writer asks", call: Call{Tool: ShellTool, Kind: KindCommand, Subject: "rm x"}, want: Ask},
		{name: "auto: the profile allows anyway", profile: ProfileAuto, call: gitStatus, want: Allow},
		{name: "auto writer", profile: ProfileAuto, call: Call{Tool: ShellTool, Kind: KindCommand, Subject: "rm x"}, want: Allow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := New(Config{Profile: tt.profile, Layers: rules})
			require.NoError(t, err)
			d := e.Decide(tt.call)
			require.Equal(t, tt.want, d.Action, d.Reason)
			require.Equal(t, tt.classified, d.Classified, d.Reason)
		})
	}
}

func TestNoSandboxAsksForEveryUnapprovedShellCommand(t *testing.T) {
	t.Parallel()
	rules := []Layer{layer(LayerWorker, Rule{Tool: ShellTool, Pattern: "go test *", Action: Allow}, Rule{Tool: ShellTool, Pattern: "git log *", Action: Allow})}
	for _, profile := range []string{ProfileBuild, ProfileAuto} {
		e, err := New(Config{Profile: profile, Layers: rules, NoSandbox: true})
		require.NoError(t, err)
		asks := []Call{gitStatus, {Tool: ShellTool, Kind: KindCommand, Subject: "ls && git log"}}
		if profile == ProfileAuto {
			asks = append(asks, Call{Tool: ShellTool, Kind: KindCommand, Subject: "rm x"})
		}
		for _, c := range asks {
			d := e.Decide(c)
			require.Equal(t, Ask, d.Action, profile+": "+c.Subject)
			require.Equal(t, LayerSandbox, d.Layer)
			require.Contains(t, d.Reason, "this worker has no sandbox, so no shell command runs without a person's approval")
		}
		// A person's rule still allows; other tools are not affected.
		require.Equal(t, Allow, e.Decide(goTest).Action)
		require.Equal(t, Allow, e.Decide(readCall).Action)
	}
	// Recorded before the field: the same engine without it allows.
	e, err := New(Config{Layers: rules})
	require.NoError(t, err)
	require.Equal(t, Allow, e.Decide(gitStatus).Action)
}

// TestGuardianApproverAsks: to the engine a guardian is a person: an ask
// stays an ask (the session hands it to the guardian), never a deny.
func TestGuardianApproverAsks(t *testing.T) {
	t.Parallel()
	e, err := New(Config{Approver: ApproverGuardian})
	require.NoError(t, err)
	d := e.Decide(Call{Tool: "write", Subject: "main.go"})
	require.Equal(t, Ask, d.Action)
	d = e.Decide(Call{Tool: "write", Subject: ".longrun/permissions.json"})
	require.Equal(t, Ask, d.Action)
	require.Equal(t, LayerControl, d.Layer)
}
