// Package composetest checks the shape of the repository's docker-compose.yml,
// docker-compose.tls.yml and Dockerfile. Docker cannot run where the tests
// run, so these tests read the files and assert what the stack depends on:
// the images and their versions against what the tests run, the search
// attributes against PostgreSQL visibility's limits, ports bound to
// loopback by default, the codec server wired to the Web UI, and the
// worker's build, volumes and environment.
package composetest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

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
	return loadComposeFile(t, "docker-compose.yml")
}

func loadComposeFile(t *testing.T, name string) composeFile {
	t.Helper()
	var cf composeFile
	require.NoError(t, yaml.Unmarshal([]byte(repoFile(t, name)), &cf), name)
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

// args is a command or entrypoint as its words, in either compose spelling.
func args(v any) []string {
	switch x := v.(type) {
	case string:
		return strings.Fields(x)
	case []any:
		var out []string
		for _, p := range x {
			if s, ok := p.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// flagValue is the value of --name in words, as "--name v" or "--name=v".
func flagValue(words []string, name string) (string, bool) {
	for i, w := range words {
		if v, ok := strings.CutPrefix(w, name+"="); ok {
			return v, true
		}
		if w == name && i+1 < len(words) {
			return words[i+1], true
		}
	}
	return "", false
}

// interpolateDefaults resolves compose's ${VAR:-default} and ${VAR-default}
// to their defaults and ${VAR} to empty: what the file means when the
// person has set nothing, which is the default these tests judge.
func interpolateDefaults(s string) string {
	re := regexp.MustCompile(`\$\{\w+(?::?-([^}]*))?\}`)
	return re.ReplaceAllString(s, "$1")
}

// binding is one published port, after interpolation.
type binding struct {
	raw                     string
	hostIP                  string // "" means every interface
	hostPort, containerPort string
}

// parsePort reads compose's short port syntax, [HOST_IP:]HOST_PORT:CONTAINER_PORT[/PROTO].
func parsePort(t *testing.T, raw string) binding {
	t.Helper()
	s := interpolateDefaults(raw)
	s, _, _ = strings.Cut(s, "/")
	b := binding{raw: raw}
	if strings.HasPrefix(s, "[") { // [::1]:8080:8080
		end := strings.Index(s, "]")
		require.Positive(t, end, "port %q", raw)
		b.hostIP, s = s[1:end], strings.TrimPrefix(s[end+1:], ":")
		b.hostPort, b.containerPort, _ = strings.Cut(s, ":")
		return b
	}
	parts := strings.Split(s, ":")
	switch len(parts) {
	case 1:
		b.containerPort = parts[0]
	case 2:
		b.hostPort, b.containerPort = parts[0], parts[1]
	case 3:
		b.hostIP, b.hostPort, b.containerPort = parts[0], parts[1], parts[2]
	default:
		t.Fatalf("port %q: want [HOST_IP:]HOST_PORT:CONTAINER_PORT", raw)
	}
	return b
}

// goModVersion is the version devserver/go.mod requires of module, without
// the v: the embedded server and UI every test runs.
func goModVersion(t *testing.T, module string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(module) + `\s+v(\S+)`)
	m := re.FindStringSubmatch(repoFile(t, "devserver/go.mod"))
	require.NotNil(t, m, "devserver/go.mod requires %s", module)
	return m[1]
}

// TestImagesMatchTestedVersions: the stack runs the server and UI the
// tests run (devserver/go.mod), in the images Temporal's compose examples
// use today, and never the deprecated auto-setup image.
func TestImagesMatchTestedVersions(t *testing.T) {
	t.Parallel()
	cf := loadCompose(t)
	server := goModVersion(t, "go.temporal.io/server")
	ui := goModVersion(t, "github.com/temporalio/ui-server/v2")

	require.Equal(t, "temporalio/server:"+server, cf.Services["temporal"].Image)
	require.Equal(t, "temporalio/ui:"+ui, cf.Services["temporal-ui"].Image)
	for _, name := range []string{"temporal-admin-tools", "temporal-create-namespace"} {
		require.Equal(t, "temporalio/admin-tools:"+server, cf.Services[name].Image, name)
	}
	for name, s := range cf.Services {
		require.NotContains(t, s.Image, "auto-setup",
			"%s: temporalio/auto-setup is deprecated, and registers Custom*Field attributes that use up PostgreSQL's Int columns", name)
	}
}

// TestSchemaSetupBeforeServer: with the plain server image, the schemas are
// the admin-tools job's, with temporal-sql-tool, and the server waits for it.
func TestSchemaSetupBeforeServer(t *testing.T) {
	t.Parallel()
	cf := loadCompose(t)
	require.Equal(t, "service_completed_successfully", cf.Services["temporal"].DependsOn["temporal-admin-tools"].Condition)
	admin := cf.Services["temporal-admin-tools"]
	require.Equal(t, "service_healthy", admin.DependsOn["postgresql"].Condition)
	require.Contains(t, strings.Join(admin.Volumes, " "), "./deploy/setup-postgres.sh:")
	require.Contains(t, args(admin.Command), "/deploy/setup-postgres.sh")
	script := repoFile(t, "deploy/setup-postgres.sh")
	require.Contains(t, script, "temporal-sql-tool --plugin postgres12")
	for _, db := range []string{"temporal", "temporal_visibility"} {
		for _, step := range []string{"create", "setup-schema -v 0.0", "update-schema -d /etc/temporal/schema/postgresql/v12/"} {
			require.Contains(t, script, "--db "+db+" "+step, "%s: %s", db, step)
		}
	}
}

// postgresCustomSearchAttributeLimits is how many custom search attributes
// of each type SQL visibility (PostgreSQL among them) holds per namespace,
// in the temporal CLI's spelling of the types. From go.temporal.io/server
// v1.32.1, common/searchattribute/sadefs/constants.go:253
// (defaultNumDBCustomSearchAttributes), the columns Int01..Int03,
// Keyword01..Keyword10 and so on of schema/postgresql/v12/visibility/schema.sql.
// One more is refused by service/frontend/operator_handler.go:304, "cannot
// have more than 3 search attribute of type Int".
// TestLimitsMatchServerSource compares it with that file.
var postgresCustomSearchAttributeLimits = map[string]int{
	"Bool":        3,
	"Int":         3,
	"Double":      3,
	"Datetime":    3,
	"Keyword":     10,
	"KeywordList": 3,
	"Text":        3,
}

// autoSetupSearchAttributes are what temporalio/auto-setup registers in the
// default namespace unless SKIP_ADD_CUSTOM_SEARCH_ATTRIBUTES=true
// (temporalio/docker-builds docker/auto-setup.sh, add_custom_search_attributes).
var autoSetupSearchAttributes = map[string]string{
	"CustomKeywordField":  "Keyword",
	"CustomStringField":   "Text",
	"CustomTextField":     "Text",
	"CustomIntField":      "Int",
	"CustomDatetimeField": "Datetime",
	"CustomDoubleField":   "Double",
	"CustomBoolField":     "Bool",
}

// sdkKeyTypes maps the SDK's temporal.NewSearchAttributeKey<Kind>
// constructors to the CLI's type names.
var sdkKeyTypes = map[string]string{
	"Keyword":     "Keyword",
	"Int64":       "Int",
	"Float64":     "Double",
	"Bool":        "Bool",
	"Time":        "Datetime",
	"KeywordList": "KeywordList",
	"String":      "Text",
}

// codeSearchAttributes are the attributes the workflow code upserts, read
// from the temporal.NewSearchAttributeKey* calls in workflows/, so a new
// key there shows up here without anyone copying its name.
func codeSearchAttributes(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "workflows", "*.go"))
	require.NoError(t, err)
	got := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			kind, isKey := strings.CutPrefix(sel.Sel.Name, "NewSearchAttributeKey")
			if !ok || pkg.Name != "temporal" || !isKey {
				return true
			}
			require.Len(t, call.Args, 1, "%s: %s", fset.Position(call.Pos()), sel.Sel.Name)
			lit, ok := call.Args[0].(*ast.BasicLit)
			require.True(t, ok && lit.Kind == token.STRING, "%s: search attribute names are string literals", fset.Position(call.Pos()))
			name, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			typ, ok := sdkKeyTypes[kind]
			require.True(t, ok, "%s: unknown key kind %s", fset.Position(call.Pos()), kind)
			require.NotContains(t, got, name, "declared twice")
			got[name] = typ
			return true
		})
	}
	require.NotEmpty(t, got, "no temporal.NewSearchAttributeKey* calls in workflows/")
	return got
}

