package gitsafe

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The worker's own git on the host (package checkout: a session's
// checkpoints, its close, its copy's first commit, diff, apply, bundles)
// runs outside any sandbox over files the session wrote. HostEnv is its
// whole environment: built from nothing, so none of the worker's
// variables (its model key, cloud and forge credentials, the notify
// secret) reaches git or anything git starts, and with every key that
// makes git run a program set to something harmless.

// hostAlways are set on every host git, on top of Overrides: what
// Overrides sets for the sandbox's git, plus what the worker's git must
// never do whatever the repository says: read an attributes file of the
// repository's choosing, go into a nested repository (a submodule's
// status runs that repository's filters with its configuration), sign,
// or start a command for a URL (ext::).
var hostAlways = [][2]string{
	{"core.attributesFile", "/dev/null"},
	{"submodule.recurse", "false"},
	{"diff.ignoreSubmodules", "all"},
	{"status.submoduleSummary", "false"},
	{"fetch.recurseSubmodules", "false"},
	{"push.recurseSubmodules", "no"},
	{"protocol.ext.allow", "never"},
	{"commit.gpgSign", "false"},
	{"tag.gpgSign", "false"},
	{"user.useConfigOnly", "false"},
}

// hostLocal are set on a host git that talks to no remote: nothing may
// ask for a password or open a connection with a program the repository
// names. A remote call (HostRemote) keeps the worker's own ssh and
// credential settings instead: they are the worker's configuration for
// its checkpoint remote, not the session's.
var hostLocal = [][2]string{
	{"core.sshCommand", "ssh"},
	{"core.askPass", ""},
	{"credential.helper", ""},
}

// remoteEnv are the worker's variables a remote call keeps: how it
// reaches and trusts its checkpoint remote (ssh agent and command, CA
// certificates, proxies). Nothing else of the worker's passes.
var remoteEnv = []string{
	"SSH_AUTH_SOCK", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"GIT_CONFIG_GLOBAL", "XDG_CONFIG_HOME",
}

// Mode says what a host git may reach beyond the repository at its dir.
type Mode int

const (
	// HostLocal is a git that reads and writes local repositories only:
	// an empty home and global configuration, no credentials, no ssh.
	HostLocal Mode = iota
	// HostRemote is a push or fetch to the worker's checkpoint remote:
	// the worker's home and global configuration (its credential helpers
	// and ssh settings for that remote) and remoteEnv, still none of its
	// other variables, and the repository's configuration neutralised.
	HostRemote
)

// HostEnv is the environment of a git the worker runs on the host in
// dir: PATH, HOME (an empty directory for HostLocal), LANG and LC_ALL C,
// no terminal prompt, the system and (HostLocal) global configuration
// skipped, and Overrides(dir) with hostAlways (and hostLocal) on top at
// the highest precedence. The caller adds what one call needs
// (GIT_INDEX_FILE, an identity). An error: the repository's configuration
// could not be read within the limits, and git must not run.
func HostEnv(dir string, mode Mode) ([]string, error) {
	return HostEnvFor(dir, mode)
}

// HostEnvFor is HostEnv with the program-naming keys of the repositories
// at others neutralised too: a fetch from a local repository starts git
// upload-pack there, which reads that repository's configuration with
// the environment it inherits. A key both name is set once.
func HostEnvFor(dir string, mode Mode, others ...string) ([]string, error) {
	overrides, err := Overrides(dir)
	if err != nil {
		return nil, err
	}
	for _, o := range others {
		more, err := Overrides(o)
		if err != nil {
			return nil, err
		}
		for _, kv := range more {
			if !slices.ContainsFunc(overrides, func(have [2]string) bool { return have[0] == kv[0] }) {
				overrides = append(overrides, kv)
			}
		}
	}
	if len(overrides) > MaxOverrides {
		return nil, fmt.Errorf("the repositories' git configuration names %d programs (more than %d): refusing to run git", len(overrides), MaxOverrides)
	}
	overrides = append(overrides, hostAlways...)
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	env := []string{"PATH=" + path, "LANG=C", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0"}
	if t := os.Getenv("TMPDIR"); t != "" {
		env = append(env, "TMPDIR="+t)
	}
	switch mode {
	case HostRemote:
		if h := os.Getenv("HOME"); h != "" {
			env = append(env, "HOME="+h)
		}
		for _, name := range remoteEnv {
			if v, ok := os.LookupEnv(name); ok {
				env = append(env, name+"="+v)
			}
		}
	default:
		overrides = append(overrides, hostLocal...)
		env = append(env, "HOME="+emptyHome(), "GIT_CONFIG_GLOBAL=/dev/null")
	}
	return append(env, ConfigEnv(overrides)...), nil
}

// emptyHome is a directory with nothing in it and no write permission,
// made once per process: git finds no configuration, attributes or
// ignore rules of anyone's there. /dev/null (not a directory: every
// file under it is missing) when it cannot be made.
var emptyHome = sync.OnceValue(func() string {
	dir, err := os.MkdirTemp("", "longrun-git-home-")
	if err != nil || os.Chmod(dir, 0o500) != nil {
		return "/dev/null"
	}
	return dir
})

// WithConfig adds configuration to a git environment HostEnv made, after
// (so above) what it sets: for one call's settings that must not be in a
// command line or a URL, where ps, `git remote -v` and git's own error
// messages would show them (a forge token's http.extraHeader). An env
// without GIT_CONFIG_COUNT gets one.
func WithConfig(env []string, kv ...[2]string) []string {
	count := 0
	at := -1
	for i, e := range env {
		if v, ok := strings.CutPrefix(e, "GIT_CONFIG_COUNT="); ok {
			count, _ = strconv.Atoi(v)
			at = i
		}
	}
	out := slices.Clone(env)
	for i, c := range kv {
		n := count + i
		out = append(out, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", n, c[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", n, c[1]))
	}
	total := fmt.Sprintf("GIT_CONFIG_COUNT=%d", count+len(kv))
	if at >= 0 {
		out[at] = total
	} else {
		out = append(out, total)
	}
	return out
}
