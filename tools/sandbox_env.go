package tools

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// envAllowed are the worker's variables a command gets as they are: what
// programs need to find themselves and speak the person's language, and
// the toolchains' own settings. Everything else stays with the worker:
// cloud credentials (AWS_*), model keys (OPENAI_API_KEY), the Temporal
// address and key, whatever a deployment added. A variable not listed
// reaches commands only when the configuration names it (ShellConfig.PassEnv).
var envAllowed = []string{
	"PATH", "LANG", "LANGUAGE", "TZ", "USER", "LOGNAME",
	"CGO_ENABLED", "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "JAVA_HOME",
	"SSL_CERT_FILE", "SSL_CERT_DIR",
	// git's identity: the sandbox hides ~/.gitconfig, and a commit needs one.
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
}

// envNeverPassed are the worker's own credentials: not passed even when
// PassEnv names them, because a command the model wrote must never hold
// the key that pays for the model or steers every session. A NAME=value
// entry of PassEnv can still set such a name: the value is then the
// person's, not the worker's.
// The notification sinks' URLs and secret are here too: a Slack webhook's
// URL is its token, and the secret would let a command forge a signed
// notification.
var envNeverPassed = []string{"OPENAI_API_KEY", "TEMPORAL_API_KEY", "LONGRUN_NOTIFY", "LONGRUN_NOTIFY_SLACK", "LONGRUN_NOTIFY_SECRET", "LONGRUN_FORGE_TOKEN"}

// envCredentialNames are names of credentials: never passed from the
// allowlist (a guard should a later entry or a GO* variable match one),
// only when ShellConfig.PassEnv names them.
var envCredentialNames = []string{"*_TOKEN", "*_KEY", "*_SECRET", "*_PASSWORD", "*_PASSWD", "*_CREDENTIALS", "GOAUTH"}

// userinfoRe is the user:password@ of a URL (scheme://user:pass@host).
var userinfoRe = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)[^/?#@\s,|]*@`)

// stripUserinfo removes the user information of every URL in an allowed
// variable's value: GOPROXY=https://user:token@proxy.corp/ passes as
// https://proxy.corp/, so `go env GOPROXY` in a command shows no
// password. The command then reaches the proxy without the credentials;
// a worker that must give them passes the variable by name (PassEnv).
func stripUserinfo(value string) string {
	if !strings.Contains(value, "@") {
		return value
	}
	return userinfoRe.ReplaceAllString(value, "$1")
}

// hostFirstProxy is the GOPROXY of a command with the worker's own module
// cache (sandboxModCache): the host's download cache first, read-only, so
// what the host has already is not fetched again, then the proxy the
// command would have had (credentials stripped; Go's default when none).
func hostFirstProxy(hostModCache string, cfg ShellConfig) string {
	proxy := "https://proxy.golang.org,direct"
	for _, kv := range commandEnv(cfg) {
		if v, ok := strings.CutPrefix(kv, "GOPROXY="); ok && v != "" {
			proxy = v
		}
	}
	if hostModCache == "" {
		return proxy
	}
	return "file://" + filepath.ToSlash(filepath.Join(hostModCache, "cache", "download")) + "," + proxy
}

// setupFirstProxy puts the download cache of the session's setup layer
// (its module cache, setupModCacheFor) before proxy; proxy alone when
// there is none.
func setupFirstProxy(setupModCache, proxy string) string {
	if setupModCache == "" {
		return proxy
	}
	return "file://" + filepath.ToSlash(filepath.Join(setupModCache, "cache", "download")) + "," + proxy
}

// envAllowedName reports whether the worker's variable name passes into
// commands by default: envAllowed, LC_*, and the go command's own GO*
// settings (no underscore: GOOGLE_APPLICATION_CREDENTIALS is not Go's),
// except GOAUTH, which names programs that hand out credentials.
func envAllowedName(name string) bool {
	switch {
	case strings.HasPrefix(name, "LC_"):
		return true
	case strings.HasPrefix(name, "GO") && !strings.Contains(name, "_") && name != "GOAUTH":
		return true
	}
	for _, a := range envAllowed {
		if name == a {
			return true
		}
	}
	return false
}

// commandEnv is the environment of a command: the allowed part of the
// worker's environment (minus names matching cfg.SecretPatterns, a second
// guard over the allowlist), what cfg.PassEnv names, settings that stop
// programs waiting on a pager or drawing for a terminal, and set
// (NAME=value), which replace any of those. Later entries win.
func commandEnv(cfg ShellConfig, set ...string) []string {
	vals := map[string]string{}
	var order []string
	put := func(name, value string) {
		if _, ok := vals[name]; !ok {
			order = append(order, name)
		}
		vals[name] = value
	}
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if envAllowedName(name) && !isSecret(name, cfg.SecretPatterns) && !isSecret(name, envCredentialNames) {
			put(name, stripUserinfo(value))
		}
	}
	for _, p := range cfg.PassEnv {
		name, value, hasValue := strings.Cut(p, "=")
		switch {
		case name == "":
		case hasValue:
			put(name, value)
		case isSecret(name, envNeverPassed):
		default:
			if v, ok := os.LookupEnv(name); ok {
				put(name, v)
			}
		}
	}
	for _, kv := range append([]string{"TERM=dumb", "PAGER=cat", "GIT_PAGER=cat"}, set...) {
		name, value, _ := strings.Cut(kv, "=")
		put(name, value)
	}
	env := make([]string, 0, len(order))
	for _, name := range order {
		env = append(env, name+"="+vals[name])
	}
	return env
}

// isSecret reports whether name matches one of the glob patterns
// (path.Match syntax, case-insensitive).
func isSecret(name string, patterns []string) bool {
	upper := strings.ToUpper(name)
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToUpper(p), upper); ok {
			return true
		}
	}
	return false
}