// stackSearchAttributes is every custom attribute the stack registers in
// its namespace: what any service's LONGRUN_SEARCH_ATTRIBUTES lists, plus auto-setup's own set if
// the server is auto-setup without SKIP_ADD_CUSTOM_SEARCH_ATTRIBUTES.
func stackSearchAttributes(t *testing.T, cf composeFile) map[string]string {
	t.Helper()
	got := map[string]string{}
	for name, s := range cf.Services {
		for _, pair := range strings.Fields(s.Environment["LONGRUN_SEARCH_ATTRIBUTES"]) {
			attr, typ, ok := strings.Cut(pair, "=")
			require.True(t, ok, "%s: want Name=Type, got %q", name, pair)
			require.NotContains(t, got, attr, "registered twice")
			got[attr] = typ
		}
	}
	for name, s := range cf.Services {
		if strings.HasPrefix(s.Image, "temporalio/auto-setup:") && s.Environment["SKIP_ADD_CUSTOM_SEARCH_ATTRIBUTES"] != "true" {
			t.Logf("%s runs auto-setup, which adds its Custom*Field attributes", name)
			for n, typ := range autoSetupSearchAttributes {
				got[n] = typ
			}
		}
	}
	return got
}

// TestSearchAttributesWithinPostgresLimits: the namespace job registers
// exactly the attributes the workflow code upserts, and with whatever else
// the stack registers they fit PostgreSQL visibility's columns per type.
func TestSearchAttributesWithinPostgresLimits(t *testing.T) {
	t.Parallel()
	cf := loadCompose(t)
	registered := stackSearchAttributes(t, cf)

	perType := map[string][]string{}
	for name, typ := range registered {
		perType[typ] = append(perType[typ], name)
	}
	types := make([]string, 0, len(perType))
	for typ := range perType {
		types = append(types, typ)
	}
	sort.Strings(types)
	for _, typ := range types {
		limit, ok := postgresCustomSearchAttributeLimits[typ]
		require.True(t, ok, "type %s is not a custom search attribute type", typ)
		sort.Strings(perType[typ])
		require.LessOrEqual(t, len(perType[typ]), limit,
			"PostgreSQL visibility holds %d %s attributes per namespace, the stack registers %v", limit, typ, perType[typ])
	}
	require.Equal(t, codeSearchAttributes(t), registered, "the stack registers exactly the attributes workflows/ upserts")
}

