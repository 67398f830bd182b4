package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNotifyFlags(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags(nil, env(map[string]string{
		"LONGRUN_NOTIFY": "https://a.example/hook, http://b.example/x", "LONGRUN_NOTIFY_SLACK": "https://hooks.slack.example/T/B/x",
		"LONGRUN_NOTIFY_SECRET": "s3cret", "LONGRUN_CONSOLE_URL": "http://inbox.example/",
	}))
	require.NoError(t, err)
	require.Equal(t, notifyConfig{
		Webhooks: []string{"https://a.example/hook", "http://b.example/x"}, Slack: []string{"https://hooks.slack.example/T/B/x"},
		Secret: "s3cret", ConsoleURL: "http://inbox.example/",
	}, m.Notify)

	// Flags replace the environment's list, and repeat.
	m, err = ParseFlags([]string{"--notify", "http://c.example/1", "--notify", "http://c.example/2", "--console-url", "http://x.example"},
		env(map[string]string{"LONGRUN_NOTIFY": "https://a.example/hook"}))
	require.NoError(t, err)
	require.Equal(t, []string{"http://c.example/1", "http://c.example/2"}, m.Notify.Webhooks)
	require.Empty(t, m.Notify.Slack)
	require.Equal(t, "http://x.example", m.Notify.ConsoleURL)

	_, err = ParseFlags([]string{"--notify", "hooks.example/T0/secret"}, env(nil))
	require.ErrorContains(t, err, "--notify (webhook 1): want an http:// or https:// URL")
	require.NotContains(t, err.Error(), "secret", "a URL may hold a token: never echoed")
	_, err = ParseFlags(nil, env(map[string]string{"LONGRUN_NOTIFY_SLACK": "ftp://x/secret"}))
	require.ErrorContains(t, err, "--notify-slack (slack 1)")
	require.NotContains(t, err.Error(), "secret")
}

func TestNotifySender(t *testing.T) {
	t.Parallel()
	none := notifyConfig{}
	s, err := none.sender(t.TempDir(), "localhost:7233", "default")
	require.NoError(t, err)
	require.Nil(t, s, "no sinks: no sender, and sessions are told so")

	state := t.TempDir()
	c := notifyConfig{Webhooks: []string{"http://a.example/"}, Secret: "k", ConsoleURL: "http://inbox/"}
	s, err = c.sender(state, "temporal:7233", "team")
	require.NoError(t, err)
	require.Equal(t, 1, s.Sinks())
	require.Equal(t, []byte("k"), s.Secret)
	require.Equal(t, state+"/notify", s.Dir)
	require.Equal(t, "temporal:7233", s.Render.Address)
	require.DirExists(t, s.Dir)
}
