package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/codec"
	"github.com/longrun/longrun/tools"
	"github.com/longrun/longrun/transcript"
	"github.com/longrun/longrun/workflows"
)

// Main is the worker's configuration, parsed from flags and environment.
type Main struct {
	Temporal  temporalConfig
	Observe   observability
	TaskQueue string
	// Workspaces are the --workspace roots; the first is the default.
	Workspaces rootList
	Model      activities.ModelConfig
	Scripted   string // "demo": serve the scripted demo model in-process
	Tools      tools.Config
	// Transcript is the transcript store: a directory ("" is
	// <state>/transcript), an s3:// URL (see transcript.ParseS3URL), or
	// "off" for none.
	Transcript string
	// StateDir is the worker's own state (transcripts, job logs, spilled
	// output), outside every workspace: --state-dir, LONGRUN_STATE_DIR,
	// else $XDG_STATE_HOME/longrun or ~/.local/state/longrun.
	StateDir string
	// CheckpointRemote is where sessions' checkpoints and, at the end,
	// their branches are pushed (any git URL or a shared bare
	// repository's path), and whence a lost worker's checkout is
	// restored: --checkpoint-remote, LONGRUN_CHECKPOINT_REMOTE.
	CheckpointRemote string
	// ConfigDir is the worker's own configuration (mcp.json,
	// permissions.json, prices.json, trusted.json): --config,
	// LONGRUN_CONFIG_DIR, else $XDG_CONFIG_HOME/longrun or ~/.config/longrun.
	ConfigDir string
	// InPlace runs every session in the workspace itself, as longrun
	// start --in-place does, with no checkout of its own: for a workspace
	// a checkout cannot hold (checkRoot).
	InPlace bool
	// TrustWorkspace counts the workspace's .longrun/permissions.json and
	// .longrun/mcp.json as if it were listed in trusted.json.
	TrustWorkspace bool
	// SkillsDirs are the user's skill directories (--skills-dirs,
	// LONGRUN_SKILLS_DIRS; see skillLocations).
	SkillsDirs string
	// Keys encrypt every payload the worker hands Temporal and every
	// transcript blob: --encryption-keys, LONGRUN_ENCRYPTION_KEYS. Nil
	// means no encryption.
	Keys *codec.Keys
	// Notify is where notifications go: --notify, --notify-slack,
	// LONGRUN_NOTIFY_SECRET, --console-url.
	Notify notifyConfig
	// Guardian is the reviewer model sessions with approval "guardian"
	// ask before a person: --guardian-model (LONGRUN_GUARDIAN_MODEL),
	// --guardian-timeout, and the config directory's guardian.md.
	Guardian activities.GuardianConfig
	// pricesFlag is --prices / LONGRUN_PRICES as given; without it the
	// config directory's prices.json is used.
	pricesFlag string
	// hide are the paths the flags and the environment name (see
	// hideCandidates); prepare keeps what may be hidden in Tools.HidePaths.
	hide []string
	// checkouts bounds the disk sessions' checkouts take.
	checkouts checkoutLimit
	bundles   checkpointBundles
	// bounds bound what one session holds here (bounds.go).
	bounds bounds
	// drain is --drain-timeout (drain.go).
	drain drainFlag
	// deployment is --deployment and --build-id (deployment.go).
	deployment deploymentFlags
	// push publishes sessions' branches (push.go).
	push pushConfig
	// setup are the repositories' setup commands (setup.go).
	setup setupFlags
}

