package main

import (
	"flag"

	"github.com/longrun/longrun/forge"
)

// pushConfig is where a session's branch is published when it ends
// (package forge): the remote and the forge from flags or the
// environment, the token from the environment or a file only (never a
// flag, which ps would show). It never enters history or a sandbox (see
// tools' envNeverPassed; the token file is hidden as every path a flag
// names is).
type pushConfig struct {
	cfg       forge.Config
	tokenFile string
}

// bind adds the push flags, each defaulting to its variable.
func (p *pushConfig) bind(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&p.cfg.Remote, "push-remote", getenv(forge.EnvRemote), "when a session with changes ends, push its branch longrun/<session> to this remote (a remote's name in the session's repository, e.g. origin, or a URL) and open or update its pull request; unset: branches stay local (env "+forge.EnvRemote+")")
	fs.StringVar(&p.cfg.Kind, "forge", getenv(forge.EnvKind), "the forge hosting --push-remote: github (default), gitea (Gitea and Forgejo) or gitlab (merge requests) (env "+forge.EnvKind+")")
	fs.StringVar(&p.cfg.API, "forge-api-url", getenv(forge.EnvAPI), "the forge's REST API base URL (default https://api.github.com/; GitHub Enterprise https://HOST/api/v3/; Gitea and Forgejo https://HOST/api/v1/; gitlab https://gitlab.com/api/v4/) (env "+forge.EnvAPI+")")
	fs.StringVar(&p.cfg.Repo, "forge-repo", getenv(forge.EnvRepo), "the repository on the forge, OWNER/NAME (GitLab: the project's path, GROUP[/SUBGROUP]/NAME) (default: read from the remote's URL) (env "+forge.EnvRepo+")")
	fs.StringVar(&p.cfg.Base, "pr-base", getenv(forge.EnvBase), "the branch pull requests ask to merge into (default: the remote's default branch) (env "+forge.EnvBase+")")
	fs.StringVar(&p.cfg.WebUIURL, "web-ui-url", getenv(forge.EnvWebUI), "the Temporal Web UI's URL, linked from each pull request (env "+forge.EnvWebUI+")")
	fs.StringVar(&p.tokenFile, "forge-token-file", getenv(forge.EnvTokenFile), "file holding the forge token for the push and the pull request, when "+forge.EnvToken+" is unset (env "+forge.EnvTokenFile+")")
}

// parse reads the token and checks the whole (forge.Config.Load); the
// console's URL (--console-url) is linked from pull requests too.
func (p *pushConfig) parse(getenv func(string) string, consoleURL string) error {
	p.cfg.ConsoleURL = consoleURL
	return p.cfg.Load(getenv, p.tokenFile)
}

// forge is the configuration activities get: nil when nothing is
// published, so sessions issue no push command.
func (p *pushConfig) forge() *forge.Config {
	if !p.cfg.Enabled() {
		return nil
	}
	c := p.cfg
	return &c
}
