package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/longrun/longrun/forge"
	"github.com/longrun/longrun/hostcheck"
	"github.com/longrun/longrun/untrusted"
	"github.com/longrun/longrun/workflows"
)

// Environment variables of `longrun serve`, beside its flags. The secret
// has no flag: a flag's value is in ps for everyone on the machine.
const (
	EnvWebhookSecret     = "LONGRUN_WEBHOOK_SECRET"
	EnvWebhookSecretFile = "LONGRUN_WEBHOOK_SECRET_FILE"
	EnvServeAllow        = "LONGRUN_SERVE_ALLOW"
	EnvServeRepos        = "LONGRUN_SERVE_REPOS"
)

const (
	// serveMaxBody caps a delivery's body: an issue's text is at most
	// 65,536 characters on GitHub, so a megabyte holds any event this
	// handles; a bigger one is refused before it is read whole.
	serveMaxBody = 1 << 20
	// serveIdle is how long a session from the forge waits for a review
	// once its pull request is open, unless --idle-timeout says.
	serveIdle = 7 * 24 * time.Hour
	// serveActTimeout bounds what one delivery does with Temporal.
	serveActTimeout = 45 * time.Second
)

// cmdServe receives a forge's webhooks (GitHub, and Gitea or Forgejo,
// which sign as GitHub does, at /webhook; GitLab at /gitlab): an issue labelled for Longrun starts a
// session on it, a review sends the session its next message, /approve
// and /deny decide its waiting calls. Every delivery is checked first
// (Host, size, signature, sender, repository) and refused with its
// reason in the log otherwise. Sessions start as `longrun start` starts
// them, with its session flags, each publishing its branch when it waits
// for a review.
func (a *app) cmdServe(ctx context.Context, fs *flag.FlagSet, args []string) error {
	listen := fs.String("listen", "127.0.0.1:8083", "address to serve webhooks on, at /webhook (GitHub's) and /gitlab (GitLab's) (put a TLS proxy in front to take the forge's deliveries)")
	secretFile := fs.String("webhook-secret-file", "", "file holding the webhook's secret (default: env "+EnvWebhookSecret+", else the file "+EnvWebhookSecretFile+" names)")
	label := fs.String("label", forge.DefaultLabel, "the label that hands an issue to Longrun")
	maxBody := fs.Int64("max-body", serveMaxBody, "largest delivery accepted, in bytes")
	var allow, repos, hosts stringList
	glFlags := bindGitLabServeFlags(fs)
	fs.Var(&allow, "allow-user", "a forge login whose issues labels, comments and reviews may act (repeatable; env "+EnvServeAllow+", comma-separated)")
	fs.Var(&repos, "repo", "OWNER/NAME=WORKDIR: a repository served, and the directory its sessions work in, relative to the worker's workspace as start --workdir (repeatable; env "+EnvServeRepos+", comma-separated)")
	fs.Var(&hosts, "allowed-host", "a host name the service answers to besides loopback names, as sent in Host (e.g. hooks.example.com; repeatable): any other is refused")
	sf := bindSessionFlags(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected arguments %q: tasks come from the forge's issues", pos)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["workdir"] || set["in-place"] {
		return usagef("--workdir and --in-place do not apply to serve: --repo names each repository's directory, and a session from the forge works in a checkout of its own, to push its branch")
	}
	if !set["idle-timeout"] {
		sf.idle = serveIdle
	}
	gl, err := glFlags.config(a.getenv, *label)
	if err != nil {
		return usagef("%v", err)
	}
	var cfg forge.HookConfig
	if len(gl.Repos) == 0 || wantsGitHub(a.getenv, *secretFile, allow, repos) {
		if cfg, err = serveConfig(a.getenv, *secretFile, allow, repos, *label); err != nil {
			return usagef("%v", err)
		}
	}
	if _, err := sf.input("check"); err != nil {
		return err
	}
	policy, err := hostcheck.New(*listen, hosts, "--allowed-host")
	if err != nil {
		return usagef("%v", err)
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", *listen, err)
	}
	h := &hookServer{a: a, c: c, cfg: cfg, gl: gl, sf: sf, maxBody: *maxBody}
	srv := &http.Server{Handler: hostcheck.Wrap(policy.Logging(h.logHost), h.handler()), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute}
	github := fmt.Sprintf("%d repositories, %d allowed users, label %q", len(cfg.Repos), len(cfg.Allow), cfg.Label)
	if len(cfg.Repos) == 0 {
		github = "GitHub's off (no --repo), every delivery refused"
	}
	fmt.Fprintf(a.stdout, "webhooks on http://%s/webhook (Temporal %s, namespace %s): %s\n", ln.Addr(), a.cfg.Address, a.cfg.Namespace, github)
	if len(gl.Repos) > 0 {
		fmt.Fprintf(a.stdout, "GitLab webhooks on http://%s/gitlab: %d projects, %d allowed users, label %q\n", ln.Addr(), len(gl.Repos), len(gl.Allow), gl.Label)
	}
	return serveUntil(ctx, srv, ln, "serve")
}

