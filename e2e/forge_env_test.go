package e2e

import (
	"strings"
	"testing"

	"github.com/longrun/longrun/forge/forgetest"
	sm "github.com/longrun/longrun/scriptedmodel"
)

// forgeEnv is an isolation env (isolationEnv) whose workspace's origin
// is a repository on a real git server over HTTP, its main pushed there,
// and whose worker is restarted to publish to it (--push-remote origin,
// the scripted GitHub's API, the token in its environment): the set-up
// of every push and serve test of issue 32.
type forgeEnv struct {
	*env
	token string
	srv   *forgetest.GitServer
	gh    *forgetest.GitHub
	// bare is the remote repository's directory on the git server.
	bare string
}

// newForgeEnv makes a forgeEnv for the repository repo ("acme/app")
// whose model answers from script; workerArgs are more worker flags.
func newForgeEnv(t *testing.T, repo string, script map[string][]sm.Reply, workerArgs ...string) forgeEnv {
	t.Helper()
	token := "ghp_e2e" + randHex(12)
	srv := forgetest.NewGitServer(t, token)
	gh := forgetest.NewGitHub(t, token, srv)
	e := isolationEnv(t, func(string) map[string][]sm.Reply { return script })
	url, bare := srv.Repo(t, repo)
	git(t, e.workspace, "remote", "add", "origin", url)
	// The person's own push, their credentials in the URL for this command only.
	git(t, e.workspace, "push", "-q", strings.Replace(url, "http://", "http://me:"+token+"@", 1), "HEAD:refs/heads/main")
	e.stopWorker()
	e.workerArgs = append(append(e.workerArgs, "--push-remote", "origin", "--forge-api-url", gh.URL+"/"), workerArgs...)
	e.workerEnv = append(e.workerEnv, "LONGRUN_FORGE_TOKEN="+token)
	e.startWorker()
	return forgeEnv{env: e, token: token, srv: srv, gh: gh, bare: bare}
}
