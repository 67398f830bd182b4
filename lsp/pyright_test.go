package lsp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/lsp/lsptest"
)

// pyProject writes a Python project of files into a new directory.
func pyProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	return dir
}

const pyModels = `class Greeter:
    """Says hello."""

    def __init__(self, name: str) -> None:
        self.name = name

    def greet(self) -> str:
        return "hi " + self.name


def make_greeter(name: str) -> Greeter:
    return Greeter(name)
`

const pyApp = `from models import Greeter, make_greeter


def main() -> str:
    g = make_greeter("a")
    return g.greet() + Greeter("b").greet()
`

// Pyright configured only as lsp.json would name it: the same manager,
// client and operations as gopls.
func pyrightConfig(command string) ServerConfig {
	return ServerConfig{Command: command, Args: []string{"--stdio"}, Patterns: []string{"*.py", "*.pyi"},
		Settings: []byte(`{"python": {"analysis": {"typeCheckingMode": "basic"}}}`)}
}

func TestPyrightDiagnosticsDefinitionRename(t *testing.T) {
	pyright := lsptest.Pyright(t)
	root := pyProject(t, map[string]string{"models.py": pyModels, "app.py": pyApp})
	m := NewManager(Config{Launch: testLaunch, Servers: map[string]ServerConfig{"pyright": pyrightConfig(pyright)}, DiagnosticsWait: "30s"})
	defer m.Close()
	ctx := context.Background()

	// An edit that calls a method Greeter does not have is reported with
	// its place and pyright's own words, its details on the same line.
	app := filepath.Join(root, "app.py")
	require.NoError(t, os.WriteFile(app, []byte(strings.Replace(pyApp, "g.greet()", "g.shout()", 1)), 0o644))
	out := m.AfterEdit(ctx, root, []string{app})
	require.Equal(t, "pyright diagnostics:\n"+
		`app.py:6:14: error: Cannot access attribute "shout" for class "Greeter"; Attribute "shout" is unknown [Pyright]`, out)
	c, _, err := m.ForFile(ctx, root, app)
	require.NoError(t, err)
	ds := c.AllDiagnostics()[app]
	require.Len(t, ds, 1)
	require.JSONEq(t, `"reportAttributeAccessIssue"`, string(ds[0].Code))
	// The fix clears it.
	require.NoError(t, os.WriteFile(app, []byte(pyApp), 0o644))
	require.Equal(t, "pyright reports no errors or warnings in app.py.", m.AfterEdit(ctx, root, []string{app}))

	// What an edit of models.py breaks in app.py is reported too.
	models := filepath.Join(root, "models.py")
	require.NoError(t, os.WriteFile(models, []byte(strings.Replace(pyModels, "def make_greeter", "def build_greeter", 1)), 0o644))
	out = m.AfterEdit(ctx, root, []string{models})
	// Whether app.py's error is in the report depends on whether pyright
	// published it by the time models.py's came (it checks the edited
	// file first when it opens it); it is published either way.
	require.True(t, strings.HasPrefix(out, "pyright reports no errors or warnings in models.py"), out)
	require.Eventually(t, func() bool {
		ds := c.AllDiagnostics()[app]
		return len(ds) == 1 && ds[0].Message == `"make_greeter" is unknown import symbol`
	}, 20*time.Second, 50*time.Millisecond)
	if strings.Contains(out, "errors in other files") {
		require.Contains(t, out, "errors in other files now:\n"+`app.py:1:29: error: "make_greeter" is unknown import symbol [Pyright]`)
	}
	require.NoError(t, os.WriteFile(models, []byte(pyModels), 0o644))
	require.Equal(t, "pyright reports no errors or warnings in models.py.", m.AfterEdit(ctx, root, []string{models}))
	// An undefined name in a new file.
	extra := filepath.Join(root, "extra.py")
	require.NoError(t, os.WriteFile(extra, []byte("from models import Greeter\n\nx = Greater(\"a\")\n"), 0o644))
	require.Equal(t, "pyright diagnostics:\n"+`extra.py:3:5: error: "Greater" is not defined [Pyright]`, m.AfterEdit(ctx, root, []string{extra}))
	require.NoError(t, os.Remove(extra))
	require.Equal(t, "", m.AfterEdit(ctx, root, []string{extra}), "a deleted file is closed and not waited for")

	// Definition and references across the two files.
	pt, ok := FindSymbol(pyApp, "make_greeter", 5)
	require.True(t, ok)
	pos := ToPosition(pyApp, pt)
	locs, err := c.Definition(ctx, app, pos)
	require.NoError(t, err)
	require.Equal(t, []Location{{URI: FileURI(models), Range: Range{Start: Position{Line: 10, Character: 4}, End: Position{Line: 10, Character: 16}}}}, locs)
	refs, err := c.References(ctx, app, pos)
	require.NoError(t, err)
	require.Len(t, refs, 3, "the import and the call in app.py, the definition in models.py: %v", refs)
	require.Equal(t, FileURI(models), refs[2].URI)

	hover, err := c.Hover(ctx, app, pos)
	require.NoError(t, err)
	require.Contains(t, hover, "def make_greeter(name: str) -> Greeter")

	syms, err := c.DocumentSymbols(ctx, models)
	require.NoError(t, err)
	require.Len(t, syms, 2)
	require.Equal(t, "Greeter", syms[0].Name)
	require.Equal(t, "class", SymbolKindName(syms[0].Kind))
	require.Equal(t, "make_greeter", syms[1].Name)
	require.Equal(t, "function", SymbolKindName(syms[1].Kind))
	var methods []string
	for _, ch := range syms[0].Children {
		methods = append(methods, ch.Name)
	}
	require.Contains(t, methods, "greet")

	// The rename edits both files.
	changed, err := c.Rename(ctx, app, pos, "build_greeter")
	require.NoError(t, err)
	require.Len(t, changed, 2)
	require.Equal(t, strings.ReplaceAll(pyApp, "make_greeter", "build_greeter"), changed[app])
	require.Equal(t, strings.ReplaceAll(pyModels, "make_greeter", "build_greeter"), changed[models])

	m.CloseRoot(root)
	require.False(t, c.Alive())
}

