// Package docs holds the tests that keep the documentation true to the
// code: the configuration reference names every flag the programs define
// and every environment variable they read, and names no flag that does
// not exist; the pages link only to headings that exist; and the pages use
// the installed programs' names.
package docs

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// reference is the page every flag and variable must appear on.
const reference = "CONFIGURATION.md"

// program is one binary whose flags the reference documents, under the
// heading "## `name`" of the page.
type program struct {
	name  string // as installed, and as the page's heading names it
	build func(t *testing.T, out string)
	// flags runs the binary and returns its flags by command: "" holds
	// the flags of a program without commands (or the global ones).
	flags func(t *testing.T, bin string) map[string][]string
}

// goBuild builds the package dir (relative to the repository root) of
// module root into out.
func goBuild(module, pkg string) func(t *testing.T, out string) {
	return func(t *testing.T, out string) {
		cmd := exec.Command("go", "-C", filepath.Join("..", module), "build", "-o", out, pkg)
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "go build %s: %s", pkg, b)
	}
}

// flagLine is how flag.PrintDefaults starts the line of each flag.
var flagLine = regexp.MustCompile(`(?m)^  -([A-Za-z0-9][A-Za-z0-9_.-]*)`)

// helpFlags runs bin with args (which end in -h) and returns the flags its
// usage lists, from stdout and stderr alike: a flag.FlagSet prints its
// defaults where its output is set.
func helpFlags(t *testing.T, bin string, args ...string) []string {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run() // -h exits 0 or 2 depending on the program
	var names []string
	for _, m := range flagLine.FindAllStringSubmatch(out.String(), -1) {
		names = append(names, m[1])
	}
	require.NotEmpty(t, names, "%s %s printed no flags:\n%s", bin, strings.Join(args, " "), out.String())
	return names
}

// single is a program whose flags are one FlagSet.
func single(t *testing.T, bin string) map[string][]string {
	return map[string][]string{"": helpFlags(t, bin, "-h")}
}

// commandLine is a line of longrun's command list in its usage.
var commandLine = regexp.MustCompile(`(?m)^  ([a-z][a-z-]+) {2,}`)

// cliFlags asks longrun for its commands (longrun help) and each
// command's flags (longrun COMMAND -h), schedule's subcommands included.
// The global flags are in every command's FlagSet; they are returned
// under "" and left out of the commands'.
func cliFlags(t *testing.T, bin string) map[string][]string {
	out, err := exec.Command(bin, "help").Output()
	require.NoError(t, err)
	var cmds []string
	for _, m := range commandLine.FindAllStringSubmatch(string(out), -1) {
		cmds = append(cmds, m[1])
	}
	require.Contains(t, cmds, "start", "longrun help lists no commands:\n%s", out)
	var global []string
	byCmd := map[string][]string{}
	for _, c := range cmds {
		byCmd[c] = helpFlags(t, bin, c, "-h")
		if global == nil {
			global = byCmd[c]
		} else {
			global = intersect(global, byCmd[c])
		}
	}
	schedule, err := exec.Command(bin, "schedule").CombinedOutput()
	require.Error(t, err)
	m := regexp.MustCompile(`have: ([a-z, ]+)\)|schedule command: ([a-z, ]+)`).FindStringSubmatch(string(schedule))
	require.NotNil(t, m, "longrun schedule names no subcommands:\n%s", schedule)
	for _, sub := range strings.Split(m[1]+m[2], ", ") {
		byCmd["schedule "+sub] = helpFlags(t, bin, "schedule", sub, "-h")
	}
	for c, fl := range byCmd {
		byCmd[c] = slices.DeleteFunc(fl, func(f string) bool { return slices.Contains(global, f) })
	}
	byCmd[""] = global
	return byCmd
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// buildDevserver uses the embedded server LONGRUN_DEVSERVER names when it
// is set (make test builds it once per run from this source and sets it,
// so CI does not build the Temporal server twice); without it, it builds
// the server from source: a minute from a warm build cache, minutes cold.
func buildDevserver(t *testing.T, out string) {
	if prebuilt := os.Getenv("LONGRUN_DEVSERVER"); prebuilt != "" {
		abs, err := filepath.Abs(prebuilt)
		require.NoError(t, err)
		require.FileExists(t, abs, "LONGRUN_DEVSERVER names no file")
		require.NoError(t, os.Symlink(abs, out))
		return
	}
	goBuild("devserver", ".")(t, out)
}

func programs() []program {
	return []program{
		{"longrun", goBuild(".", "./starter"), cliFlags},
		{"longrun-worker", goBuild(".", "./worker"), single},
		{"longrun-devserver", buildDevserver, single},
		{"bench", goBuild(".", "./bench"), single},
		// tools/internal/grepbench, patchbench and lsp/internal/lspbench
		// are one-off measuring programs, each documented with its figures
		// (benchmarks-grep.md, benchmarks-patch.md, BENCHMARKS.md).
	}
}

// section returns the text of the page under heading (a line that is the
// heading exactly), up to the next heading of the same or a higher level.
func section(page, heading string) (string, bool) {
	level := strings.Index(heading, " ")
	start := -1
	lines := strings.Split(page, "\n")
	fence := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		if fence {
			continue
		}
		if start < 0 {
			if l == heading {
				start = i + 1
			}
			continue
		}
		if n := strings.Index(l, " "); n > 0 && n <= level && strings.Trim(l[:n], "#") == "" {
			return strings.Join(lines[start:i], "\n"), true
		}
	}
	if start < 0 {
		return "", false
	}
	return strings.Join(lines[start:], "\n"), true
}