// TestNamespaceJob: the job that registers the attributes runs the script,
// the script registers what the variable lists, and the worker waits.
func TestNamespaceJob(t *testing.T) {
	t.Parallel()
	cf := loadCompose(t)
	job := cf.Services["temporal-create-namespace"]
	require.Equal(t, "temporal:7233", job.Environment["TEMPORAL_ADDRESS"])
	require.Equal(t, "service_healthy", job.DependsOn["temporal"].Condition)
	require.Contains(t, strings.Join(job.Volumes, " "), "./deploy/create-namespace.sh:")
	require.Contains(t, args(job.Command), "/deploy/create-namespace.sh")
	script := repoFile(t, "deploy/create-namespace.sh")
	require.Contains(t, script, "temporal operator namespace create")
	require.Contains(t, script, "temporal operator search-attribute create")
	require.Contains(t, script, "$LONGRUN_SEARCH_ATTRIBUTES")
	require.Contains(t, script, `--name "$name" --type "$type"`)
	require.Equal(t, "service_completed_successfully", cf.Services["longrun-worker"].DependsOn["temporal-create-namespace"].Condition,
		"sessions upsert the custom search attributes, so they must exist first")
}

// TestLimitsMatchServerSource compares postgresCustomSearchAttributeLimits
// with the server source devserver builds against, when the module cache
// has it (it does once devserver is built).
func TestLimitsMatchServerSource(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	require.NoError(t, err)
	src := filepath.Join(strings.TrimSpace(string(out)), "go.temporal.io", "server@v"+goModVersion(t, "go.temporal.io/server"),
		"common", "searchattribute", "sadefs", "constants.go")
	b, err := os.ReadFile(src)
	if os.IsNotExist(err) {
		t.Skipf("SKIPPED LOUDLY: %s is not in the module cache; build devserver (make devserver) to check the limits against it", src)
	}
	require.NoError(t, err)
	block := regexp.MustCompile(`(?s)defaultNumDBCustomSearchAttributes = map\[enumspb\.IndexedValueType\]int\{(.*?)\}`).FindSubmatch(b)
	require.NotNil(t, block, "defaultNumDBCustomSearchAttributes in %s", src)
	got := map[string]int{}
	for _, m := range regexp.MustCompile(`INDEXED_VALUE_TYPE_(\w+):\s*(\d+)`).FindAllSubmatch(block[1], -1) {
		n, _ := strconv.Atoi(string(m[2]))
		words := strings.Split(strings.ToLower(string(m[1])), "_")
		for i, w := range words {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
		got[strings.Join(words, "")] = n
	}
	require.Equal(t, postgresCustomSearchAttributeLimits, got, "from %s", src)
}

// TestSameAttributesAsDevServer keeps the dev server's registration and the
// code from drifting. devserver is its own module, so its list is read as text.
func TestSameAttributesAsDevServer(t *testing.T) {
	t.Parallel()
	src := repoFile(t, "devserver/searchattrs.go")
	re := regexp.MustCompile(`"(\w+)":\s*enumspb\.INDEXED_VALUE_TYPE_(\w+)`)
	got := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(src, -1) {
		typ := strings.ToLower(m[2])
		got[m[1]] = strings.ToUpper(typ[:1]) + typ[1:]
	}
	require.Equal(t, codeSearchAttributes(t), got)
}

// TestPortsOnLoopbackByDefault: 7233 lets anyone approve tool calls and the
// codec server decrypts anything it is sent, so every published port is on
// 127.0.0.1 unless the person sets LONGRUN_BIND.
func TestPortsOnLoopbackByDefault(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"docker-compose.yml", "docker-compose.tls.yml"} {
		cf := loadComposeFile(t, file)
		for name, s := range cf.Services {
			for _, p := range s.Ports {
				b := parsePort(t, p)
				require.Equal(t, "127.0.0.1", b.hostIP, "%s: %s publishes %q on every interface by default", file, name, p)
				if name == "longrun-codec" {
					// It asks no token (the Web UI cannot send one without
					// its OIDC login): never opened by LONGRUN_BIND.
					require.True(t, strings.HasPrefix(p, "127.0.0.1:"), "%s: %s: %q stays on loopback", file, name, p)
					continue
				}
				require.True(t, strings.HasPrefix(p, "${LONGRUN_BIND:-127.0.0.1}:"), "%s: %s: %q: LONGRUN_BIND is the one opt-in", file, name, p)
			}
		}
	}
	cf := loadCompose(t)
	require.True(t, publishes(cf.Services["temporal"].Ports, "7233"))
	require.True(t, publishes(cf.Services["temporal-ui"].Ports, "8080"))
	require.Empty(t, cf.Services["postgresql"].Ports, "only Temporal talks to the database")
}

