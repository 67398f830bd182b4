// Package forge publishes a session's branch where code is reviewed: it
// pushes the branch to the repository's remote and opens, or updates, a
// pull request on the forge that hosts it (GitHub, and Gitea or Forgejo
// through their GitHub-compatible API), or a merge request on GitLab. It runs on the host with the
// worker's (or the person's) credentials, which stay in this process: git
// gets the token as configuration in its environment (package checkout's
// door), the API client as a header, and nothing here writes it to a
// result, a log line or an error. Plain Go: no Temporal.
package forge

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// Forge kinds (Config.Kind).
const (
	GitHub = "github"
	Gitea  = "gitea" // Gitea and Forgejo: GitHub's pulls and issues API subset
	GitLab = "gitlab"
)

// Environment variables of the configuration, read by the worker (beside
// its flags) and by `longrun push`.
const (
	EnvRemote    = "LONGRUN_PUSH_REMOTE"
	EnvKind      = "LONGRUN_FORGE"
	EnvAPI       = "LONGRUN_FORGE_API_URL"
	EnvRepo      = "LONGRUN_FORGE_REPO"
	EnvToken     = "LONGRUN_FORGE_TOKEN"
	EnvTokenFile = "LONGRUN_FORGE_TOKEN_FILE"
	EnvBase      = "LONGRUN_PR_BASE"
	EnvWebUI     = "LONGRUN_WEB_UI_URL"
)

// Config says where a session's branch is published. The zero value
// publishes nothing.
type Config struct {
	// Remote is where the branch is pushed: a remote's name in the
	// session's repository (e.g. "origin"), or a URL.
	Remote string
	// Kind is the forge: GitHub (the default), Gitea, GitLab.
	Kind string
	// API is the forge's REST API base URL: https://api.github.com/ by
	// default; https://HOST/api/v3/ for GitHub Enterprise,
	// https://HOST/api/v1/ for Gitea and Forgejo; https://gitlab.com/api/v4/
	// for GitLab (https://HOST/ or https://HOST/api/v4/ for another).
	API string
	// Repo is the repository on the forge, "owner/name" (on GitLab the
	// project's full path, "group/subgroup/name"); "" reads it from the
	// remote's URL (its last two path elements; GitLab: all of them).
	Repo string
	// Token authenticates both the push over HTTP(S) and the API calls.
	// It is never marshalled, printed or logged (String).
	Token string
	// Base is the branch the pull request asks to merge into; "" is the
	// remote's default branch (its HEAD).
	Base string
	// ConsoleURL and WebUIURL link the session from the pull request:
	// the console's session page, the Temporal Web UI's workflow page.
	ConsoleURL string
	WebUIURL   string
}

// Enabled reports whether sessions' branches are published at all.
func (c Config) Enabled() bool { return c.Remote != "" }

// String names the configuration without its token.
func (c Config) String() string {
	if !c.Enabled() {
		return "no push"
	}
	return fmt.Sprintf("push to %s, pull requests on %s %s", Redact(c.Remote), c.kind(), c.api())
}

// Load completes c from the environment where a field is empty (flags
// win), reads the token (EnvToken, else the file EnvTokenFile or
// tokenFile) and checks the whole: an error names the setting to fix.
func (c *Config) Load(getenv func(string) string, tokenFile string) error {
	set := func(f *string, name string) {
		if *f == "" {
			*f = strings.TrimSpace(getenv(name))
		}
	}
	set(&c.Remote, EnvRemote)
	set(&c.Kind, EnvKind)
	set(&c.API, EnvAPI)
	set(&c.Repo, EnvRepo)
	set(&c.Base, EnvBase)
	set(&c.WebUIURL, EnvWebUI)
	if !c.Enabled() {
		return nil
	}
	c.Token = strings.TrimSpace(getenv(EnvToken))
	if tokenFile == "" {
		tokenFile = getenv(EnvTokenFile)
	}
	if c.Token == "" && tokenFile != "" {
		raw, err := os.ReadFile(tokenFile)
		if err != nil {
			return fmt.Errorf("--forge-token-file: %w", err)
		}
		c.Token = strings.TrimSpace(string(raw))
	}
	return c.Check()
}