// docFlag is a flag as the page writes it: --name, ending at a character
// that cannot be part of a name.
var docFlag = regexp.MustCompile("`(?:--([A-Za-z0-9][A-Za-z0-9_.-]*)|-([A-Za-z0-9])[^A-Za-z0-9_-])")

// documented returns the flags named in text in backticks (`--name ...`).
func documented(text string) []string {
	var out []string
	for _, m := range docFlag.FindAllStringSubmatch(text, -1) {
		out = append(out, strings.TrimRight(m[1]+m[2], "."))
	}
	return out
}

func readReference(t *testing.T) string {
	b, err := os.ReadFile(reference)
	require.NoError(t, err)
	return string(b)
}

// TestReferenceNamesEveryFlag builds every program, asks each for its
// flags the way a person would (-h), and checks that the reference page
// names each under the program's heading (for longrun, under the
// command's heading "### `longrun COMMAND`", the global flags under
// "### Global flags"), and that every flag the page names there exists.
func TestReferenceNamesEveryFlag(t *testing.T) {
	page := readReference(t)
	dir := t.TempDir()
	total := 0
	for _, p := range programs() {
		t.Run(p.name, func(t *testing.T) {
			bin := filepath.Join(dir, p.name)
			p.build(t, bin)
			byCmd := p.flags(t, bin)
			progText, ok := section(page, "## `"+p.name+"`")
			require.True(t, ok, "%s has no heading \"## `%s`\"", reference, p.name)
			var missing, unknown []string
			for cmd, flags := range byCmd {
				text, head := progText, "## `"+p.name+"`"
				if p.name == "longrun" {
					if cmd != "" && len(flags) == 0 {
						continue // only the global flags
					}
					head = "### `longrun " + cmd + "`"
					if cmd == "" {
						head = "### Global flags"
					}
					text, ok = section(progText, head)
					if !ok {
						missing = append(missing, fmt.Sprintf("heading %q", head))
						continue
					}
				}
				doc := documented(text)
				for _, f := range flags {
					total++
					if !slices.Contains(doc, f) {
						missing = append(missing, fmt.Sprintf("%s: --%s", head, f))
					}
				}
				for _, f := range doc {
					known := slices.Contains(flags, f) || (p.name == "longrun" && slices.Contains(byCmd[""], f))
					if !known && f != "h" && f != "help" {
						unknown = append(unknown, fmt.Sprintf("%s: --%s", head, f))
					}
				}
			}
			sort.Strings(missing)
			sort.Strings(unknown)
			require.Empty(t, missing, "flags %s defines that %s does not name", p.name, reference)
			require.Empty(t, unknown, "flags %s names that %s does not define", reference, p.name)
		})
	}
	t.Logf("%d flags of %d programs checked against %s", total, len(programs()), reference)
}

