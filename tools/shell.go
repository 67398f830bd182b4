package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ShellName is the name the model calls the shell tool by.
const ShellName = "shell"

// Shell timing that is not configurable: how long a process group gets
// between SIGTERM and SIGKILL, how often progress is reported, and how long
// output is drained after the group is dead (a child that escaped into its
// own session could hold the pipe open forever).
// Bounds of what one session may hold on a worker at once (ShellConfig).
const (
	// DefaultMaxJobs is how many background jobs a session may run.
	DefaultMaxJobs = 8
	// DefaultTmpBytes is the size of a sandboxed command's /tmp.
	DefaultTmpBytes = 512 << 20
)

const (
	shellKillGrace    = 2 * time.Second
	shellHeartbeat    = time.Second
	shellDrainTimeout = 2 * time.Second
	shellProgressTail = 5 // lines of output in a heartbeat
)

//go:embed shell.md
var shellDescription string

// ShellConfig bounds what one shell command may take.
type ShellConfig struct {
	// DefaultTimeout applies when the call names none.
	DefaultTimeout time.Duration
	// MaxTimeout caps any timeout the model asks for; the activity's
	// timeout is derived from it.
	MaxTimeout time.Duration
	// OutputLimit is how many bytes of output the model gets; beyond it the
	// head and tail are kept.
	OutputLimit int
	// SecretPatterns are glob patterns (path.Match syntax, case-insensitive)
	// of environment variable names withheld from commands even when the
	// default allowlist would pass them (see commandEnv).
	SecretPatterns []string
	// PassEnv are variables commands get besides the default allowlist
	// (PATH, LANG, LC_*, TZ, the toolchains' GO*, ...): a NAME passes the
	// worker's value when it has one, NAME=value sets it. The worker's own
	// keys (OPENAI_API_KEY, TEMPORAL_API_KEY) never pass by name.
	PassEnv []string
	// Sandbox says whether commands run inside bubblewrap; empty is auto.
	Sandbox SandboxMode
	// MaxSpillBytes caps the file a command's full output is saved to
	// when the model's copy is cut; past it the output is discarded.
	// Zero is DefaultMaxSpillBytes.
	MaxSpillBytes int64
	// SessionQuotaBytes bounds one session's spilled output and job logs
	// together (see SessionFiles); zero is DefaultSessionQuotaBytes.
	SessionQuotaBytes int64
	// MaxJobs is how many background jobs one session may run at once on
	// a worker; zero is DefaultMaxJobs.
	MaxJobs int
	// TmpBytes is the size of a sandboxed command's private /tmp (a tmpfs,
	// held in the host's memory while the command runs); zero is
	// DefaultTmpBytes.
	TmpBytes int64
}

// DefaultShellConfig returns the defaults: long enough for a test suite,
// short enough that a hung command does not stall a session for long.
func DefaultShellConfig() ShellConfig {
	return ShellConfig{
		DefaultTimeout:    2 * time.Minute,
		MaxTimeout:        10 * time.Minute,
		OutputLimit:       30000,
		SecretPatterns:    []string{"*_KEY", "*_TOKEN", "*_SECRET", "*PASSWORD*"},
		Sandbox:           SandboxAuto,
		MaxSpillBytes:     DefaultMaxSpillBytes,
		SessionQuotaBytes: DefaultSessionQuotaBytes,
		MaxJobs:           DefaultMaxJobs,
		TmpBytes:          DefaultTmpBytes,
	}
}

// ShellParams are the shell tool's arguments.
type ShellParams struct {
	Command string `json:"command" jsonschema:"The bash command line to run."`
	Workdir string `json:"workdir,omitempty" jsonschema:"Directory to run in, relative to the workspace root. Default: the root."`
	// Timeout is in seconds. Its description is a format: Spec fills in
	// the worker's default and maximum.
	Timeout int `json:"timeout,omitempty" jsonschema:"Timeout in seconds. Default %d, at most %d. Does not apply to background jobs."`
	// Background starts the command as a job of the session and returns at
	// once (see Jobs); Timeout does not apply to it.
	Background bool `json:"background,omitempty" jsonschema:"Start the command as a background job of this session and return at once with its id, for servers, watchers and long builds. Read its output with job_output, stop it with job_kill. No timeout applies: it runs until it exits, is killed, or the session ends."`
}