// Check refuses a configuration that cannot publish, saying what to set.
func (c Config) Check() error {
	if !c.Enabled() {
		return nil
	}
	switch c.kind() {
	case GitHub, Gitea, GitLab:
	default:
		return fmt.Errorf("--forge %q: want github, gitea or gitlab", c.Kind)
	}
	if strings.Contains(c.Remote, "@") && strings.Contains(c.Remote, "://") {
		if u, err := url.Parse(c.Remote); err == nil && u.User != nil {
			if _, has := u.User.Password(); has {
				return errors.New("--push-remote: the URL holds a password; give the token in " + EnvToken + " or --forge-token-file instead, so no git message can show it")
			}
		}
	}
	if _, err := url.Parse(c.api()); err != nil {
		return fmt.Errorf("--forge-api-url: %w", err)
	}
	if c.Token == "" {
		return fmt.Errorf("--push-remote %s: no forge token: set %s or --forge-token-file (the pull request needs one)", Redact(c.Remote), EnvToken)
	}
	if c.Repo != "" && c.kind() == GitLab {
		if err := checkProject(c.Repo); err != nil {
			return fmt.Errorf("--forge-repo: %w", err)
		}
	} else if c.Repo != "" {
		if _, _, err := splitRepo(c.Repo); err != nil {
			return fmt.Errorf("--forge-repo: %w", err)
		}
	}
	return nil
}

func (c Config) kind() string {
	if c.Kind == "" {
		return GitHub
	}
	return strings.ToLower(c.Kind)
}

func (c Config) api() string {
	if c.API != "" {
		return c.API
	}
	if c.kind() == GitLab {
		return gitLabAPI
	}
	return "https://api.github.com/"
}

// gitAuth is the configuration a git talking to remoteURL gets: the token
// as an Authorization header for that URL only (http.<url>.extraHeader),
// so it is sent nowhere else and shows in no URL. An ssh or local remote
// gets nothing: the worker's own ssh settings reach it.
func (c Config) gitAuth(remoteURL string) [][2]string {
	if c.Token == "" || !(strings.HasPrefix(remoteURL, "http://") || strings.HasPrefix(remoteURL, "https://")) {
		return nil
	}
	user := "x-access-token" // GitHub's name for a token; Gitea takes any
	if c.kind() == GitLab {
		user = "oauth2" // GitLab's, for any kind of token
	}
	cred := base64.StdEncoding.EncodeToString([]byte(user + ":" + c.Token))
	return [][2]string{{"http." + remoteURL + ".extraHeader", "Authorization: Basic " + cred}}
}

// Redact is a remote's URL without its user information, for a message.
func Redact(remote string) string {
	u, err := url.Parse(remote)
	if err != nil || u.User == nil || u.Scheme == "" {
		return remote
	}
	u.User = nil
	return u.String()
}

// RepoFromURL is "owner/name" of a remote's URL: its last two path
// elements, without ".git" (https://host/owner/name.git,
// git@host:owner/name.git).
func RepoFromURL(remote string) (string, error) {
	p := remote
	if u, err := url.Parse(remote); err == nil && u.Scheme != "" {
		p = u.Path
	} else if _, rest, ok := strings.Cut(remote, ":"); ok && !strings.HasPrefix(remote, "/") {
		p = rest // scp-like git@host:owner/name.git
	}
	parts := strings.Split(strings.Trim(strings.TrimSuffix(strings.TrimSuffix(p, "/"), ".git"), "/"), "/")
	if len(parts) < 2 || parts[len(parts)-2] == "" || parts[len(parts)-1] == "" {
		return "", fmt.Errorf("cannot tell the forge's owner/name from the remote %s: set --forge-repo OWNER/NAME", Redact(remote))
	}
	return parts[len(parts)-2] + "/" + parts[len(parts)-1], nil
}

func splitRepo(repo string) (string, string, error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("%q: want OWNER/NAME", repo)
	}
	return owner, name, nil
}
