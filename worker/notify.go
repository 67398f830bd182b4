package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/longrun/longrun/notify"
)

// notifyConfig is where the worker posts notifications. The URLs (a
// Slack webhook's holds its token) and the secret are the worker's: they
// never enter history or a sandbox (see tools' envNeverPassed).
type notifyConfig struct {
	Webhooks   []string // --notify, LONGRUN_NOTIFY
	Slack      []string // --notify-slack, LONGRUN_NOTIFY_SLACK
	Secret     string   // LONGRUN_NOTIFY_SECRET: only from the environment, never a flag ps shows
	ConsoleURL string   // --console-url, LONGRUN_CONSOLE_URL
}

// bind adds the notification flags; a repeatable flag given at least once
// replaces its variable's list.
func (c *notifyConfig) bind(fs *flag.FlagSet, getenv func(string) string) {
	c.Webhooks = splitList(getenv("LONGRUN_NOTIFY"))
	c.Slack = splitList(getenv("LONGRUN_NOTIFY_SLACK"))
	c.Secret = getenv("LONGRUN_NOTIFY_SECRET")
	fs.Func("notify", "post a JSON notification to this webhook URL when a session waits for a person, completes, fails or stops on its budget; repeatable (env LONGRUN_NOTIFY, comma separated; signed with LONGRUN_NOTIFY_SECRET)", appender(&c.Webhooks))
	fs.Func("notify-slack", "post the notifications to this Slack-compatible incoming webhook URL; repeatable (env LONGRUN_NOTIFY_SLACK, comma separated)", appender(&c.Slack))
	fs.StringVar(&c.ConsoleURL, "console-url", getenv("LONGRUN_CONSOLE_URL"), "the approval inbox's URL (longrun console), linked from every notification (env LONGRUN_CONSOLE_URL)")
}

// appender is a repeatable flag's Set: the first use drops the
// environment's list.
func appender(list *[]string) func(string) error {
	fromFlags := false
	return func(v string) error {
		if !fromFlags {
			*list, fromFlags = nil, true
		}
		*list = append(*list, strings.TrimSpace(v))
		return nil
	}
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// validate checks every URL, naming the sink, never echoing the URL.
func (c *notifyConfig) validate() error {
	for i, u := range c.Webhooks {
		if err := notify.ParseURL(fmt.Sprintf("--notify (webhook %d)", i+1), u); err != nil {
			return err
		}
	}
	for i, u := range c.Slack {
		if err := notify.ParseURL(fmt.Sprintf("--notify-slack (slack %d)", i+1), u); err != nil {
			return err
		}
	}
	if c.ConsoleURL != "" {
		if err := notify.ParseURL("--console-url", c.ConsoleURL); err != nil {
			return err
		}
	}
	return nil
}

// sender is the worker's notify.Sender, recording deliveries under the
// state directory; nil when no sink is configured.
func (c *notifyConfig) sender(stateDir, address, namespace string) (*notify.Sender, error) {
	if len(c.Webhooks)+len(c.Slack) == 0 {
		return nil, nil
	}
	dir := filepath.Join(stateDir, "notify")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("notifications: create %s: %w", dir, err)
	}
	s := &notify.Sender{
		Webhooks: c.Webhooks, Slack: c.Slack, Dir: dir,
		Render: notify.Render{ConsoleURL: c.ConsoleURL, Address: address, Namespace: namespace},
	}
	if c.Secret != "" {
		s.Secret = []byte(c.Secret)
	}
	return s, nil
}