// TestCodecServerWiring: the UI's codec endpoint is where the browser finds
// the codec service (its published port on loopback), the codec service
// listens on the container port behind it, is the same image as the worker
// running `longrun codec-server`, answers CORS for the UI's origin, and
// reads the same keys as the worker.
func TestCodecServerWiring(t *testing.T) {
	t.Parallel()
	cf := loadCompose(t)
	ui := cf.Services["temporal-ui"]
	raw, ok := ui.Environment["TEMPORAL_CODEC_ENDPOINT"]
	require.True(t, ok, "the Web UI has no TEMPORAL_CODEC_ENDPOINT")
	endpoint, err := url.Parse(interpolateDefaults(raw))
	require.NoError(t, err)
	require.Equal(t, "http", endpoint.Scheme)
	require.Contains(t, []string{"localhost", "127.0.0.1"}, endpoint.Hostname(), "the browser reaches the codec on the host's loopback")

	codec, ok := cf.Services["longrun-codec"]
	require.True(t, ok, "no longrun-codec service")
	words := append(args(codec.Entrypoint), args(codec.Command)...)
	require.Equal(t, []string{"/usr/local/bin/longrun", "codec-server"}, words[:2], "the starter binary's codec-server command")
	var published *binding
	for _, p := range codec.Ports {
		b := parsePort(t, p)
		if b.hostPort == endpoint.Port() {
			published = &b
		}
	}
	require.NotNil(t, published, "the UI's codec endpoint %s is not a port longrun-codec publishes: %v", endpoint, codec.Ports)
	require.Equal(t, "127.0.0.1", published.hostIP)
	listen, ok := flagValue(words, "--listen")
	require.True(t, ok, "codec-server --listen")
	host, port, err := splitHostPort(listen)
	require.NoError(t, err)
	require.Equal(t, published.containerPort, port, "the published port reaches the port codec-server listens on")
	require.Contains(t, []string{"", "0.0.0.0", "::"}, host, "inside its container the codec listens on every interface, or Docker cannot forward to it")

	var uiPort string
	for _, p := range ui.Ports {
		if b := parsePort(t, p); b.containerPort == "8080" {
			uiPort = b.hostPort
		}
	}
	var origins []string
	for _, w := range words {
		origins = append(origins, interpolateDefaults(w))
	}
	require.Contains(t, origins, "http://localhost:"+uiPort, "CORS answers the UI's origin")

	worker := cf.Services["longrun-worker"]
	require.Equal(t, worker.Image, codec.Image, "built from the same Dockerfile as the worker")
	require.Equal(t, *worker.Build, *codec.Build)
	keys := worker.Environment["LONGRUN_ENCRYPTION_KEYS"]
	require.NotEmpty(t, keys, "the worker encrypts payloads")
	require.Equal(t, keys, codec.Environment["LONGRUN_ENCRYPTION_KEYS"], "the codec decodes with the worker's keys")
	require.Equal(t, volumeAt(t, worker.Volumes, filepath.Dir(keys)), volumeAt(t, codec.Volumes, filepath.Dir(keys)), "the same key volume")
	require.Regexp(t, regexp.MustCompile(`go build [^\n]*-o /out/longrun \./starter`), repoFile(t, "Dockerfile"))
}