// serveConfig reads serve's settings, flags first, then the environment,
// and checks them: an error names what to set.
func serveConfig(getenv func(string) string, secretFile string, allow, repos []string, label string) (forge.HookConfig, error) {
	cfg := forge.HookConfig{Label: strings.TrimSpace(label), Repos: map[string]string{}}
	secret := getenv(EnvWebhookSecret)
	if secretFile == "" && secret == "" {
		secretFile = getenv(EnvWebhookSecretFile)
	}
	if secretFile != "" {
		raw, err := os.ReadFile(secretFile)
		if err != nil {
			return cfg, fmt.Errorf("--webhook-secret-file: %w", err)
		}
		secret = string(raw)
	}
	cfg.Secret = []byte(strings.TrimSpace(secret))
	if len(cfg.Secret) == 0 {
		return cfg, fmt.Errorf("no webhook secret: set %s or --webhook-secret-file (the secret configured on the forge's webhook); without one no delivery can be verified", EnvWebhookSecret)
	}
	if len(allow) == 0 {
		allow = splitList(getenv(EnvServeAllow))
	}
	for _, u := range allow {
		if u = strings.TrimSpace(u); u != "" {
			cfg.Allow = append(cfg.Allow, u)
		}
	}
	if len(cfg.Allow) == 0 {
		return cfg, fmt.Errorf("no one may act: name the forge logins allowed with --allow-user LOGIN (or %s)", EnvServeAllow)
	}
	if len(repos) == 0 {
		repos = splitList(getenv(EnvServeRepos))
	}
	for _, r := range repos {
		name, dir, _ := strings.Cut(strings.TrimSpace(r), "=")
		owner, repo, ok := strings.Cut(name, "/")
		if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
			return cfg, fmt.Errorf("--repo %q: want OWNER/NAME=WORKDIR", r)
		}
		if dir = strings.TrimSpace(dir); dir == "" {
			dir = "."
		}
		cfg.Repos[strings.ToLower(name)] = dir
	}
	if len(cfg.Repos) == 0 {
		return cfg, fmt.Errorf("no repository served: name each with --repo OWNER/NAME=WORKDIR (or %s)", EnvServeRepos)
	}
	if cfg.Label == "" {
		cfg.Label = forge.DefaultLabel
	}
	return cfg, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// hookServer is the webhook receiver: the app for its settings and its
// start, send and decide code, one Temporal client, what it accepts, and
// the session flags every session it starts gets.
type hookServer struct {
	a       *app
	c       sessionClient
	cfg     forge.HookConfig
	gl      forge.HookConfig // GitLab's: its token, projects and users
	sf      *sessionFlags
	maxBody int64
	logMu   sync.Mutex

	// sent are the deliveries whose message went to a session, newest
	// last: GitHub's "Redeliver" sends a delivery again under its id,
	// and a review comment must not become two messages. Held in memory
	// (a restart forgets them: the session itself refuses a delivery id
	// it took before, UserMessage.Delivery); a start and a decision need
	// no such list, as their ids are the session's and the call's.
	sentMu sync.Mutex
	sent   []string
}

// serveRemember is how many message deliveries serve remembers.
const serveRemember = 4096

// firstDelivery reports whether delivery's message was not sent before,
// and remembers it.
func (h *hookServer) firstDelivery(delivery string) bool {
	h.sentMu.Lock()
	defer h.sentMu.Unlock()
	if slices.Contains(h.sent, delivery) {
		return false
	}
	if len(h.sent) >= serveRemember {
		h.sent = h.sent[1:]
	}
	h.sent = append(h.sent, delivery)
	return true
}