func TestPyrightSettingsReachTheServer(t *testing.T) {
	// lsp.json's settings for pyright are keyed as VS Code keeps them;
	// pyright asks for "python" and "python.analysis" and gets each
	// part: strict mode reports the unannotated parameter, basic does not.
	pyright := lsptest.Pyright(t)
	src := "def ident(x):\n    return x\n"
	for mode, want := range map[string]string{"basic": "no errors", "strict": `Type annotation is missing for parameter "x"`} {
		root := pyProject(t, map[string]string{"lib.py": src})
		cfg := pyrightConfig(pyright)
		cfg.Settings = []byte(`{"python": {"analysis": {"typeCheckingMode": "` + mode + `"}}}`)
		m := NewManager(Config{Launch: testLaunch, Servers: map[string]ServerConfig{"pyright": cfg}, DiagnosticsWait: "30s"})
		out := m.AfterEdit(context.Background(), root, []string{filepath.Join(root, "lib.py")})
		m.Close()
		require.Contains(t, out, want, mode)
	}
}

func TestSettingsSection(t *testing.T) {
	t.Parallel()
	keyed := []byte(`{"python": {"analysis": {"typeCheckingMode": "strict"}}}`)
	for name, tc := range map[string]struct {
		settings, section, want string
	}{
		"path":          {string(keyed), "python.analysis", `{"typeCheckingMode": "strict"}`},
		"first name":    {string(keyed), "python", `{"analysis": {"typeCheckingMode": "strict"}}`},
		"absent leaf":   {string(keyed), "python.linting", `null`},
		"not keyed":     {`{"staticcheck": true}`, "gopls", `{"staticcheck": true}`},
		"no section":    {string(keyed), "", string(keyed)},
		"no settings":   {"", "gopls", `null`},
		"leaf is value": {string(keyed), "python.analysis.typeCheckingMode", `"strict"`},
	} {
		require.JSONEq(t, tc.want, string(settingsSection([]byte(tc.settings), tc.section)), name)
	}
}