// Shell runs a bash command in the workspace. It can do anything, so it
// needs approval and runs at most once.
type Shell struct {
	cfg ShellConfig
	// probe replaces the machine's sandbox probe in tests.
	probe func() sandboxProbe
	// onStart, when set (tests), is told the process group each command
	// runs in, so a test can check by pgid that none of it survives.
	onStart func(pgid int)
	// jobs holds the background jobs this shell starts; Builtin shares it
	// with the job tools.
	jobs *Jobs
	// state is where spilled output and job logs go (Config.StateDir).
	state *stateDir
	// stateDir is the worker's state directory (Config.StateDir): the
	// sandbox's Go build cache lives under it.
	stateDir string
	// configDir is the worker's configuration directory
	// (Config.ConfigDir), hidden in the sandbox like stateDir.
	configDir string
	// hidePaths are the other paths the worker knows about
	// (Config.HidePaths), hidden in the sandbox like stateDir.
	hidePaths []string
}

// NewShell returns the shell tool; zero fields of cfg take their defaults.
func NewShell(cfg ShellConfig) *Shell {
	d := DefaultShellConfig()
	if cfg.DefaultTimeout <= 0 {
		cfg.DefaultTimeout = d.DefaultTimeout
	}
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = d.MaxTimeout
	}
	if cfg.DefaultTimeout > cfg.MaxTimeout {
		cfg.DefaultTimeout = cfg.MaxTimeout
	}
	if cfg.OutputLimit <= 0 {
		cfg.OutputLimit = d.OutputLimit
	}
	if cfg.SecretPatterns == nil {
		cfg.SecretPatterns = d.SecretPatterns
	}
	if cfg.MaxSpillBytes <= 0 {
		cfg.MaxSpillBytes = d.MaxSpillBytes
	}
	if cfg.SessionQuotaBytes <= 0 {
		cfg.SessionQuotaBytes = d.SessionQuotaBytes
	}
	if cfg.MaxJobs <= 0 {
		cfg.MaxJobs = d.MaxJobs
	}
	if cfg.TmpBytes <= 0 {
		cfg.TmpBytes = d.TmpBytes
	}
	return &Shell{cfg: cfg, state: NewSessionFiles("", cfg.SessionQuotaBytes).d}
}

// Spec describes the shell tool.
func (s *Shell) Spec() Spec {
	maxSec := max(1, int(s.cfg.MaxTimeout/time.Second))
	defSec := max(1, int(s.cfg.DefaultTimeout/time.Second))
	params := paramsSchema[ShellParams](func(p paramProps) {
		nonEmpty(p["command"])
		timeout := p["timeout"]
		between(timeout, 1, maxSec)
		timeout.Description = fmt.Sprintf(timeout.Description, defSec, maxSec)
	})
	return Spec{
		Name:           ShellName,
		Description:    shellDescription,
		Parameters:     params,
		ReadOnly:       false,
		TimeoutSeconds: maxSec,
		Meta:           MetaVersion, Concurrency: ConcurrencyExclusive,
		SubjectArg: "command", SubjectKind: SubjectCommand, SummaryArg: "command", BackgroundArg: "background",
	}
}