// forgetDelivery takes back firstDelivery's note when the message could
// not be sent, so GitHub's redelivery tries again.
func (h *hookServer) forgetDelivery(delivery string) {
	h.sentMu.Lock()
	defer h.sentMu.Unlock()
	if i := slices.Index(h.sent, delivery); i >= 0 {
		h.sent = slices.Delete(h.sent, i, i+1)
	}
}

// logHost logs a request hostcheck refuses for its Host, so that
// refusal too leaves its reason in the log.
func (h *hookServer) logHost(r *http.Request) {
	h.logf(cut(r.Header.Get(forge.HeaderDelivery), 100), "refused (421): Host %q is not this service's (--allowed-host)", cut(r.Host, 200))
}

func (h *hookServer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /webhook", h.hook)
	mux.HandleFunc("POST /gitlab", h.gitlabHook)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	return mux
}

// logf writes one line of the service's log: every delivery leaves one,
// what it did or why it did nothing. What came in the delivery is shown
// through the untrusted renderer, one line, its control characters
// visible.
func (h *hookServer) logf(delivery, format string, args ...any) {
	h.logMu.Lock()
	defer h.logMu.Unlock()
	fmt.Fprintf(h.a.stderr, "serve: delivery %s: %s\n", untrusted.Token(delivery), untrusted.Token(fmt.Sprintf(format, args...)))
}

// refuse answers status with reason, and logs it: "ignored" for an
// event it does not act on (a 2xx: the forge need not send it again),
// "refused" for the rest.
func (h *hookServer) refuse(w http.ResponseWriter, delivery string, status int, reason string) {
	verb := "refused"
	if status < 300 {
		verb = "ignored"
	}
	h.logf(delivery, "%s (%d): %s", verb, status, reason)
	http.Error(w, reason, status)
}

func (h *hookServer) hook(w http.ResponseWriter, r *http.Request) {
	delivery := cut(r.Header.Get(forge.HeaderDelivery), 100)
	if delivery == "" {
		delivery = "(no id)"
	}
	body, ok := h.readBody(w, r, delivery)
	if !ok {
		return
	}
	if err := forge.Verify(h.cfg.Secret, body, r.Header.Get(forge.HeaderSignature)); err != nil {
		h.refuse(w, delivery, http.StatusUnauthorized, err.Error())
		return
	}
	event := cut(r.Header.Get(forge.HeaderEvent), 100)
	act, err := h.cfg.Parse(event, body)
	h.answer(w, r, delivery, event, act, err)
}

// readBody checks a delivery's content type and size and reads its body;
// false when it refused the delivery.
func (h *hookServer) readBody(w http.ResponseWriter, r *http.Request, delivery string) ([]byte, bool) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		h.refuse(w, delivery, http.StatusUnsupportedMediaType, "content type is not application/json: set the webhook's content type to application/json")
		return nil, false
	}
	if r.ContentLength > h.maxBody {
		h.refuse(w, delivery, http.StatusRequestEntityTooLarge, fmt.Sprintf("body of %d bytes: more than --max-body %d", r.ContentLength, h.maxBody))
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.refuse(w, delivery, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over --max-body %d bytes", h.maxBody))
			return nil, false
		}
		h.refuse(w, delivery, http.StatusBadRequest, "reading the body: "+err.Error())
		return nil, false
	}
	return body, true
}

// answer does what a verified delivery's parse asks, or refuses it with
// the parser's reason, and answers the forge.
func (h *hookServer) answer(w http.ResponseWriter, r *http.Request, delivery, event string, act forge.Action, err error) {
	var no *forge.Refusal
	if errors.As(err, &no) {
		h.refuse(w, delivery, no.Status, fmt.Sprintf("%s: %s", event, no.Reason))
		return
	}
	if err != nil {
		h.refuse(w, delivery, http.StatusBadRequest, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), serveActTimeout)
	defer cancel()
	status, msg := h.act(ctx, delivery, act)
	h.logf(delivery, "%s by %s on %s#%d: %s", act.Kind, act.Sender, act.Repo, act.Issue, msg)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}

