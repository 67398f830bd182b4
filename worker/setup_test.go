package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/tools"
)

// --setup (repeatable) or LONGRUN_SETUP (one entry a line): COMMAND for
// every repository, /REPO=COMMAND for one; a command with = in it stays a
// command; two for the same repository, or an empty one, are refused.
func TestSetupFlags(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags(nil, env(nil))
	require.NoError(t, err)
	require.Nil(t, m.setup.config(tools.Config{}), "no setup by default")

	m, err = ParseFlags([]string{"--setup", "GOFLAGS=-mod=mod go mod download", "--setup", "/src/web/=npm ci", "--setup-timeout", "5m"}, env(nil))
	require.NoError(t, err)
	c := m.setup.config(tools.Config{StateDir: "/state"})
	require.NotNil(t, c)
	require.Equal(t, "GOFLAGS=-mod=mod go mod download", c.For("/src/app"))
	require.Equal(t, "npm ci", c.For("/src/web"))
	require.Equal(t, 5*time.Minute, c.Timeout)
	require.Equal(t, activities.DefaultSetupKeep, c.Keep, "unused layers go after the default")
	require.Equal(t, "/state", c.Sandbox.StateDir)

	m, err = ParseFlags(nil, env(map[string]string{"LONGRUN_SETUP": "go mod download\n/src/web=npm ci\n", "LONGRUN_SETUP_TIMEOUT": "90s"}))
	require.NoError(t, err)
	c = m.setup.config(tools.Config{})
	require.Equal(t, "go mod download", c.For("/src/app"))
	require.Equal(t, "npm ci", c.For("/src/web"))
	require.Equal(t, 90*time.Second, c.Timeout)

	m, err = ParseFlags([]string{"--setup", "make deps"}, env(map[string]string{"LONGRUN_SETUP": "go mod download"}))
	require.NoError(t, err)
	require.Equal(t, "make deps", m.setup.config(tools.Config{}).For("/x"), "the flag replaces the variable")

	_, err = ParseFlags([]string{"--setup", "a", "--setup", "b"}, env(nil))
	require.ErrorContains(t, err, "a second command for every repository")
	_, err = ParseFlags([]string{"--setup", "/src/web="}, env(nil))
	require.ErrorContains(t, err, "no command")
	_, err = ParseFlags(nil, env(map[string]string{"LONGRUN_SETUP_TIMEOUT": "soon"}))
	require.ErrorContains(t, err, "LONGRUN_SETUP_TIMEOUT")

	m, err = ParseFlags([]string{"--setup", "go mod download", "--setup-keep", "0"}, env(map[string]string{"LONGRUN_SETUP_KEEP": "48h"}))
	require.NoError(t, err)
	require.Zero(t, m.setup.config(tools.Config{}).Keep, "0 keeps every layer; the flag beats the variable")
	m, err = ParseFlags([]string{"--setup", "go mod download"}, env(map[string]string{"LONGRUN_SETUP_KEEP": "48h"}))
	require.NoError(t, err)
	require.Equal(t, 48*time.Hour, m.setup.config(tools.Config{}).Keep)
	_, err = ParseFlags(nil, env(map[string]string{"LONGRUN_SETUP_KEEP": "-1h"}))
	require.ErrorContains(t, err, "LONGRUN_SETUP_KEEP")
	_, err = ParseFlags([]string{"--setup-keep", "-1h"}, env(nil))
	require.ErrorContains(t, err, "--setup-keep")
}