// ParseFlags reads flags, falling back to the environment (getenv) and
// then to defaults. It reads as its steps: bind every flag (an
// environment variable that cannot be read fails here), parse, check
// what was given, then turn what was given into the configuration.
func ParseFlags(args []string, getenv func(string) string) (*Main, error) {
	m := &Main{Tools: tools.DefaultConfig()}
	fs := flag.NewFlagSet("longrun-worker", flag.ContinueOnError)
	var raw rawFlags
	if err := m.bindFlags(fs, getenv, &raw); err != nil {
		return nil, err
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := m.checkFlags(); err != nil {
		return nil, err
	}
	m.defaultDirs(getenv)
	if err := m.push.parse(getenv, m.Notify.ConsoleURL); err != nil {
		return nil, err
	}
	if err := m.setup.parse(); err != nil {
		return nil, err
	}
	if err := m.modelFromFlags(raw, getenv); err != nil {
		return nil, err
	}
	if err := m.toolsFromFlags(raw, getenv); err != nil {
		return nil, err
	}
	// Hidden in every sandbox once the workspace is known (prepare).
	m.hide = hideCandidates(fs, os.Environ())
	if m.Scripted != "" && m.Scripted != "demo" {
		return nil, fmt.Errorf("--scripted-model: unknown script %q (have: demo)", m.Scripted)
	}
	return m, nil
}

// rawFlags are the flags read as given, turned into the configuration
// once every flag is parsed (modelFromFlags, toolsFromFlags).
type rawFlags struct {
	stream                                     bool
	modelAPI, cacheKey, passEnv, keys, sandbox string
	web                                        webFlags
}

// bindFlags defines every flag, each defaulting to its environment
// variable: the worker's own, then the tools', then the model's.
func (m *Main) bindFlags(fs *flag.FlagSet, getenv func(string) string, raw *rawFlags) error {
	m.Temporal.bind(fs, getenv, os.Environ)
	m.Observe.bind(fs, getenv)
	m.Notify.bind(fs, getenv)
	m.checkouts.bind(fs, getenv)
	m.bundles.bind(fs, getenv)
	m.bounds.bind(fs, getenv)
	m.push.bind(fs, getenv)
	if err := m.setup.bind(fs, getenv); err != nil {
		return err
	}
	if err := m.drain.bind(fs, getenv); err != nil {
		return err
	}
	m.deployment.bind(fs, getenv)
	if err := m.bindWorkerFlags(fs, getenv, raw); err != nil {
		return err
	}
	if err := m.bindToolFlags(fs, getenv, raw); err != nil {
		return err
	}
	return m.bindModelFlags(fs, getenv, raw)
}

// bindWorkerFlags defines where the worker works and keeps its state.
func (m *Main) bindWorkerFlags(fs *flag.FlagSet, getenv func(string) string, raw *rawFlags) error {
	fs.StringVar(&m.TaskQueue, "task-queue", or(getenv("LONGRUN_TASK_QUEUE"), workflows.DefaultTaskQueue), "task queue to poll (env LONGRUN_TASK_QUEUE)")
	m.Workspaces.dirs = []string{or(getenv("LONGRUN_WORKSPACE"), ".")}
	fs.Var(&m.Workspaces, "workspace", "a workspace root every tool is confined to; give it more than once to serve several: a longrun start run under a `dir` gets its session there, and the first root is where sessions started without a directory work (default .; env LONGRUN_WORKSPACE)")
	fs.StringVar(&m.StateDir, "state-dir", getenv("LONGRUN_STATE_DIR"), "directory of the worker's own state (transcripts, job logs, spilled output), outside every workspace; made 0700 (default $XDG_STATE_HOME/longrun or ~/.local/state/longrun; env LONGRUN_STATE_DIR)")
	fs.StringVar(&m.CheckpointRemote, "checkpoint-remote", getenv("LONGRUN_CHECKPOINT_REMOTE"), "git repository every worker reaches (a URL, or the path of a shared bare repository) where each session's checkpoints and, at its end, its branch longrun/<session> are pushed; a session whose worker is lost is restored from there on another worker. Without it checkpoints stay in the session's repository and a lost worker's session waits for a person (env LONGRUN_CHECKPOINT_REMOTE)")
	fs.StringVar(&m.ConfigDir, "config", getenv("LONGRUN_CONFIG_DIR"), "directory of the worker's own configuration: mcp.json, permissions.json, prices.json, trusted.json, guardian.md (default $XDG_CONFIG_HOME/longrun or ~/.config/longrun; env LONGRUN_CONFIG_DIR)")
	trust, err := parseOnOff(or(getenv("LONGRUN_TRUST_WORKSPACE"), "off"))
	if err != nil {
		return fmt.Errorf("LONGRUN_TRUST_WORKSPACE: %w", err)
	}
	inPlace, err := parseOnOff(or(getenv("LONGRUN_IN_PLACE"), "off"))
	if err != nil {
		return fmt.Errorf("LONGRUN_IN_PLACE: %w", err)
	}
	fs.BoolVar(&m.InPlace, "in-place", inPlace, "run every session in the workspace itself, as longrun start --in-place does, instead of in a checkout of its own (a repository of its own on branch longrun/<session>); for a workspace git ignores or that is not committed, which a checkout cannot hold (env LONGRUN_IN_PLACE=1)")
	fs.BoolVar(&m.TrustWorkspace, "trust-workspace", trust, "trust the workspace: its .longrun/permissions.json, .longrun/mcp.json and .longrun/skills count, as for one listed in the config directory's trusted.json (env LONGRUN_TRUST_WORKSPACE=1)")
	fs.StringVar(&m.SkillsDirs, "skills-dirs", or(getenv("LONGRUN_SKILLS_DIRS"), defaultSkillsDirs(getenv)), "the user's skill directories (folders <name>/SKILL.md), separated by "+string(filepath.ListSeparator)+", after the config directory's skills/; off for none (default ~/.agents/skills; env LONGRUN_SKILLS_DIRS)")
	fs.StringVar(&m.Transcript, "transcript", getenv("LONGRUN_TRANSCRIPT_DIR"), "transcript store sessions keep their messages in: a directory (default <state-dir>/transcript), or s3://bucket/prefix?endpoint=host:port&region=R&insecure=1 for a bucket workers on several machines share (credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, else the instance's IAM role; endpoint defaults to AWS S3), or off: none, the whole conversation goes through history (env LONGRUN_TRANSCRIPT_DIR)")
	fs.StringVar(&m.Scripted, "scripted-model", "", `serve a scripted model in-process instead of OPENAI_BASE_URL ("demo")`)
	fs.StringVar(&raw.keys, "encryption-keys", getenv(codec.EnvKeysFile), "file of KEYID=BASE64 lines, one per 32-byte AES-256 key: payloads in Temporal and transcript blobs are encrypted with the first key, and read with any (env "+codec.EnvKeysFile+")")
	return nil
}

// bindToolFlags defines how the tools run: shell output and timeouts,
// the environment and sandbox of commands, the web tools.
func (m *Main) bindToolFlags(fs *flag.FlagSet, getenv func(string) string, raw *rawFlags) error {
	maxSpill := int64(tools.DefaultMaxSpillBytes)
	if v := getenv("LONGRUN_MAX_SPILL_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("LONGRUN_MAX_SPILL_BYTES=%q: want a positive number of bytes", v)
		}
		maxSpill = n
	}
	fs.Int64Var(&m.Tools.Shell.MaxSpillBytes, "max-spill-bytes", maxSpill, "most bytes of one command's output saved for a person when the model's copy is cut; the rest is discarded (env LONGRUN_MAX_SPILL_BYTES)")
	fs.DurationVar(&m.Tools.Shell.DefaultTimeout, "shell-timeout", m.Tools.Shell.DefaultTimeout, "default shell command timeout")
	fs.DurationVar(&m.Tools.Shell.MaxTimeout, "shell-max-timeout", m.Tools.Shell.MaxTimeout, "largest shell timeout a call may ask for")
	fs.StringVar(&raw.passEnv, "pass-env", getenv("LONGRUN_PASS_ENV"), "variables shell commands (and sandboxed MCP servers) get besides the allowlist, comma separated: NAME passes the worker's value, NAME=value sets one (env LONGRUN_PASS_ENV)")
	raw.web.bind(fs, getenv)
	fs.StringVar(&raw.sandbox, "sandbox", or(getenv("LONGRUN_SANDBOX"), string(tools.SandboxAuto)), "run shell commands in bubblewrap: auto, on or off (env LONGRUN_SANDBOX)")
	return nil
}

