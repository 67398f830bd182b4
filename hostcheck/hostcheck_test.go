package hostcheck

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAllows(t *testing.T) {
	t.Parallel()
	loop, err := New("127.0.0.1:8082", nil, "--allowed-host")
	if err != nil {
		t.Fatal(err)
	}
	public, err := New("127.0.0.1:8082", []string{"Longrun.Example.com", "inbox.example.com:8443", "[2001:db8::1]"}, "--allowed-host")
	if err != nil {
		t.Fatal(err)
	}
	wild, err := New(":9090", nil, "--metrics-allowed-host")
	if err != nil {
		t.Fatal(err)
	}
	named, err := New("myhost.internal:8081", nil, "--allowed-host")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		p    Policy
		host string
		want bool
	}{
		{"localhost with the port", loop, "localhost:8082", true},
		{"localhost on another port (ssh -L)", loop, "localhost:9000", true},
		{"localhost without port", loop, "localhost", true},
		{"localhost upper case with dot", loop, "LOCALHOST.:8082", true},
		{"127.0.0.1", loop, "127.0.0.1:8082", true},
		{"another loopback address", loop, "127.1.2.3:8082", true},
		{"IPv6 loopback", loop, "[::1]:8082", true},
		{"IPv4-mapped loopback", loop, "[::ffff:127.0.0.1]:8082", true},
		{"IPv4-mapped LAN address", loop, "[::ffff:192.168.1.5]:8082", false},
		{"a rebinding name", loop, "rebind.test:8082", false},
		{"a name ending in localhost", loop, "evil-localhost:8082", false},
		{"a subdomain of localhost spelled by an attacker", loop, "localhost.evil.com:8082", false},
		{"a LAN address on a loopback listener", loop, "192.168.1.5:8082", false},
		{"empty Host", loop, "", false},
		{"zone in an address", loop, "[fe80::1%25eth0]:8082", false},
		{"configured name, any port", public, "longrun.example.com:443", true},
		{"configured name, case", public, "LONGRUN.example.com", true},
		{"configured name with port", public, "inbox.example.com:8443", true},
		{"configured name, other port", public, "inbox.example.com:80", false},
		{"configured IPv6", public, "[2001:db8::1]:8082", true},
		{"unconfigured name", public, "example.com", false},
		{"wildcard: an IP literal", wild, "10.1.2.3:9090", true},
		{"wildcard: IPv6 literal", wild, "[2001:db8::2]:9090", true},
		{"wildcard: a name is still refused", wild, "rebind.test:9090", false},
		{"wildcard: loopback", wild, "localhost:9090", true},
		{"the listen host itself", named, "myhost.internal:8081", true},
		{"not the listen host", named, "otherhost.internal:8081", false},
	}
	for _, c := range cases {
		if got := c.p.Allows(c.host); got != c.want {
			t.Errorf("%s: Allows(%q) = %v, want %v", c.name, c.host, got, c.want)
		}
	}
}

func TestNewRefusesAURL(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"https://longrun.example.com", "longrun.example.com/", "", "user@host", ":8080"} {
		if _, err := New("127.0.0.1:1", []string{bad}, "--allowed-host"); err == nil || !strings.Contains(err.Error(), "--allowed-host") {
			t.Errorf("New(%q) = %v, want an error naming the flag", bad, err)
		}
	}
	if _, err := New("nonsense", nil, "--allowed-host"); err == nil {
		t.Error("a listen address without a port is refused")
	}
}

// TestWrapRefusesWithABody runs a real server: a request with a foreign
// Host gets 421 and a body that names the fix, and never reaches the
// handler.
func TestWrapRefusesWithABody(t *testing.T) {
	t.Parallel()
	reached := 0
	p, err := New("127.0.0.1:0", []string{"longrun.example.com"}, "--allowed-host")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Wrap(p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		_, _ = io.WriteString(w, "ok")
	})))
	defer srv.Close()
	get := func(host string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/decode", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	st, body := get("rebind.test:8081")
	if st != http.StatusMisdirectedRequest || !strings.Contains(body, `"rebind.test:8081"`) || !strings.Contains(body, "--allowed-host NAME") {
		t.Fatalf("foreign host: %d %q", st, body)
	}
	if reached != 0 {
		t.Fatal("a refused request reached the handler")
	}
	for _, h := range []string{"localhost:1", "longrun.example.com"} {
		if st, body := get(h); st != http.StatusOK || body != "ok" {
			t.Fatalf("%s: %d %q", h, st, body)
		}
	}
}

// TestLoggingIsToldOfRefusals: a policy with Logging tells its function
// of each request Wrap refuses, and of no other.
func TestLoggingIsToldOfRefusals(t *testing.T) {
	t.Parallel()
	p, err := New("127.0.0.1:0", nil, "--allowed-host")
	if err != nil {
		t.Fatal(err)
	}
	var told []string
	h := Wrap(p.Logging(func(r *http.Request) { told = append(told, r.Host) }), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	for _, host := range []string{"127.0.0.1:8083", "evil.example", "localhost"} {
		req := httptest.NewRequest(http.MethodPost, "/webhook", nil)
		req.Host = host
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	if len(told) != 1 || told[0] != "evil.example" {
		t.Fatalf("told of %q, want only evil.example", told)
	}
}
