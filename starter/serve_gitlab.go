package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/longrun/longrun/forge"
)

// Environment variables of `longrun serve`'s GitLab side. The token has
// no flag, as GitHub's secret has none: a flag's value is in ps.
const (
	EnvGitLabWebhookToken     = "LONGRUN_GITLAB_WEBHOOK_TOKEN"
	EnvGitLabWebhookTokenFile = "LONGRUN_GITLAB_WEBHOOK_TOKEN_FILE"
	EnvServeGitLabAllow       = "LONGRUN_SERVE_GITLAB_ALLOW"
	EnvServeGitLabProjects    = "LONGRUN_SERVE_GITLAB_PROJECTS"
)

// gitLabServeFlags are serve's GitLab settings: its own projects, users
// and token, apart from GitHub's, since a login on one forge is not the
// same person on the other, and a token GitLab sends in clear is not to
// be the key GitHub signs with.
type gitLabServeFlags struct {
	tokenFile       *string
	allow, projects stringList
}

func bindGitLabServeFlags(fs *flag.FlagSet) *gitLabServeFlags {
	g := &gitLabServeFlags{}
	g.tokenFile = fs.String("gitlab-token-file", "", "file holding the GitLab webhook's secret token (default: env "+EnvGitLabWebhookToken+", else the file "+EnvGitLabWebhookTokenFile+" names)")
	fs.Var(&g.allow, "gitlab-allow-user", "a GitLab username whose labels and notes may act (repeatable; env "+EnvServeGitLabAllow+", comma-separated)")
	fs.Var(&g.projects, "gitlab-project", "GROUP/NAME=WORKDIR: a GitLab project served at /gitlab (its full path; groups nest), and the directory its sessions work in (repeatable; env "+EnvServeGitLabProjects+", comma-separated)")
	return g
}

// config reads the GitLab settings, flags first, then the environment: a
// HookConfig with no Repos when none is given (GitLab off), an error
// naming what is missing when some are.
func (g *gitLabServeFlags) config(getenv func(string) string, label string) (forge.HookConfig, error) {
	cfg := forge.HookConfig{Label: strings.TrimSpace(label), Repos: map[string]string{}}
	if cfg.Label == "" {
		cfg.Label = forge.DefaultLabel
	}
	allow, projects, file := []string(g.allow), []string(g.projects), *g.tokenFile
	if len(allow) == 0 {
		allow = splitList(getenv(EnvServeGitLabAllow))
	}
	if len(projects) == 0 {
		projects = splitList(getenv(EnvServeGitLabProjects))
	}
	token := getenv(EnvGitLabWebhookToken)
	if file == "" && token == "" {
		file = getenv(EnvGitLabWebhookTokenFile)
	}
	if len(allow) == 0 && len(projects) == 0 && token == "" && file == "" {
		return cfg, nil
	}
	if file != "" {
		raw, err := os.ReadFile(file)
		if err != nil {
			return cfg, fmt.Errorf("--gitlab-token-file: %w", err)
		}
		token = string(raw)
	}
	cfg.Secret = []byte(strings.TrimSpace(token))
	if len(cfg.Secret) == 0 {
		return cfg, fmt.Errorf("no GitLab webhook token: set %s or --gitlab-token-file (the secret token configured on the GitLab webhook); without one no delivery can be verified", EnvGitLabWebhookToken)
	}
	for _, u := range allow {
		if u = strings.TrimSpace(u); u != "" {
			cfg.Allow = append(cfg.Allow, u)
		}
	}
	if len(cfg.Allow) == 0 {
		return cfg, fmt.Errorf("no one may act on GitLab: name the usernames allowed with --gitlab-allow-user USERNAME (or %s)", EnvServeGitLabAllow)
	}
	for _, p := range projects {
		name, dir, _ := strings.Cut(strings.TrimSpace(p), "=")
		name = strings.Trim(strings.TrimSpace(name), "/")
		parts := strings.Split(name, "/")
		if len(parts) < 2 || strings.Contains(name, "//") || strings.ContainsAny(name, " \t") {
			return cfg, fmt.Errorf("--gitlab-project %q: want GROUP/NAME=WORKDIR (GROUP/SUBGROUP/NAME for a nested group)", p)
		}
		if dir = strings.TrimSpace(dir); dir == "" {
			dir = "."
		}
		cfg.Repos[strings.ToLower(name)] = dir
	}
	if len(cfg.Repos) == 0 {
		return cfg, fmt.Errorf("no GitLab project served: name each with --gitlab-project GROUP/NAME=WORKDIR (or %s)", EnvServeGitLabProjects)
	}
	return cfg, nil
}

// wantsGitHub reports whether any of GitHub's serve settings is given:
// then all of them are required, as before GitLab's existed.
func wantsGitHub(getenv func(string) string, secretFile string, allow, repos []string) bool {
	if secretFile != "" || len(allow) > 0 || len(repos) > 0 {
		return true
	}
	for _, k := range []string{EnvWebhookSecret, EnvWebhookSecretFile, EnvServeAllow, EnvServeRepos} {
		if strings.TrimSpace(getenv(k)) != "" {
			return true
		}
	}
	return false
}

// gitlabHook receives GitLab's webhooks at /gitlab: the same checks in
// the same order as GitHub's (Host, content type, size), then the token
// header against the configured token in constant time, then the
// payload read as GitHub's are, into the same start, send and decide.
func (h *hookServer) gitlabHook(w http.ResponseWriter, r *http.Request) {
	// The idempotency key stays the same when GitLab retries a delivery;
	// its event UUID (older GitLab) names the delivery otherwise.
	id := r.Header.Get(forge.HeaderIdempotencyKey)
	if id == "" {
		id = r.Header.Get(forge.HeaderGitLabDelivery)
	}
	delivery := "gitlab:" + cut(id, 100)
	if id == "" {
		delivery = "(no id)"
	}
	body, ok := h.readBody(w, r, delivery)
	if !ok {
		return
	}
	if err := forge.VerifyGitLab(h.gl.Secret, r.Header.Get(forge.HeaderGitLabToken)); err != nil {
		h.refuse(w, delivery, http.StatusUnauthorized, "gitlab: "+err.Error())
		return
	}
	event := cut(r.Header.Get(forge.HeaderGitLabEvent), 100)
	act, err := h.gl.ParseGitLab(event, body)
	h.answer(w, r, delivery, event, act, err)
}
