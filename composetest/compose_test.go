// Package composetest checks the shape of the repository's docker-compose.yml
// and Dockerfile. Docker cannot run where the tests run, so these tests read
// the files and assert what the stack depends on: the services, their ports,
// the worker's build and environment, and the search attributes sessions
// upsert (an unregistered one fails the workflow task).
package composetest

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// wantSearchAttributes must match devserver/searchattrs.go: the dev server
// and the compose stack register the same set.
var wantSearchAttributes = map[string]string{
	"LongrunPhase":            "Keyword",
	"LongrunModel":            "Keyword",
	"LongrunWorkspace":        "Keyword",
	"LongrunPendingApprovals": "Int",
	"LongrunTurns":            "Int",
	"LongrunTokens":           "Int",
}

type composeFile struct {
	Services map[string]service `yaml:"services"`
	Volumes  map[string]any     `yaml:"volumes"`
}

type service struct {
	Image       string         `yaml:"image"`
	Build       *build         `yaml:"build"`
	Ports       []string       `yaml:"ports"`
	Environment environment    `yaml:"environment"`
	DependsOn   map[string]dep `yaml:"depends_on"`
	Volumes     []string       `yaml:"volumes"`
	Entrypoint  any            `yaml:"entrypoint"`
	Command     any            `yaml:"command"`
	Healthcheck *struct {
		Test any `yaml:"test"`
	} `yaml:"healthcheck"`
}

type build struct {
	Context    string `yaml:"context"`
	Dockerfile string `yaml:"dockerfile"`
}

type dep struct {
	Condition string `yaml:"condition"`
}

// environment accepts both compose spellings: a map, or a list of K=V.
type environment map[string]string

func (e *environment) UnmarshalYAML(n *yaml.Node) error {
	*e = environment{}
	if n.Kind == yaml.SequenceNode {
		var list []string
		if err := n.Decode(&list); err != nil {
			return err
		}
		for _, kv := range list {
			k, v, _ := strings.Cut(kv, "=")
			(*e)[k] = v
		}
		return nil
	}
	var m map[string]string
	if err := n.Decode(&m); err != nil {
		return err
	}
	for k, v := range m {
		(*e)[k] = v
	}
	return nil
}

func repoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", name))
	require.NoError(t, err)
	return string(b)
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	var cf composeFile
	require.NoError(t, yaml.Unmarshal([]byte(repoFile(t, "docker-compose.yml")), &cf))
	return cf
}

// publishes reports whether any port mapping publishes container port p.
func publishes(ports []string, p string) bool {
	for _, m := range ports {
		m = strings.TrimSuffix(m, "/tcp")
		parts := strings.Split(m, ":")
		if parts[len(parts)-1] == p {
			return true
		}
	}
	return false
}

func TestServicesExist(t *testing.T) {
	t.Parallel()
	cf := loadCompose(t)
	for _, name := range []string{"postgresql", "temporal", "temporal-admin-tools", "temporal-ui", "longrun-worker"} {
		require.Contains(t, cf.Services, name)
	}
}

func TestPostgres(t *testing.T) {
	t.Parallel()
	pg := loadCompose(t).Services["postgresql"]
	require.Regexp(t, `^postgres:16`, pg.Image)
	require.NotNil(t, pg.Healthcheck, "temporal waits for postgres to be healthy")
	require.NotEmpty(t, pg.Volumes, "the database must outlive the container")
	require.True(t, strings.HasSuffix(strings.Split(pg.Volumes[0], ":")[1], "/var/lib/postgresql/data"))
}

func TestTemporal(t *testing.T) {
	t.Parallel()
	cf := loadCompose(t)
	tp := cf.Services["temporal"]
	require.Regexp(t, `^temporalio/(auto-setup|server):\d+\.\d+`, tp.Image, "pin the server image")
	require.True(t, publishes(tp.Ports, "7233"), "temporal publishes 7233: %v", tp.Ports)
	require.Equal(t, "postgres12", tp.Environment["DB"])
	require.Equal(t, "postgresql", tp.Environment["POSTGRES_SEEDS"])
	require.Equal(t, "service_healthy", tp.DependsOn["postgresql"].Condition)
	require.NotNil(t, tp.Healthcheck, "the UI and worker wait for temporal to be healthy")

	ui := cf.Services["temporal-ui"]
	require.Regexp(t, `^temporalio/ui:\d`, ui.Image)
	require.True(t, publishes(ui.Ports, "8080"), "ui publishes 8080: %v", ui.Ports)
	require.Equal(t, "temporal:7233", ui.Environment["TEMPORAL_ADDRESS"])
}

