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

const tsModels = `export class Greeter {
  constructor(public name: string) {}

  greet(): string {
    return "hi " + this.name;
  }
}

export function makeGreeter(name: string): Greeter {
  return new Greeter(name);
}
`

const tsApp = `import { Greeter, makeGreeter } from "./models";

export function main(): string {
  const g = makeGreeter("a");
  return g.greet() + new Greeter("b").greet();
}
`

// TypeScript configured only as lsp.json would name it. Its rename
// otherwise renames an imported name at its import ("makeGreeter as
// buildGreeter") rather than everywhere.
func tsConfig(command string) ServerConfig {
	return ServerConfig{Command: command, Args: []string{"--stdio"}, Patterns: []string{"*.ts", "*.tsx", "*.js", "*.jsx"},
		InitializationOptions: []byte(`{"preferences": {"providePrefixAndSuffixTextForRename": false}}`)}
}

func TestTypeScriptDiagnosticsDefinitionRename(t *testing.T) {
	tsls := lsptest.TypeScript(t)
	root := pyProject(t, map[string]string{"models.ts": tsModels, "app.ts": tsApp,
		"tsconfig.json": `{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}}`})
	m := NewManager(Config{Launch: testLaunch, Servers: map[string]ServerConfig{"typescript": tsConfig(tsls)}, DiagnosticsWait: "30s"})
	defer m.Close()
	ctx := context.Background()

	app := filepath.Join(root, "app.ts")
	require.NoError(t, os.WriteFile(app, []byte(strings.Replace(tsApp, "g.greet()", "g.shout()", 1)), 0o644))
	require.Equal(t, "typescript diagnostics:\napp.ts:5:12: error: Property 'shout' does not exist on type 'Greeter'. [typescript]",
		m.AfterEdit(ctx, root, []string{app}))
	require.NoError(t, os.WriteFile(app, []byte(tsApp), 0o644))
	require.Equal(t, "typescript reports no errors or warnings in app.ts.", m.AfterEdit(ctx, root, []string{app}))

	// typescript-language-server publishes no version and says nothing
	// of a file whose diagnostics stay empty: after Settle its silence
	// is the answer, not a timeout.
	models := filepath.Join(root, "models.ts")
	require.Equal(t, "typescript reports no errors or warnings in models.ts.", m.AfterEdit(ctx, root, []string{models}))
	start := time.Now()
	require.NoError(t, os.WriteFile(models, []byte("// Greeters.\n"+tsModels), 0o644))
	require.Equal(t, "typescript reports no errors or warnings in models.ts.", m.AfterEdit(ctx, root, []string{models}))
	require.Less(t, time.Since(start), 10*time.Second)
	require.NoError(t, os.WriteFile(models, []byte(strings.Replace(tsModels, "function makeGreeter", "function buildGreeter", 1)), 0o644))
	out := m.AfterEdit(ctx, root, []string{models})
	require.True(t, strings.HasPrefix(out, "typescript reports no errors or warnings in models.ts"), out)
	c, _, err := m.ForFile(ctx, root, app)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		ds := c.AllDiagnostics()[app]
		return len(ds) == 1 && strings.Contains(ds[0].Message, "has no exported member 'makeGreeter'")
	}, 20*time.Second, 50*time.Millisecond)
	require.NoError(t, os.WriteFile(models, []byte(tsModels), 0o644))
	require.Equal(t, "typescript reports no errors or warnings in models.ts.", m.AfterEdit(ctx, root, []string{models}))

	pt, ok := FindSymbol(tsApp, "makeGreeter", 4)
	require.True(t, ok)
	pos := ToPosition(tsApp, pt)
	locs, err := c.Definition(ctx, app, pos)
	require.NoError(t, err)
	require.Equal(t, []Location{{URI: FileURI(models), Range: Range{Start: Position{Line: 8, Character: 16}, End: Position{Line: 8, Character: 27}}}}, locs)
	refs, err := c.References(ctx, app, pos)
	require.NoError(t, err)
	require.Len(t, refs, 3, "the import and the call in app.ts, the definition in models.ts: %v", refs)
	hover, err := c.Hover(ctx, app, pos)
	require.NoError(t, err)
	require.Contains(t, hover, "makeGreeter(name: string): Greeter")
	syms, err := c.DocumentSymbols(ctx, models)
	require.NoError(t, err)
	require.Len(t, syms, 2)
	require.Equal(t, "Greeter", syms[0].Name)
	require.Equal(t, "class", SymbolKindName(syms[0].Kind))
	require.Equal(t, "makeGreeter", syms[1].Name)

	changed, err := c.Rename(ctx, app, pos, "buildGreeter")
	require.NoError(t, err)
	require.Len(t, changed, 2)
	require.Equal(t, strings.ReplaceAll(tsApp, "makeGreeter", "buildGreeter"), changed[app])
	require.Equal(t, strings.ReplaceAll(tsModels, "makeGreeter", "buildGreeter"), changed[models])
}