// Run executes the command. Cancellation of ctx kills the process group and
// returns a result saying so with a nil error; the caller checks ctx. When
// the sandbox is on, bash runs inside bwrap (see sandbox.args) and the
// group signalled is the sandbox's, not bwrap's; a sandbox that is
// required but cannot run is a Go error, and nothing runs. A call with
// env.ReadOnlySandbox runs with the working directory read-only and no
// network, and not at all on a worker without a sandbox.
func (s *Shell) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	if env.Workspace == nil {
		return Result{}, errors.New("tool shell: no workspace")
	}
	var p ShellParams
	if err := unmarshalArgs(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	if strings.TrimSpace(p.Command) == "" {
		return Errorf("command is empty"), nil
	}
	dir, err := env.Workspace.DirPath(p.Workdir, false)
	if errors.Is(err, ErrNoDirectory) {
		return Errorf("workdir %q is not an existing directory", p.Workdir), nil
	}
	if err != nil {
		return Errorf("%v", err), nil
	}
	timeout := s.cfg.DefaultTimeout
	if p.Timeout > 0 {
		timeout = min(time.Duration(p.Timeout)*time.Second, s.cfg.MaxTimeout)
	}
	if ctx.Err() != nil {
		return Errorf("[cancelled before start]"), nil
	}
	sb, err := s.sandbox()
	if env.ReadOnlySandbox && sb == nil {
		// Fail closed: the workflow let this command run unasked only
		// because the sandbox would keep it from changing anything.
		return Errorf("this worker has no working sandbox, so a shell command that no person approved cannot run here (only the built-in read-only classifier allowed it). To run it, ask for it to be approved: a person approves the call when asked, or allows it with a permission rule."), nil
	}
	if err != nil {
		return Result{}, fmt.Errorf("tool shell: %w", err)
	}
	if sb != nil && env.AllowNetwork && !env.ReadOnlySandbox && sb.pasta == "" {
		return Errorf("%v (%s)", errNoPasta, sb.pastaWhy), nil
	}

	if p.Background {
		return s.runBackground(env, p, dir, sb)
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("create output pipe: %w", err)
	}
	defer pr.Close()
	proc, err := s.start(env, sb, dir, p.Command, pw, false)
	if err != nil {
		return startFailure(err)
	}
	defer proc.close()

	out := newCappedBuffer(s.cfg.OutputLimit)
	// The full output goes to a file in the state directory too, up to
	// MaxSpillBytes, once the model's copy has to be cut, so a person can
	// read what was dropped.
	spill := newSpill(s.state, env.Session, s.cfg.OutputLimit, s.cfg.MaxSpillBytes)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		buf := make([]byte, 32*1024)
		for {
			n, err := pr.Read(buf)
			out.Write(buf[:n])
			if n > 0 {
				spill.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- proc.cmd.Wait() }()
	// Only now that the output is drained: a sandbox that fails to set up
	// writes its complaint to the output, and must not block on a full pipe.
	pgid := proc.group()
	if s.onStart != nil {
		s.onStart(pgid)
	}
	start := proc.began

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	ticker := time.NewTicker(shellHeartbeat)
	defer ticker.Stop()
	var (
		waitErr   error
		killTimer <-chan time.Time
		reason    string // "timeout" or "cancel" once the group is being stopped
		killed    bool   // SIGKILL was needed
		done      = ctx.Done()
	)
	stop := func(why string) {
		reason = why
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		killTimer = time.After(shellKillGrace)
		timer.Stop()
		done = nil
	}
loop:
	for {
		select {
		case waitErr = <-exited:
			break loop
		case <-timer.C:
			stop("timeout")
		case <-done:
			stop("cancel")
		case <-killTimer:
			killed = true
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			killTimer = nil
		case <-ticker.C:
			if env.Heartbeat != nil {
				env.Heartbeat(out.lastLines(shellProgressTail))
			}
		}
	}
	elapsed := time.Since(start)
	// Background children may outlive bash; they belong to the group and
	// die with it.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-drained:
	case <-time.After(shellDrainTimeout):
		pr.Close() // unblocks the reader
		<-drained
	}

	content := out.String()
	if content != "" && !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	content += spill.close(out.truncated())
	res := Result{}
	switch {
	case proc.setupErr != nil:
		res = Errorf("%sthe command did not run: %v", content, proc.setupErr)
	case reason == "cancel":
		res = Errorf("%s[cancelled: process group killed]", content)
	case reason == "timeout":
		sig := "SIGTERM"
		if killed {
			sig = "SIGKILL"
		}
		res = Errorf("%s[killed by %s after timeout %s]", content, sig, timeout)
	default:
		res = Result{Content: content + footer(waitErr, elapsed, sb != nil)}
		res.IsError = waitErr != nil
		if waitErr != nil && proc.startErr != nil {
			res.Content += fmt.Sprintf("\n[the sandbox did not start: %v]", proc.startErr)
		}
	}
	return res, nil
}