// bindModelFlags defines how the model and the guardian are reached.
func (m *Main) bindModelFlags(fs *flag.FlagSet, getenv func(string) string, raw *rawFlags) error {
	fs.StringVar(&m.Model.DefaultModel, "model", getenv("LONGRUN_MODEL"), "model used when a session names none (env LONGRUN_MODEL)")
	modelTimeout, err := envDuration(getenv, "LONGRUN_MODEL_TIMEOUT", 10*time.Minute, "90s or 10m", "")
	if err != nil {
		return err
	}
	// A model that stops answering mid-reply must not hold the turn for the
	// whole activity timeout: past this the call is a fault and retried.
	fs.DurationVar(&m.Model.RequestTimeout, "model-timeout", modelTimeout, "longest one model request may take before it is retried (env LONGRUN_MODEL_TIMEOUT)")
	// Some proxies cannot stream; off falls back to plain requests (no
	// partial text in the heartbeats, everything else the same).
	stream, err := parseOnOff(or(getenv("LONGRUN_MODEL_STREAM"), "on"))
	if err != nil {
		return fmt.Errorf("LONGRUN_MODEL_STREAM: %w", err)
	}
	fs.BoolVar(&raw.stream, "model-stream", stream, "stream model replies, so heartbeats show the partial text (env LONGRUN_MODEL_STREAM=on|off)")
	fs.StringVar(&m.Model.FreeformTools, "freeform-tools", or(getenv("LONGRUN_FREEFORM_TOOLS"), activities.FreeformAuto), "offer apply_patch as a custom tool with its Lark grammar: auto (GPT-5-family models), on (every model) or off (env LONGRUN_FREEFORM_TOOLS)")
	fs.StringVar(&raw.modelAPI, "model-api", or(getenv("LONGRUN_MODEL_API"), "auto"), "wire protocol to the model: chat (chat completions), responses (the Responses API, stateless), or auto: chat except for models served only by the Responses API, such as the codex family (env LONGRUN_MODEL_API)")
	fs.StringVar(&raw.cacheKey, "prompt-cache-key", or(getenv("LONGRUN_PROMPT_CACHE_KEY"), activities.PromptCacheKeyAuto), "send each session's id as prompt_cache_key: auto (to api.openai.com only), on or off (env LONGRUN_PROMPT_CACHE_KEY)")
	fs.StringVar(&m.pricesFlag, "prices", getenv("LONGRUN_PRICES"), "JSON price table {\"model\": {\"input\": USD/1M tokens, \"output\": ...}} for cost estimates (default prices.json of --config; env LONGRUN_PRICES)")
	fs.StringVar(&m.Guardian.Model, "guardian-model", getenv("LONGRUN_GUARDIAN_MODEL"), `model of the guardian, the reviewer sessions with approval "guardian" ask before a person (default: the session's model; env LONGRUN_GUARDIAN_MODEL); its prompt is guardian.md in --config, else a built-in one`)
	guardianTimeout, err := envDuration(getenv, "LONGRUN_GUARDIAN_TIMEOUT", activities.DefaultGuardianTimeout, "90s", "")
	if err != nil {
		return err
	}
	fs.DurationVar(&m.Guardian.Timeout, "guardian-timeout", guardianTimeout, "longest one guardian review may take; past it the call goes to a person (env LONGRUN_GUARDIAN_TIMEOUT)")
	return nil
}

