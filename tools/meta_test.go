package tools

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// TestBuiltinMetadataComplete is the check that adding a tool needs only
// its own files and the Builtin list: each built-in declares everything
// the session needs to know about its calls (Meta), and what it declares
// names its own arguments.
func TestBuiltinMetadataComplete(t *testing.T) {
	t.Parallel()
	for _, tl := range append(Builtin(DefaultConfig()), LSPTools(nil)...) {
		sp := tl.Spec()
		t.Run(sp.Name, func(t *testing.T) {
			var schema struct {
				Properties map[string]struct {
					Type any `json:"type"`
				} `json:"properties"`
			}
			require.NoError(t, json.Unmarshal(sp.Parameters, &schema))
			has := func(arg string) bool { _, ok := schema.Properties[arg]; return ok }

			require.Equal(t, MetaVersion, sp.Meta, "the spec must declare its call metadata (Meta: MetaVersion)")
			require.Contains(t, []string{ConcurrencyShared, ConcurrencyExclusive}, sp.Concurrency, "concurrency class")
			if sp.SubjectArg != "" && !sp.Web {
				require.NotEmpty(t, sp.SubjectKind, "a tool with a subject declares its kind (SubjectKind)")
			}
			for field, arg := range map[string]string{"SubjectArg": sp.SubjectArg, "SummaryArg": sp.SummaryArg, "BackgroundArg": sp.BackgroundArg} {
				if arg != "" {
					require.True(t, has(arg), "%s %q is not an argument of the tool", field, arg)
				}
			}
			switch sp.Paths {
			case "":
				require.False(t, has("path"), "a tool with a path argument declares where its paths are (Paths)")
			case PathsArg, PathsArgOrRoot:
				require.True(t, has("path"), "Paths %q needs a path argument", sp.Paths)
			case PathsPatch:
				// A prepared call gets its patch argument from the tool
				// (lsp_rename), not from the model.
				require.True(t, has("patch") || sp.Prepares, "Paths %q needs a patch argument", sp.Paths)
			default:
				t.Fatalf("unknown Paths %q", sp.Paths)
			}
			if has("path") || has("command") {
				require.NotEmpty(t, sp.SubjectArg, "a tool with a path or command argument names it as its permission subject")
			}
			if sp.LocalOK {
				require.True(t, sp.ReadOnly && sp.Concurrency == ConcurrencyShared, "only a shared read-only tool may run as a local activity")
			}
			if sp.SummaryLines {
				require.True(t, has("offset") && has("limit"), "SummaryLines needs offset and limit arguments")
			}
			if sp.BackgroundArg != "" {
				require.NotEmpty(t, sp.SubjectArg, "a background job's command is its subject")
			}
			switch sp.Job {
			case "", JobAll:
			case JobOne:
				require.True(t, has("id"), "a tool acting on one job takes its id")
			default:
				t.Fatalf("unknown Job %q", sp.Job)
			}
		})
	}
}

func TestCallSummaryAndBackground(t *testing.T) {
	t.Parallel()
	sh := NewShell(DefaultShellConfig()).Spec()
	require.Equal(t, "shell: go test ./... && echo ok", CallSummary(ShellName, sh, `{"command":"go test ./...\n&& echo ok"}`))
	require.Equal(t, "shell", CallSummary(ShellName, sh, `{"command":""}`))
	require.Equal(t, "shell", CallSummary(ShellName, sh, `not json`))
	long := CallSummary(ShellName, sh, `{"command":"`+strings.Repeat("é", 80)+`"}`)
	require.True(t, strings.HasSuffix(long, "…") && len(long) <= 100+len("…") && utf8.ValidString(long), long)
	cmd, bg := sh.BackgroundCommand(json.RawMessage(`{"command":"sleep 9","background":true}`))
	require.True(t, bg)
	require.Equal(t, "sleep 9", cmd)
	_, bg = sh.BackgroundCommand(json.RawMessage(`{"command":"sleep 9"}`))
	require.False(t, bg)
	_, bg = NewRead().Spec().BackgroundCommand(json.RawMessage(`{"path":"a","background":true}`))
	require.False(t, bg, "only a tool that declares BackgroundArg starts jobs")
}