func TestWorker(t *testing.T) {
	t.Parallel()
	w := loadCompose(t).Services["longrun-worker"]
	require.NotNil(t, w.Build, "the worker is built from this repository")
	require.Equal(t, ".", w.Build.Context)
	require.Equal(t, "Dockerfile", w.Build.Dockerfile)
	require.Equal(t, "temporal:7233", w.Environment["TEMPORAL_ADDRESS"])
	require.Equal(t, "/workspace", w.Environment["LONGRUN_WORKSPACE"])
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "LONGRUN_MODEL"} {
		require.Contains(t, w.Environment, k)
		require.Contains(t, w.Environment[k], "${"+k, "%s comes from the host environment", k)
	}
	var mounted bool
	for _, v := range w.Volumes {
		if parts := strings.Split(v, ":"); len(parts) >= 2 && parts[1] == "/workspace" {
			mounted = true
		}
	}
	require.True(t, mounted, "a volume is mounted at /workspace: %v", w.Volumes)
	require.Equal(t, "service_healthy", w.DependsOn["temporal"].Condition)
	require.Equal(t, "service_completed_successfully", w.DependsOn["temporal-admin-tools"].Condition,
		"sessions upsert the custom search attributes, so they must exist first")
}

func TestSearchAttributeRegistration(t *testing.T) {
	t.Parallel()
	admin := loadCompose(t).Services["temporal-admin-tools"]
	require.Regexp(t, `^temporalio/admin-tools:`, admin.Image)
	require.Equal(t, "temporal:7233", admin.Environment["TEMPORAL_ADDRESS"])

	got := map[string]string{}
	var names []string
	for _, pair := range strings.Fields(admin.Environment["LONGRUN_SEARCH_ATTRIBUTES"]) {
		name, typ, ok := strings.Cut(pair, "=")
		require.True(t, ok, "want Name=Type, got %q", pair)
		require.NotContains(t, got, name, "registered twice")
		got[name] = typ
		names = append(names, name)
	}
	sort.Strings(names)
	require.Equal(t, wantSearchAttributes, got, "registered: %v", names)

	// The service runs the script that does the registering, and the script
	// registers what the variable lists with the temporal CLI.
	require.Contains(t, strings.Join(admin.Volumes, " "), "./deploy/register-search-attributes.sh:")
	require.Contains(t, toString(admin.Entrypoint)+" "+toString(admin.Command), "register-search-attributes.sh")
	script := repoFile(t, "deploy/register-search-attributes.sh")
	require.Contains(t, script, "temporal operator search-attribute create")
	require.Contains(t, script, "$LONGRUN_SEARCH_ATTRIBUTES")
	require.Contains(t, script, `--name "$name" --type "$type"`)
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var parts []string
		for _, p := range x {
			if s, ok := p.(string); ok {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, " ")
	}
	return ""
}

func TestDockerfileBuildsWorker(t *testing.T) {
	t.Parallel()
	df := repoFile(t, "Dockerfile")
	require.Regexp(t, `(?m)^FROM golang:1\.26\S* AS build`, df, "multi-stage build on go 1.26")
	require.Regexp(t, regexp.MustCompile(`go build [^\n]*\./worker\b`), df)
	froms := regexp.MustCompile(`(?m)^FROM `).FindAllStringIndex(df, -1)
	require.GreaterOrEqual(t, len(froms), 2, "runtime stage separate from the build stage")
	require.Regexp(t, `(?m)^ENTRYPOINT .*longrun-worker`, df)

	ignore := repoFile(t, ".dockerignore")
	require.Contains(t, strings.Fields(ignore), ".git")
	for _, keep := range []string{"worker", "workflows", "activities", "tools", "conversation", "go.mod", "go.sum", "*.md", "**/*.md"} {
		require.NotContains(t, strings.Fields(ignore), keep, "the build needs %s", keep)
	}
}

// TestSameAttributesAsDevServer keeps the two registrations from drifting.
// devserver is its own module, so its list is read as text.
func TestSameAttributesAsDevServer(t *testing.T) {
	t.Parallel()
	src := repoFile(t, "devserver/searchattrs.go")
	re := regexp.MustCompile(`"(\w+)":\s*enumspb\.INDEXED_VALUE_TYPE_(\w+)`)
	got := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(src, -1) {
		typ := strings.ToLower(m[2])
		got[m[1]] = strings.ToUpper(typ[:1]) + typ[1:]
	}
	require.Equal(t, wantSearchAttributes, got)
}