// envPackages are the directories whose non-test Go files make up the
// programs (go list -deps, inside this repository), and the devserver's.
func envPackages(t *testing.T) []string {
	out, err := exec.Command("go", "-C", "..", "list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{end}}",
		"./starter", "./worker", "./bench").Output()
	require.NoError(t, err)
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	dirs := []string{filepath.Join(root, "devserver")}
	for _, d := range strings.Fields(string(out)) {
		if strings.HasPrefix(d, root+string(filepath.Separator)) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// envName is what a variable's name looks like.
var envName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*[A-Z0-9]$`)

// readEnv returns the variables the files in dirs read by name: the first
// argument of every call to a function or method named Getenv, LookupEnv
// or getenv, given as a string literal or as a constant declared in those
// files.
func readEnv(t *testing.T, dirs []string) map[string]string {
	fset := token.NewFileSet()
	consts := map[string]string{} // name and pkg.Name -> value
	var files []*ast.File
	for _, d := range dirs {
		matches, err := filepath.Glob(filepath.Join(d, "*.go"))
		require.NoError(t, err)
		for _, f := range matches {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, f, nil, 0)
			require.NoError(t, err)
			files = append(files, file)
			for _, decl := range file.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								v, _ := strconv.Unquote(lit.Value)
								consts[n.Name] = v
								consts[file.Name.Name+"."+n.Name] = v
							}
						}
					}
				}
			}
		}
	}
	vars := map[string]string{}
	for _, file := range files {
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			var fn string
			switch f := call.Fun.(type) {
			case *ast.Ident:
				fn = f.Name
			case *ast.SelectorExpr:
				fn = f.Sel.Name
			}
			if fn != "Getenv" && fn != "LookupEnv" && fn != "getenv" {
				return true
			}
			var v string
			switch a := call.Args[0].(type) {
			case *ast.BasicLit:
				v, _ = strconv.Unquote(a.Value)
			case *ast.Ident:
				v = consts[a.Name]
			case *ast.SelectorExpr:
				if x, ok := a.X.(*ast.Ident); ok {
					v = consts[x.Name+"."+a.Sel.Name]
				}
			}
			if envName.MatchString(v) {
				vars[v] = fset.Position(call.Pos()).String()
			}
			return true
		})
	}
	return vars
}

// TestReferenceNamesEveryVariable checks that every environment variable
// the programs read appears in the reference, and that every LONGRUN_
// variable the reference names is read somewhere in the repository (a
// program, a test or a script).
func TestReferenceNamesEveryVariable(t *testing.T) {
	page := readReference(t)
	vars := readEnv(t, envPackages(t))
	require.Contains(t, vars, "LONGRUN_TASK_QUEUE", "the walk found none of the variables it should")
	var missing []string
	for v, where := range vars {
		if !regexp.MustCompile(`\b` + v + `\b`).MatchString(page) {
			missing = append(missing, v+" (read at "+where+")")
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "variables the programs read that %s does not name", reference)

	var corpus strings.Builder
	require.NoError(t, filepath.WalkDir("..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".longrun-bin" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		ext := filepath.Ext(p)
		if !d.IsDir() && (ext == ".go" || ext == ".sh" || ext == ".yml" || d.Name() == "Makefile" || d.Name() == "run" || d.Name() == "Dockerfile") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			corpus.Write(b)
		}
		return nil
	}))
	var unknown []string
	for _, v := range regexp.MustCompile(`\bLONGRUN_[A-Z0-9_]*[A-Z0-9]\b`).FindAllString(page, -1) {
		if !strings.Contains(corpus.String(), v) && !slices.Contains(unknown, v) {
			unknown = append(unknown, v)
		}
	}
	require.Empty(t, unknown, "variables %s names that nothing reads", reference)
	t.Logf("%d variables the programs read, all in %s", len(vars), reference)
}
