package mcp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/tools"
)

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	_, err := LoadConfig(path)
	require.True(t, errors.Is(err, ErrNoConfig), "no file is no servers, not a fault")

	require.NoError(t, os.WriteFile(path, []byte(`{"servers": {
		"github": {"command": "github-mcp", "args": ["stdio"], "env": {"TOKEN": "${GH_TOKEN}"}, "timeout": "45s", "omit": ["delete_repo"], "exposure": "deferred"},
		"docs": {"url": "http://127.0.0.1:9000/mcp", "timeout": 5}
	}}`), 0o644))
	c, err := LoadConfig(path)
	require.NoError(t, err)
	require.Equal(t, ServerConfig{Command: "github-mcp", Args: []string{"stdio"}, Env: map[string]string{"TOKEN": "${GH_TOKEN}"},
		Timeout: Duration(45 * time.Second), Omit: []string{"delete_repo"}, Exposure: tools.ExposureDeferred}, c.Servers["github"])
	require.Equal(t, 5*time.Second, c.Servers["docs"].timeout())
	require.Equal(t, DefaultTimeout, ServerConfig{}.timeout())
}

func TestLoadConfigRejects(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, json, want string }{
		{"neither", `{"servers":{"a":{}}}`, "set command (stdio) or url"},
		{"both", `{"servers":{"a":{"command":"x","url":"http://h"}}}`, "not both"},
		{"url scheme", `{"servers":{"a":{"url":"ftp://h"}}}`, "want http:// or https://"},
		{"separator in name", `{"servers":{"a__b":{"command":"x"}}}`, "holds no"},
		{"trailing underscore", `{"servers":{"a_":{"command":"x"}}}`, "does not end in _"},
		{"dot in name", `{"servers":{"a.b":{"command":"x"}}}`, "a name is"},
		{"exposure", `{"servers":{"a":{"command":"x","exposure":"hidden"}}}`, `exposure "hidden"`},
		{"timeout", `{"servers":{"a":{"command":"x","timeout":"soon"}}}`, `duration "soon"`},
		{"unknown field", `{"servers":{"a":{"command":"x","cmd":"y"}}}`, `unknown field "cmd"`},
		{"args on url", `{"servers":{"a":{"url":"http://h","args":["x"]}}}`, "args, env and sandbox are for a command"},
		{"sandbox on url", `{"servers":{"a":{"url":"http://h","sandbox":false}}}`, "args, env and sandbox are for a command"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "mcp.json")
			require.NoError(t, os.WriteFile(path, []byte(c.json), 0o644))
			_, err := LoadConfig(path)
			require.ErrorContains(t, err, c.want)
			require.ErrorContains(t, err, path, "the error names the file")
		})
	}
}

func TestExposedName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 80)
	cases := []struct {
		name, server, tool string
		taken              []string
		want               string
	}{
		{"plain", "gh", "create_issue", nil, "gh__create_issue"},
		{"dots and slashes", "gh", "repo.list/all", nil, "gh__repo_list_all"},
		{"cleaned collides", "gh", "a.b", []string{"gh__a_b"}, "gh__a_b_"},
		{"too long", "gh", long, nil, "gh__" + long[:51] + "_"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			taken := map[string]bool{}
			for _, n := range c.taken {
				taken[n] = true
			}
			got := ExposedName(c.server, c.tool, taken)
			require.Regexp(t, openAIName, got)
			require.True(t, strings.HasPrefix(got, c.want), "%s does not start with %s", got, c.want)
			server, ok := SplitName(got)
			require.True(t, ok)
			require.Equal(t, c.server, server)
			require.Equal(t, got, ExposedName(c.server, c.tool, taken), "stable")
		})
	}
	_, ok := SplitName("read")
	require.False(t, ok)
	_, ok = SplitName("__x")
	require.False(t, ok)
}

func TestParameters(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		in       any
		want     string
		replaced bool
	}{
		{"none", nil, `{"type":"object","properties":{}}`, false},
		{"no type", map[string]any{"properties": map[string]any{"q": map[string]any{"type": "string"}}}, `{"type":"object","properties":{"q":{"type":"string"}}}`, false},
		{"no properties", map[string]any{"type": "object"}, `{"type":"object","properties":{}}`, false},
		{"uncompilable", map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"$ref": "#/nowhere"}}}, `{"type":"object","properties":{}}`, true},
		{"not a map", []any{1}, `{"type":"object","properties":{}}`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, replaced := parameters("s__t", c.in)
			require.JSONEq(t, c.want, string(got))
			require.Equal(t, c.replaced, replaced)
			require.NoError(t, tools.ValidateArguments(tools.Spec{Name: "s__t", Parameters: got}, `{}`))
		})
	}
}