// footer describes how the command ended. In the sandbox, bash is not our
// child and bwrap reports a death by signal N as exit code 128+N, as bash
// does for $?; the likely signal is named, with a question mark because an
// explicit `exit 137` looks the same.
func footer(waitErr error, elapsed time.Duration, sandboxed bool) string {
	secs := fmt.Sprintf("%.1fs", elapsed.Seconds())
	var ee *exec.ExitError
	switch {
	case waitErr == nil:
		return fmt.Sprintf("[exit code 0, %s]", secs)
	case errors.As(waitErr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("[killed by signal %s, %s]", ws.Signal(), secs)
		}
		code := ee.ExitCode()
		if sig, ok := sandboxSignal(code, sandboxed); ok {
			return fmt.Sprintf("[exit code %d (killed by signal %s?), %s]", code, sig, secs)
		}
		return fmt.Sprintf("[exit code %d, %s]", code, secs)
	}
	return fmt.Sprintf("[failed: %v, %s]", waitErr, secs)
}

// sandboxSignal is the signal an exit code of a sandboxed command likely
// stands for: bwrap reports a death by signal N as 128+N.
func sandboxSignal(code int, sandboxed bool) (syscall.Signal, bool) {
	sig := syscall.Signal(code - 128)
	return sig, sandboxed && code > 128 && sig < 65 && !strings.HasPrefix(sig.String(), "signal ")
}

// sandbox returns the sandbox commands run in, nil when they run
// unsandboxed, or an error when the configuration requires a sandbox
// that cannot run: a command is then refused, not run unconfined.
func (s *Shell) sandbox() (*sandbox, error) {
	probe := hostSandbox
	if s.probe != nil {
		probe = s.probe
	}
	sb, _, err := resolveSandbox(s.cfg.Sandbox, probe())
	return sb, err
}

// cappedBuffer keeps the first and last limit/2 bytes of a stream and counts
// what falls between, so a noisy command costs bounded memory and the model
// still sees how it started and how it ended.
type cappedBuffer struct {
	mu      sync.Mutex
	half    int
	head    []byte
	tail    []byte
	dropped int
}

func newCappedBuffer(limit int) *cappedBuffer {
	return &cappedBuffer{half: max(1, limit/2)}
}

func (c *cappedBuffer) Write(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.half - len(c.head); room > 0 {
		n := min(room, len(p))
		c.head = append(c.head, p[:n]...)
		p = p[n:]
	}
	c.tail = append(c.tail, p...)
	if over := len(c.tail) - c.half; over > 0 && len(c.tail) >= 2*c.half {
		c.dropped += over
		c.tail = append(c.tail[:0], c.tail[over:]...)
	}
}

// String returns the kept output as valid UTF-8, with a marker where bytes
// were dropped.
func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail, dropped := c.tail, c.dropped
	if over := len(tail) - c.half; over > 0 {
		dropped += over
		tail = tail[over:]
	}
	if dropped == 0 {
		return strings.ToValidUTF8(string(c.head)+string(tail), "\uFFFD")
	}
	return strings.ToValidUTF8(string(c.head), "\uFFFD") +
		fmt.Sprintf("\n... [%d characters dropped] ...\n", dropped) +
		strings.ToValidUTF8(string(tail), "\uFFFD")
}

// truncated reports whether any output was dropped.
func (c *cappedBuffer) truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped > 0 || len(c.tail) > c.half
}

// lastLines returns up to n final lines of output for a progress note.
func (c *cappedBuffer) lastLines(n int) string {
	c.mu.Lock()
	b := c.tail
	if c.dropped == 0 {
		b = append(append([]byte(nil), c.head...), c.tail...)
	}
	s := string(b[max(0, len(b)-2000):])
	c.mu.Unlock()
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.ToValidUTF8(strings.Join(lines, "\n"), "\uFFFD")
}