// checkFlags checks, once every flag is parsed, the values that have a
// range.
func (m *Main) checkFlags() error {
	if err := m.Observe.validate(); err != nil {
		return err
	}
	if err := m.Notify.validate(); err != nil {
		return err
	}
	if err := m.checkouts.parse(); err != nil {
		return err
	}
	if err := m.bundles.parse(); err != nil {
		return err
	}
	if err := m.bounds.parse(&m.Tools.Shell); err != nil {
		return err
	}
	if err := m.drain.parse(); err != nil {
		return err
	}
	if err := m.deployment.parse(); err != nil {
		return err
	}
	if m.Guardian.Timeout <= 0 {
		return fmt.Errorf("--guardian-timeout %s: want a positive duration", m.Guardian.Timeout)
	}
	if m.Tools.Shell.MaxSpillBytes <= 0 {
		return fmt.Errorf("--max-spill-bytes %d: want a positive number of bytes", m.Tools.Shell.MaxSpillBytes)
	}
	return nil
}

// defaultDirs fills in the state and config directories no flag named.
// Left empty when there is no default: Run then says what to set.
func (m *Main) defaultDirs(getenv func(string) string) {
	if m.StateDir == "" {
		m.StateDir = defaultDir(getenv, "XDG_STATE_HOME", filepath.Join(".local", "state"))
	}
	if m.ConfigDir == "" {
		m.ConfigDir = defaultDir(getenv, "XDG_CONFIG_HOME", ".config")
	}
}