func splitHostPort(s string) (string, string, error) {
	i := strings.LastIndex(s, ":")
	if i < 0 {
		return "", "", &url.Error{Op: "listen", URL: s, Err: os.ErrInvalid}
	}
	return strings.Trim(s[:i], "[]"), s[i+1:], nil
}

// volumeAt is the source of the volume mounted at target, "" if none.
func volumeAt(t *testing.T, volumes []string, target string) string {
	t.Helper()
	for _, v := range volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && parts[1] == target {
			return parts[0]
		}
	}
	return ""
}

// TestWorker: the worker's build, environment, and volumes: the workspace
// and the state directory each on a named volume of their own.
func TestWorker(t *testing.T) {
	t.Parallel()
	cf := loadCompose(t)
	w := cf.Services["longrun-worker"]
	require.NotNil(t, w.Build, "the worker is built from this repository")
	require.Equal(t, ".", w.Build.Context)
	require.Equal(t, "Dockerfile", w.Build.Dockerfile)
	require.Equal(t, "temporal:7233", w.Environment["TEMPORAL_ADDRESS"])
	require.Equal(t, "/workspace", w.Environment["LONGRUN_WORKSPACE"])
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "LONGRUN_MODEL"} {
		require.Contains(t, w.Environment, k)
		require.Contains(t, w.Environment[k], "${"+k, "%s comes from the host environment", k)
	}
	require.Equal(t, "service_healthy", w.DependsOn["temporal"].Condition)

	workspace := volumeAt(t, w.Volumes, "/workspace")
	require.Contains(t, cf.Volumes, workspace, "a named volume is mounted at /workspace: %v", w.Volumes)
	state := w.Environment["LONGRUN_STATE_DIR"]
	require.NotEmpty(t, state)
	stateVol := volumeAt(t, w.Volumes, state)
	require.Contains(t, cf.Volumes, stateVol, "a named volume is mounted at the state directory %s: %v", state, w.Volumes)
	require.NotEqual(t, workspace, stateVol, "the state directory is not in the workspace")
}

// TestOfflineFirstRun: LONGRUN_SCRIPTED_MODEL=demo turns on the worker's
// scripted demo model, and unset leaves the live model.
func TestOfflineFirstRun(t *testing.T) {
	t.Parallel()
	w := loadCompose(t).Services["longrun-worker"]
	raw, ok := flagValue(args(w.Command), "--scripted-model")
	require.True(t, ok, "the worker's command passes --scripted-model: %v", w.Command)
	require.Equal(t, "${LONGRUN_SCRIPTED_MODEL:-}", raw)
	require.Empty(t, interpolateDefaults(raw), "unset, the live model")
	require.Contains(t, repoFile(t, "worker/run.go"), `"scripted-model"`)
	require.Contains(t, repoFile(t, "worker/start.go"), `scriptedmodel.NewResponder(scriptedmodel.Demo())`, "the worker serves the scripted demo model (startScriptedModel)")
}

