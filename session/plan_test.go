package session

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/tools"
)

func TestPlanBatch(t *testing.T) {
	t.Parallel()
	specs := map[string]tools.Spec{}
	for _, tl := range tools.Builtin(tools.DefaultConfig()) {
		specs[tl.Spec().Name] = tl.Spec()
	}
	specs["mcp_lookup"] = tools.Spec{Name: "mcp_lookup", ReadOnly: true}
	specs["mcp_deploy"] = tools.Spec{Name: "mcp_deploy"}
	type call struct{ name, args string }
	read := func(p string) call { return call{"read", `{"path":"` + p + `"}`} }
	edit := func(p string) call { return call{"edit", `{"path":"` + p + `","old_string":"a","new_string":"b"}`} }
	write := func(p string) call { return call{"write", `{"path":"` + p + `","content":""}`} }
	shell := call{"shell", `{"command":"go test ./..."}`}
	patch := func(files ...string) call {
		s := "*** Begin Patch\n"
		for _, f := range files {
			s += "*** Update File: " + f + "\n@@\n-a\n+b\n"
		}
		return call{"apply_patch", `{"patch":` + jsonString(s+"*** End Patch") + `}`}
	}
	tests := []struct {
		name  string
		calls []call
		want  [][]int
	}{
		{"reads run together", []call{read("a"), read("b"), read("a")}, [][]int{nil, nil, nil}},
		{"[read, read, edit, read] on one file", []call{read("a.go"), read("a.go"), edit("a.go"), read("a.go")},
			[][]int{nil, nil, {0, 1}, {2}}},
		{"[read, read, edit, read] on other files", []call{read("a.go"), read("b.go"), edit("c.go"), read("d.go")},
			[][]int{nil, nil, nil, nil}},
		{"shell is a barrier", []call{read("a"), read("b"), shell, read("c"), write("d")},
			[][]int{nil, nil, {0, 1}, {2}, {2}}},
		{"writes to different files run together", []call{write("a"), write("b"), edit("c")}, [][]int{nil, nil, nil}},
		{"writes to one file keep their order", []call{write("a"), edit("./a"), write("a")}, [][]int{nil, {0}, {0, 1}}},
		{"a directory holds its files", []call{call{"grep", `{"pattern":"x","path":"pkg"}`}, edit("pkg/a.go"), edit("pkgx/a.go")},
			[][]int{nil, {0}, nil}},
		{"grep without a path covers the workspace", []call{call{"grep", `{"pattern":"x"}`}, write("deep/a/b.go")},
			[][]int{nil, {0}}},
		{"list and glob are path-scoped reads", []call{call{"list", `{"path":"a"}`}, call{"glob", `{"pattern":"*.go","path":"b"}`}, write("b/x.go"), write("c")},
			[][]int{nil, nil, {1}, nil}},
		{"apply_patch touches each of its files", []call{read("a"), read("b"), read("c"), patch("a", "c")},
			[][]int{nil, nil, nil, {0, 2}}},
		{"a patch that does not parse touches everything", []call{read("a"), call{"apply_patch", `{"patch":"garbage"}`}, read("z")},
			[][]int{nil, {0}, {1}}},
		{"a shared tool of unknown paths waits for writes", []call{write("a"), call{"mcp_lookup", `{}`}, read("b")},
			[][]int{nil, {0}, nil}},
		{"an exclusive tool of unknown paths is a barrier", []call{read("a"), call{"mcp_deploy", `{}`}, read("b")},
			[][]int{nil, {0}, {1}}},
		{"absolute and relative paths are not compared", []call{read("/work/a"), write("b")}, [][]int{nil, {0}}},
		{"climbing out is not compared", []call{read("../x"), write("b")}, [][]int{nil, {0}}},
		{"arguments that do not parse touch everything", []call{read("a"), call{"edit", `{not json`}}, [][]int{nil, {0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pcs := make([]PlannedCall, len(tt.calls))
			for i, c := range tt.calls {
				pcs[i] = PlanFor(specs[c.name], c.args)
			}
			require.Equal(t, tt.want, Plan(pcs))
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestCanStart: the pool admits a call when its slot, its dependencies and
// the model's order allow.
func TestCanStart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		batch      []Slot
		i, running int
		max        int
		want       bool
	}{
		{"free pool, no deps", []Slot{{Queued: true}}, 0, 0, 2, true},
		{"pool full", []Slot{{Queued: true}}, 0, 2, 2, false},
		{"dep not done", []Slot{{}, {Deps: []int{0}, Queued: true}}, 1, 0, 2, false},
		{"dep done", []Slot{{Done: true}, {Deps: []int{0}, Queued: true}}, 1, 0, 2, true},
		{"an earlier ready call goes first", []Slot{{Queued: true}, {Queued: true}}, 1, 0, 2, false},
		{"an earlier call still blocked does not hold it back", []Slot{{}, {Deps: []int{0}, Queued: true}, {Queued: true}}, 2, 0, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, CanStart(tt.batch, tt.i, tt.running, tt.max))
		})
	}
}