// modelFromFlags turns the model flags into m.Model, the prices and the
// encryption keys.
func (m *Main) modelFromFlags(raw rawFlags, getenv func(string) string) error {
	var err error
	m.Model.NoStream = !raw.stream
	if m.Model.FreeformTools, err = activities.ParseFreeformMode(m.Model.FreeformTools); err != nil {
		return fmt.Errorf("--freeform-tools %w", err)
	}
	if m.Model.API, err = activities.ParseModelAPI(raw.modelAPI); err != nil {
		return fmt.Errorf("LONGRUN_MODEL_API / --model-api: %w", err)
	}
	switch raw.cacheKey {
	case activities.PromptCacheKeyAuto, activities.PromptCacheKeyOn, activities.PromptCacheKeyOff:
		m.Model.PromptCacheKey = raw.cacheKey
	default:
		return fmt.Errorf("LONGRUN_PROMPT_CACHE_KEY / --prompt-cache-key %q: want auto, on or off", raw.cacheKey)
	}
	m.Model.BaseURL = getenv("OPENAI_BASE_URL")
	m.Model.APIKey = getenv("OPENAI_API_KEY")
	if m.pricesFlag != "" {
		t, err := activities.LoadPrices(m.pricesFlag)
		if err != nil {
			return err
		}
		m.Model.Prices = t
	}
	if raw.keys != "" {
		if m.Keys, err = codec.LoadKeys(raw.keys); err != nil {
			return fmt.Errorf("--encryption-keys: %w", err)
		}
	}
	return nil
}

// toolsFromFlags turns the tool flags into m.Tools: the web tools, the
// sandbox mode and the variables commands get.
func (m *Main) toolsFromFlags(raw rawFlags, getenv func(string) string) error {
	var err error
	if m.Tools.Web, err = raw.web.config(getenv, m.Model.DefaultModel); err != nil {
		return err
	}
	mode, err := tools.ParseSandboxMode(raw.sandbox)
	if err != nil {
		return fmt.Errorf("--sandbox: %w", err)
	}
	m.Tools.Shell.Sandbox = mode
	if m.Tools.Shell.PassEnv, err = parsePassEnv(raw.passEnv); err != nil {
		return err
	}
	return nil
}

// Run dials Temporal and serves until SIGINT or SIGTERM. It reads as the
// steps the worker takes, in order, each a function in start.go; what a
// step opens is closed, the last first, when Run returns.
func (m *Main) Run() error {
	s := &started{logger: m.Observe.logger(os.Stderr)}
	defer s.close()
	roots, err := m.openRoots(s.logger)
	if err != nil {
		return err
	}
	if err := m.reportSandbox(s.logger); err != nil {
		return err
	}
	logWeb(s.logger, m.Tools.Web)
	m.startScriptedModel(s)
	if err := m.dial(s); err != nil {
		return err
	}
	m.startJobs(s)
	if err := m.openLanguageServers(s); err != nil {
		return err
	}
	m.logGuardian(roots[0].cfg, s.logger)
	if err := m.openTranscriptStore(s); err != nil {
		return err
	}
	if err := m.openNotify(s); err != nil {
		return err
	}
	m.lockCheckoutQueue(s)
	m.workerOptions(s)
	var workers []worker.Worker
	for i, r := range roots {
		q := m.rootQueues(s, i, r)
		acts, err := m.buildActivities(s, i, r, q)
		if err != nil {
			return err
		}
		workers = append(workers, m.rootWorkers(s, i, r, q, acts)...)
	}
	s.logger.Info("worker started", "address", s.opts.HostPort, "namespace", s.opts.Namespace, "task_queue", m.TaskQueue,
		"workspace", roots[0].ws.Root(), "roots", len(roots))
	return m.serve(s, workers)
}