// TestTLSProfile: docker-compose.tls.yml gives the server its certificates
// and asks clients for theirs, and gives the worker, the UI and the
// namespace job a client certificate, all files make-certs.sh writes.
func TestTLSProfile(t *testing.T) {
	t.Parallel()
	cf := loadComposeFile(t, "docker-compose.tls.yml")
	made := repoFile(t, "deploy/tls/make-certs.sh")
	file := func(service, path string) {
		t.Helper()
		require.True(t, strings.HasPrefix(path, "/certs/"), "%s: %s", service, path)
		require.Contains(t, made, filepath.Base(path), "%s: make-certs.sh writes %s", service, path)
		require.Contains(t, strings.Join(cf.Services[service].Volumes, " "), ":/certs:ro", "%s mounts the certificates", service)
	}

	srv := cf.Services["temporal"].Environment
	require.Equal(t, "true", srv["TEMPORAL_TLS_REQUIRE_CLIENT_AUTH"], "mTLS: a client without a certificate is refused")
	for _, k := range []string{"TEMPORAL_TLS_SERVER_CA_CERT", "TEMPORAL_TLS_SERVER_CERT", "TEMPORAL_TLS_SERVER_KEY",
		"TEMPORAL_TLS_FRONTEND_CERT", "TEMPORAL_TLS_FRONTEND_KEY", "TEMPORAL_TLS_CLIENT1_CA_CERT", "TEMPORAL_TLS_CLIENT2_CA_CERT"} {
		file("temporal", srv[k])
	}
	for _, name := range []string{"longrun-worker", "temporal-create-namespace"} {
		env := cf.Services[name].Environment
		require.Equal(t, "true", env["TEMPORAL_TLS"], name)
		require.Equal(t, "temporal", env["TEMPORAL_TLS_SERVER_NAME"], name)
		for _, k := range []string{"TEMPORAL_TLS_SERVER_CA_CERT_PATH", "TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CLIENT_KEY_PATH"} {
			file(name, env[k])
		}
	}
	ui := cf.Services["temporal-ui"].Environment
	require.Equal(t, "true", ui["TEMPORAL_TLS_ENABLE_HOST_VERIFICATION"])
	require.Equal(t, "temporal", ui["TEMPORAL_TLS_SERVER_NAME"])
	for _, k := range []string{"TEMPORAL_TLS_CA", "TEMPORAL_TLS_CERT", "TEMPORAL_TLS_KEY"} {
		file("temporal-ui", ui[k])
	}
	base := loadCompose(t)
	for name := range cf.Services {
		require.Contains(t, base.Services, name, "the TLS file overrides services of docker-compose.yml")
	}
}

func TestPostgres(t *testing.T) {
	t.Parallel()
	pg := loadCompose(t).Services["postgresql"]
	require.Regexp(t, `^postgres:16`, pg.Image)
	require.NotNil(t, pg.Healthcheck, "the schema job waits for postgres to be healthy")
	require.Equal(t, "postgresql-data", volumeAt(t, pg.Volumes, "/var/lib/postgresql/data"), "the database outlives the container")
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

// TestDeployScriptsParse: the scripts the one-shot jobs run are valid POSIX sh.
func TestDeployScriptsParse(t *testing.T) {
	t.Parallel()
	scripts, err := filepath.Glob(filepath.Join("..", "deploy", "*.sh"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join("..", "deploy", "tls", "*.sh"))
	require.NoError(t, err)
	scripts = append(scripts, more...)
	require.NotEmpty(t, scripts)
	for _, s := range scripts {
		out, err := exec.Command("sh", "-n", s).CombinedOutput()
		require.NoError(t, err, "%s: %s", s, out)
	}
}

// TestEncryptionKeyScript: the longrun-keys job writes one KEYID=BASE64 line
// of a 32-byte key, private to its owner, and never replaces a key file.
func TestEncryptionKeyScript(t *testing.T) {
	t.Parallel()
	keys := filepath.Join(t.TempDir(), "encryption-keys")
	run := func() {
		cmd := exec.Command("sh", filepath.Join("..", "deploy", "make-encryption-key.sh"))
		cmd.Env = append(os.Environ(), "LONGRUN_ENCRYPTION_KEYS="+keys)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	run()
	first, err := os.ReadFile(keys)
	require.NoError(t, err)
	m := regexp.MustCompile(`^([A-Za-z0-9._-]{1,64})=([A-Za-z0-9+/=]+)\n$`).FindStringSubmatch(string(first))
	require.NotNil(t, m, "one KEYID=BASE64 line")
	require.Len(t, m[2], 44, "standard base64 of 32 bytes")
	fi, err := os.Stat(keys)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	run()
	again, err := os.ReadFile(keys)
	require.NoError(t, err)
	require.Equal(t, first, again, "an existing key file is left alone")
}
