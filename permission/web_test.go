package permission

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDecideWeb: a web call asks by default, in every profile but plan's
// denial of writers (it is read-only, so plan asks too), auto included; a
// rule on the host allows it, "*.go.dev" covers hosts under go.dev but
// not go.dev itself, and a deny rule outranks an allow of an earlier layer.
func TestDecideWeb(t *testing.T) {
	t.Parallel()
	fetch := func(host string) Call {
		return Call{Tool: "web_fetch", ReadOnly: true, Web: true, Kind: KindURL, Subject: host}
	}
	allowHosts := layer(LayerWorker,
		Rule{Tool: "web_fetch", Pattern: "example.com", Action: Allow},
		Rule{Tool: "web_fetch", Pattern: "*.go.dev", Action: Allow},
		Rule{Tool: "web_search", Action: Allow})
	tests := []struct {
		name string
		cfg  Config
		call Call
		want Action
	}{
		{name: "default asks", call: fetch("example.com"), want: Ask},
		{name: "plan asks", cfg: Config{Profile: ProfilePlan}, call: fetch("example.com"), want: Ask},
		{name: "auto asks", cfg: Config{Profile: ProfileAuto}, call: fetch("example.com"), want: Ask},
		{name: "search asks", call: Call{Tool: "web_search", ReadOnly: true, Web: true}, want: Ask},
		{name: "no approver denies", cfg: Config{Approver: ApproverNone}, call: fetch("example.com"), want: Deny},
		{name: "host rule allows", cfg: Config{Layers: []Layer{allowHosts}}, call: fetch("example.com"), want: Allow},
		{name: "other host asks", cfg: Config{Layers: []Layer{allowHosts}}, call: fetch("example.org"), want: Ask},
		{name: "lookalike host asks", cfg: Config{Layers: []Layer{allowHosts}}, call: fetch("example.com.evil.net"), want: Ask},
		{name: "wildcard allows a subdomain", cfg: Config{Layers: []Layer{allowHosts}}, call: fetch("pkg.go.dev"), want: Allow},
		{name: "wildcard allows a deeper subdomain", cfg: Config{Layers: []Layer{allowHosts}}, call: fetch("a.b.go.dev"), want: Allow},
		{name: "wildcard leaves the bare domain", cfg: Config{Layers: []Layer{allowHosts}}, call: fetch("go.dev"), want: Ask},
		{name: "search rule allows", cfg: Config{Layers: []Layer{allowHosts}}, call: Call{Tool: "web_search", ReadOnly: true, Web: true}, want: Allow},
		{name: "host rule allows in auto", cfg: Config{Profile: ProfileAuto, Layers: []Layer{allowHosts}}, call: fetch("example.com"), want: Allow},
		{name: "later deny wins", cfg: Config{Layers: []Layer{allowHosts, layer(LayerSession, Rule{Tool: "web_*", Pattern: "*.go.dev", Action: Deny})}},
			call: fetch("pkg.go.dev"), want: Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := New(tt.cfg)
			require.NoError(t, err)
			d := e.Decide(tt.call)
			require.Equal(t, tt.want, d.Action, d.Reason)
			if tt.want == Ask && d.Layer == LayerDefaults {
				require.Contains(t, d.Reason, "reaches the web")
			}
		})
	}
}

// TestFailClosedWebExample: the denial tells how to allow the very host.
func TestFailClosedWebExample(t *testing.T) {
	t.Parallel()
	e, err := New(Config{Approver: ApproverNone})
	require.NoError(t, err)
	d := e.Decide(Call{Tool: "web_fetch", ReadOnly: true, Web: true, Kind: KindURL, Subject: "pkg.go.dev"})
	require.Equal(t, Deny, d.Action)
	require.Contains(t, d.Reason, `{"tool":"web_fetch","pattern":"pkg.go.dev","action":"allow"}`)
}

// TestRememberWebHost: approving a fetch "for the session" remembers its
// host, which then covers other pages of that host only.
func TestRememberWebHost(t *testing.T) {
	t.Parallel()
	e, err := New(Config{})
	require.NoError(t, err)
	r := Rule{Tool: "web_fetch", Pattern: "example.com", Action: Allow}
	require.NoError(t, e.Remember(r))
	require.True(t, e.Covers(r, Call{Tool: "web_fetch", ReadOnly: true, Web: true, Kind: KindURL, Subject: "example.com"}))
	require.False(t, e.Covers(r, Call{Tool: "web_fetch", ReadOnly: true, Web: true, Kind: KindURL, Subject: "evil.example"}))
	require.Equal(t, Allow, e.Decide(Call{Tool: "web_fetch", ReadOnly: true, Web: true, Kind: KindURL, Subject: "example.com"}).Action)
}