// act does what a verified, allowed delivery asks: the status to answer
// with and what happened, for the log and the forge's delivery page.
func (h *hookServer) act(ctx context.Context, delivery string, act forge.Action) (int, string) {
	switch act.Kind {
	case forge.Start:
		return h.start(ctx, act)
	case forge.Message:
		if delivery != "(no id)" && !h.firstDelivery(delivery) {
			return http.StatusOK, "this delivery's message was sent to " + act.Session + " before: nothing sent"
		}
		msg := workflows.UserMessage{Text: act.Text}
		if delivery != "(no id)" {
			msg.Delivery = delivery // the session takes one message per id, across serve's restarts
		}
		err := h.c.SignalWorkflow(ctx, act.Session, "", workflows.SignalUserMessage, msg)
		if err != nil {
			h.forgetDelivery(delivery)
			return http.StatusConflict, "nothing sent: " + sessionError(err, "signal "+workflows.SignalUserMessage, act.Session, h.a.cfg.Namespace).Error()
		}
		return http.StatusOK, "sent to " + act.Session + " as the next message"
	case forge.Approve, forge.Deny:
		return h.decide(ctx, act)
	}
	return http.StatusBadRequest, fmt.Sprintf("nothing to do for %q", act.Kind)
}

// start starts the issue's session as `longrun start` would, with the
// session flags serve was given: the issue's text as the prompt and
// nothing else from it. Its id is the issue's (forge.SessionFor), and an
// id used before starts nothing (conflict policy fail, reuse policy
// reject duplicate): a redelivered webhook, or a label added again,
// cannot start a second session on one issue.
func (h *hookServer) start(ctx context.Context, act forge.Action) (int, string) {
	in, err := h.sf.input(act.Text)
	if err != nil {
		return http.StatusBadRequest, "nothing started: " + err.Error()
	}
	in.WorkDir = act.WorkDir
	in.PublishWhenWaiting = true
	o := startOptions{input: in, id: act.Session}
	opts := h.a.startWorkflowOptions(o)
	opts.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	run, err := h.c.ExecuteWorkflow(ctx, opts, workflows.WorkflowType, in)
	var dup *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &dup) {
		return http.StatusOK, fmt.Sprintf("session %s was started for this issue before: nothing started", act.Session)
	}
	if err != nil {
		return http.StatusServiceUnavailable, "nothing started: " + sessionError(err, "start", act.Session, h.a.cfg.Namespace).Error()
	}
	return http.StatusCreated, fmt.Sprintf("started session %s (run %s) on task queue %s", run.GetID(), run.GetRunID(), opts.TaskQueue)
}

// decide sends an /approve or /deny as `longrun approve`/`deny` send
// theirs: the waiting calls read first and the call picked by its id
// (pickCall), the approve update with the digest read, and the durable
// approval signal when no worker takes it.
func (h *hookServer) decide(ctx context.Context, act forge.Action) (int, string) {
	decision := workflows.DecisionApprove
	if act.Kind == forge.Deny {
		decision = workflows.DecisionDeny
	}
	proto := workflows.Approval{Decision: decision, Feedback: act.Text, Author: act.Sender} // the forge login, for the pull request's body
	why, err := h.a.workerGone(ctx, h.c, act.Session)
	if err != nil {
		return http.StatusConflict, "nothing decided: " + err.Error()
	}
	if why != "" {
		ap := proto
		ap.CallID = act.Call
		if err := h.c.SignalWorkflow(ctx, act.Session, "", workflows.SignalApproval, ap); err != nil {
			return http.StatusConflict, "nothing decided: " + err.Error()
		}
		return http.StatusAccepted, fmt.Sprintf("%s of %s in %s sent as the durable approval signal (%s)", decision, act.Call, act.Session, why)
	}
	pending, err := h.a.queryPending(ctx, h.c, act.Session)
	if err != nil {
		return http.StatusServiceUnavailable, "nothing decided: " + err.Error()
	}
	p, err := pickCall(pending, act.Call)
	if err != nil {
		return http.StatusConflict, fmt.Sprintf("nothing decided: %s in %s: %v", act.Call, act.Session, err)
	}
	ap := p.approval(proto)
	out, err := h.a.sendDecision(ctx, h.c, act.Session, p.ID, ap)
	if err == nil && out == notTaken {
		if err = h.c.SignalWorkflow(ctx, act.Session, "", workflows.SignalApproval, ap); err == nil {
			return http.StatusAccepted, fmt.Sprintf("%s of %s in %s sent as the durable approval signal (no worker took the update)", decision, p.ID, act.Session)
		}
	}
	if err != nil {
		return http.StatusConflict, "nothing decided: " + err.Error()
	}
	return http.StatusOK, fmt.Sprintf("%s %s (%s) in %s", pastTense(decision), p.ID, oneLine(p.Tool), act.Session)
}