// prepare makes the state directory and reads the config directory for
// the workspace root (a real path), saying in the log what counts.
func (m *Main) prepare(root string, logger *slog.Logger) (workerConfig, error) {
	switch {
	case m.StateDir == "":
		return workerConfig{}, errors.New("no state directory: HOME and XDG_STATE_HOME are unset; set --state-dir or LONGRUN_STATE_DIR")
	case m.ConfigDir == "":
		return workerConfig{}, errors.New("no config directory: HOME and XDG_CONFIG_HOME are unset; set --config or LONGRUN_CONFIG_DIR")
	}
	state, err := prepareStateDir(m.StateDir, root)
	if err != nil {
		return workerConfig{}, err
	}
	m.StateDir, m.Tools.StateDir = state, state
	cfg, err := loadConfig(m.ConfigDir, root, m.TrustWorkspace)
	if err != nil {
		return workerConfig{}, err
	}
	// Hidden in every sandbox, as the state directory is: the rules and
	// the MCP servers' secrets are the worker's, not a command's.
	if abs, err := filepath.Abs(m.ConfigDir); err == nil {
		m.Tools.ConfigDir = realOrClean(abs)
	}
	// Every file and directory the worker knows about is hidden from
	// every sandbox: the encryption keys, a checkpoint remote on disk,
	// the transcript store, TLS files, the Temporal config file, ...
	m.Tools.HidePaths = hidePaths(append(m.hide, m.Temporal.files()...), root)
	locs, err := skillLocations(m.ConfigDir, m.SkillsDirs)
	if err != nil {
		return workerConfig{}, err
	}
	m.Tools.Skills = tools.SkillConfig{Locations: locs, TrustWorkspace: cfg.Trusted}
	logSkills(logger, locs, cfg.Trusted)
	if m.Model.Prices == nil && cfg.Prices != nil {
		m.Model.Prices = cfg.Prices
	}
	logger.Info("worker directories", "workspace", root, "state", state, "config", m.ConfigDir, "worker_rules", len(cfg.Rules),
		"hidden_in_sandbox", m.Tools.HidePaths)
	if cfg.Trusted {
		logger.Info("workspace trusted: its .longrun/permissions.json, .longrun/mcp.json and .longrun/skills count", "by", cfg.TrustedBy)
	} else {
		for _, n := range cfg.Notes {
			logger.Warn(n)
		}
		if _, err := os.Lstat(filepath.Join(root, activities.PermissionsFile)); err == nil {
			logger.Warn(activities.UntrustedNote(activities.PermissionsFile))
		}
	}
	return cfg, nil
}

// transcriptCacheBytes bounds the conversations the worker keeps decoded
// in memory, so a session's next model call reads only its newest turn.
const transcriptCacheBytes = 64 << 20

// transcriptOpenTimeout bounds the start-up check of a remote store: a
// worker pointed at an endpoint that does not answer should say so and
// exit, not hang.
const transcriptOpenTimeout = 30 * time.Second

// openTranscript opens the transcript store flag names (see
// Main.Transcript) and describes it for the log; nil when it is off.
func openTranscript(flag, stateDir string, keys *codec.Keys) (*transcript.Cache, string, error) {
	spec := flag
	switch flag {
	case "off":
		return nil, "", nil
	case "":
		spec = filepath.Join(stateDir, "transcript")
	}
	ctx, cancel := context.WithTimeout(context.Background(), transcriptOpenTimeout)
	defer cancel()
	s, where, err := transcript.Open(ctx, spec)
	if err != nil {
		return nil, "", fmt.Errorf("--transcript: %w", err)
	}
	if keys != nil {
		sealed, err := transcript.Seal(s, keys)
		if err != nil {
			return nil, "", fmt.Errorf("--transcript: %w", err)
		}
		return transcript.NewCache(sealed, transcriptCacheBytes), where + " (encrypted)", nil
	}
	return transcript.NewCache(s, transcriptCacheBytes), where, nil
}

// parsePassEnv reads --pass-env: NAME or NAME=value entries, comma
// separated (so a value cannot hold a comma; give such a variable to the
// worker and pass it by NAME). A name that is not a variable name is
// refused rather than silently passing nothing.
func parsePassEnv(v string) ([]string, error) {
	var out []string
	for _, entry := range strings.Split(v, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, _, _ := strings.Cut(entry, "=")
		if !envNameRe.MatchString(name) {
			return nil, fmt.Errorf("--pass-env %q: %q is not a variable name (want NAME or NAME=value, comma separated)", v, name)
		}
		out = append(out, entry)
	}
	return out, nil
}

// envNameRe is what an environment variable's name may be.
var envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseOnOff reads on/off as well as what strconv.ParseBool accepts.
func parseOnOff(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "on", "yes":
		return true, nil
	case "off", "no":
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%q: want on or off", v)
	}
	return b, nil
}

func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}
