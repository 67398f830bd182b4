package tools

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// ErrNoSandbox is returned by SandboxCommand when this worker has no
// working sandbox (mode off, bwrap missing or failing): the caller decides
// whether to run the command unconfined or not at all.
var ErrNoSandbox = errors.New("no sandbox on this worker")

// SandboxSpec is a command to run in the sandbox.
type SandboxSpec struct {
	// Argv is the program and its arguments, as the sandbox sees them.
	Argv []string
	// Dir is the absolute directory the command starts in; it must be
	// Root or beneath it, or a directory visible read-only anyway, or
	// /tmp (the sandbox's own, empty: a start outside the workspace).
	Dir string
	// Root is the absolute directory bound from the host: writable unless
	// ReadOnly, with its control files (.longrun, .git, AGENTS.md)
	// read-only. "" binds nothing: the command then sees the host's file
	// system read-only (minus the hidden parts) and writes nowhere but its
	// private /tmp and home.
	Root string
	// Env are NAME=value entries on top of the command environment the
	// shell tool gives (the worker's allowlisted variables and
	// ShellConfig.PassEnv, no credentials, git's programs neutralised);
	// they win over it.
	Env []string
	// ReadOnly binds Root read-only: for a command nobody approved, or an
	// MCP server, which must not change the workspace unasked. Such a
	// command also gets the Go build cache of unapproved commands and the
	// module cache read-only, network or not.
	ReadOnly bool
	// Network attaches user-mode networking (pasta): the outside is
	// reachable, the host's loopback is not. Without it the command has
	// no network at all. A worker without pasta refuses (an error). It is
	// independent of ReadOnly: the shell gives a command nobody approved
	// no network, an MCP server gets both.
	Network bool
	// SetupModCache is the module cache a repository's setup command
	// fills (a layer being made: see SetupLayerDir): bound writable and
	// the command's GOMODCACHE, with the host's download cache as its
	// first proxy. "" for every other command, which gets the layer of
	// its checkout, if any, read-only.
	SetupModCache string
	// probe marks the start-up probe's command, which builds nothing: it
	// must not create a Go build cache (in the user's home when the
	// worker's state directory is not known yet).
	probe bool
	// goCache names a Go build cache of the command's own under the state
	// directory (a language server's: "go-build-lsp"); "" gives the one
	// of approved or of read-only commands.
	goCache string
	// program is a program file the command runs that is bound back
	// read-only when a hidden directory covers it (HostProgram's).
	program string
}

// SandboxedCmd is a command wrapped in the sandbox by SandboxCommand. Set
// Cmd.Stdin, Cmd.Stdout and Cmd.Stderr (and change Cmd.SysProcAttr if
// needed) before Start; call Close when done, also after Wait.
type SandboxedCmd struct {
	// Cmd runs bwrap; its process group is bwrap's, not the command's
	// (see PID).
	Cmd *exec.Cmd
	run *sandboxExec
}

// SandboxCommand wraps spec in the sandbox of this worker, configured as
// cfg configures the shell tool (cfg.Shell.Sandbox, PassEnv,
// SecretPatterns; cfg.StateDir holds the sandbox's Go build cache, and it
// and cfg.ConfigDir are hidden from the command). It
// fails with ErrNoSandbox when no sandbox works here, and with
// ErrSandboxUnavailable when cfg requires one that cannot run. For MCP
// stdio servers and anything else that must not run with the worker's
// rights.
func SandboxCommand(cfg Config, spec SandboxSpec) (*SandboxedCmd, error) {
	sb, why, err := resolveSandbox(cfg.Shell.Sandbox, hostSandbox())
	if err != nil {
		return nil, err
	}
	if sb == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoSandbox, why)
	}
	if len(spec.Argv) == 0 || !filepath.IsAbs(spec.Dir) || (spec.Root != "" && !filepath.IsAbs(spec.Root)) {
		return nil, errors.New("sandbox command: want a program, an absolute Dir and an absolute or empty Root")
	}
	// The program, when the caller resolved it on the host (absolute), is
	// bound back if a hidden directory covers it.
	spec.program = spec.Argv[0]
	run, err := newSandboxExec(sb, cfg.Shell, cfg.workerDirs(), spec)
	if err != nil {
		return nil, err
	}
	run.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return &SandboxedCmd{Cmd: run.cmd, run: run}, nil
}

// Start starts bwrap, attaches the network when the spec asks for it, and
// only then lets the command run. On an error nothing is left running.
func (c *SandboxedCmd) Start() error {
	if err := c.Cmd.Start(); err != nil {
		c.run.close()
		return fmt.Errorf("start sandbox: %w", err)
	}
	if err := c.run.attach(); err != nil {
		_ = c.Cmd.Process.Kill()
		_ = c.Cmd.Wait()
		return err
	}
	return nil
}

// PID is the host pid of the sandbox's init process, which leads the
// command's process group (bwrap --new-session): signal -PID to stop the
// command and everything it started. 0 before Start.
func (c *SandboxedCmd) PID() int { return c.run.childPID }

// Wait waits for the command and then stops its network.
func (c *SandboxedCmd) Wait() error {
	err := c.Cmd.Wait()
	c.run.close()
	return err
}

// Close stops the command's network helper and releases the pipes; it may
// be called more than once.
func (c *SandboxedCmd) Close() { c.run.close() }

// sandboxExec is bwrap prepared to run one command: the pipes it reports
// through and is released by, and the network helper once attached.
type sandboxExec struct {
	cmd      *exec.Cmd
	sb       *sandbox
	network  bool
	info     *os.File // read end of --info-fd
	infoW    *os.File // write end, the child's; closed once started
	block    *os.File // write end of --block-fd; nil without network
	blockR   *os.File // read end, the child's
	childPID int
	pasta    *pastaProc
}

// workerDirs are the worker's own directories and files. All are hidden
// in every sandbox (an empty tmpfs over a directory, /dev/null over a
// file): the state directory holds every session's transcript, job logs
// and spilled output, the config directory the worker's permission rules
// and MCP servers with their secrets, and paths are whatever else the
// worker's flags and environment name (Config.HidePaths: the encryption
// keys, the checkpoint remote, the transcript store, TLS certificates and
// keys, the Temporal config file). A command must see none of them,
// wherever they are (/var/lib/longrun is under no directory the sandbox
// hides otherwise). The sandbox's Go caches under the state directory are
// bound back on top.
type workerDirs struct {
	state, config string
	paths         []string
}

// workerDirs are cfg's worker directories and files to hide.
func (cfg Config) workerDirs() workerDirs {
	return workerDirs{state: cfg.StateDir, config: cfg.ConfigDir, paths: cfg.HidePaths}
}

// hidden returns the directories to hide that exist, as real paths; never
// "/", which would hide everything.
func (d workerDirs) hidden() []string {
	var out []string
	for _, dir := range append([]string{d.state, d.config}, d.paths...) {
		if dir = realDir(dir); dir != "" && dir != "/" && !slices.Contains(out, dir) {
			out = append(out, dir)
		}
	}
	return out
}

// files returns the paths to hide that exist and are not directories, as
// real paths.
func (d workerDirs) files() []string {
	var out []string
	for _, p := range d.paths {
		if !filepath.IsAbs(p) {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(real); err == nil && !fi.IsDir() && !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out
}

// newSandboxExec builds bwrap's command line and environment for spec:
// the command environment with HOME the empty one, TMPDIR on the private
// /tmp, the worker's own Go build cache, the worker's directories hidden,
// and git's repository-controlled programs neutralised (gitNeutralEnv, for
// the repository at spec.Dir).
func newSandboxExec(sb *sandbox, cfg ShellConfig, dirs workerDirs, spec SandboxSpec) (*sandboxExec, error) {
	network := spec.Network
	if network && sb.pasta == "" {
		return nil, fmt.Errorf("%w (%s)", errNoPasta, sb.pastaWhy)
	}
	// git's programs are neutralised for the repository the command
	// starts in, or, for one that starts outside its root (an MCP server
	// in the empty /tmp), for the root's.
	gitDir := spec.Dir
	if spec.Root != "" && !within(spec.Root, spec.Dir) {
		gitDir = spec.Root
	}
	gitEnv, err := gitNeutralEnv(gitDir)
	if err != nil {
		return nil, err
	}
	home := sb.home
	if home == "" {
		home = "/tmp"
	}
	goCache := ""
	switch {
	case spec.probe:
	case spec.goCache != "":
		goCache = namedGoCache(dirs.state, spec.goCache, processGoCacheUnapproved)
	default:
		goCache = sandboxGoCache(dirs.state, spec.ReadOnly)
	}
	set := []string{"HOME=" + home, "TMPDIR=/tmp", "GOTMPDIR=", "GOCACHE=" + goCache}
	if goCache == "" {
		set[3] = "GOCACHE=/tmp/go-build" // private, cold every time
	}
	modCache, setupCache := "", ""
	if !spec.probe && spec.SetupModCache == "" {
		setupCache = setupModCacheFor(dirs.state, spec.Root)
	}
	switch {
	case spec.SetupModCache != "":
		// A setup command: it fills the layer's cache.
		modCache = realDir(spec.SetupModCache)
		if modCache == "" {
			return nil, fmt.Errorf("setup module cache %s: not a directory", spec.SetupModCache)
		}
		set = append(set, "GOMODCACHE="+modCache, "GOPROXY="+hostFirstProxy(sb.goModCache, cfg))
	case sb.goModCache == "" && setupCache == "":
	case network && !spec.ReadOnly && !spec.probe:
		// May download: the worker's own cache, the setup layer's and
		// the host's as the first proxies (read-only; see
		// sandboxModCache).
		modCache = sandboxModCache(dirs.state)
		set = append(set, "GOMODCACHE="+modCache, "GOPROXY="+setupFirstProxy(setupCache, hostFirstProxy(sb.goModCache, cfg)))
	case setupCache != "":
		// The layer the repository's setup filled holds what the
		// session's module needs; read-only, so no session changes it.
		set = append(set, "GOMODCACHE="+setupCache)
	default:
		set = append(set, "GOMODCACHE="+sb.goModCache)
	}
	set = append(append(set, gitEnv...), spec.Env...)
	hide := dirs.hidden()
	var programs []mount
	if p := spec.program; filepath.IsAbs(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil && (sb.hidden(p) || slices.ContainsFunc(hide, func(h string) bool { return strictlyUnder(h, p) })) {
			if nm := nodeModules(real); nm != "" && strictlyUnder(nm, p) {
				// An npm-installed server (pyright-langserver is a link in
				// node_modules/.bin to a script that loads its package and
				// its dependencies): its whole node_modules comes back, and
				// the link with it.
				programs = append(programs, mount{path: nm})
			} else {
				programs = append(programs, mount{path: p, src: real})
			}
		}
	}

	gitHide, gitBack, err := sessionGitView(dirs.state, spec.Root)
	if err != nil {
		return nil, err
	}
	x := &sandboxExec{sb: sb, network: network}
	if x.info, x.infoW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("create sandbox info pipe: %w", err)
	}
	extra := []*os.File{x.infoW} // fd 3
	blockFD := -1
	if network {
		if x.blockR, x.block, err = os.Pipe(); err != nil {
			x.close()
			return nil, fmt.Errorf("create sandbox block pipe: %w", err)
		}
		extra = append(extra, x.blockR) // fd 4
		blockFD = 4
	}
	run := sandboxRun{
		root: spec.Root, dir: spec.Dir, readOnly: spec.ReadOnly, network: network,
		goCache: goCache, modCache: modCache, setupModCache: setupCache, sockets: liveSockets(sb.sockets), protect: controlFiles(spec.Root),
		hide: hide, hideFiles: dirs.files(), programs: programs,
		gitDirs: checkoutGitDirs(dirs.state, spec.Root), gitHide: gitHide, gitBack: gitBack,
		infoFD: 3, blockFD: blockFD, argv: spec.Argv,
		tmpBytes: cfg.TmpBytes,
	}
	x.cmd = exec.Command(sb.bwrap, sb.args(run)...)
	x.cmd.ExtraFiles = extra
	x.cmd.Env = commandEnv(cfg, set...)
	x.cmd.Dir = spec.Dir
	return x, nil
}

// errNoPasta refuses a networked command on a worker without pasta: the
// only network it could get is the host's, whose loopback serves Temporal.
var errNoPasta = errors.New("this session allows the network, but this worker has no pasta (Debian package passt) to give a sandboxed command a network of its own, and the host's network would let it reach the worker's own services (Temporal, its Web UI) on loopback; install passt on the worker, or do without the network")

// started closes the child's ends of the pipes once bwrap runs: the info
// pipe must see EOF if bwrap dies, and the block pipe must be ours alone.
func (x *sandboxExec) started() {
	for _, f := range []**os.File{&x.infoW, &x.blockR} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
}

// attach reads the sandbox's init pid, attaches the network if asked and
// releases the command. On an error the sandbox is killed.
func (x *sandboxExec) attach() error {
	x.started()
	pid, err := readChildPID(x.info, sandboxProbeTimeout)
	x.info.Close()
	x.info = nil
	if err != nil {
		// bwrap failed to set up (its message is in the output) or is
		// wedged: closing the block pipe lets a wedged one go on, still
		// without a network, rather than wait for the timeout.
		if x.block != nil {
			x.block.Close()
			x.block = nil
		}
		return err
	}
	x.childPID = pid
	if !x.network {
		return nil
	}
	if x.pasta, err = startPasta(x.sb.pasta, pid); err != nil {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = syscall.Kill(pid, syscall.SIGKILL)
		x.block.Close()
		x.block = nil
		return err
	}
	_, err = x.block.Write([]byte{1})
	x.block.Close()
	x.block = nil
	if err != nil {
		return fmt.Errorf("release sandbox: %w", err)
	}
	return nil
}

// close stops the network helper and releases every pipe.
func (x *sandboxExec) close() {
	x.started()
	for _, f := range []**os.File{&x.info, &x.block} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
	if x.pasta != nil {
		x.pasta.stop()
		x.pasta = nil
	}
}

// controlFiles are the control files at root that exist: .longrun (the
// worker's per-workspace configuration and state), .git (the repository:
// its config names programs git runs; in a linked worktree a file, and
// the git directory it names is protected too when it lies under root)
// and AGENTS.md (text for the next session's system prompt). Each is bound
// read-only over itself, through symlinks to its real place when that is
// under root. A missing one cannot be protected this way: bwrap would
// create the mount point on the host, so a command a person approved can
// still create .longrun or AGENTS.md where there is none; the write tools
// ask a person for those paths, and an unapproved command cannot write at
// all. A nested repository's .git (vendor/lib/.git, a/b/.git) is a control
// file too (permission.IsControlPath): those that exist are found by
// nestedGitEntries and bound read-only the same way, so a command cannot
// rewrite the configuration of a repository the worker's tools treat as
// the person's; one it creates itself is the session's, and the worker's
// git on the host never goes into it (package checkout leaves it out).
func controlFiles(root string) []string {
	if root == "" {
		return nil
	}
	var out []string
	add := func(p string) {
		real, err := filepath.EvalSymlinks(p)
		if err != nil || !strictlyUnder(root, real) {
			return
		}
		for _, o := range out {
			if o == real {
				return
			}
		}
		out = append(out, real)
	}
	for _, name := range []string{".longrun", ".git", "AGENTS.md"} {
		add(filepath.Join(root, name))
	}
	if b, err := readBounded(filepath.Join(root, ".git"), 4096); err == nil {
		if g, ok := cutGitdir(string(b)); ok {
			if !filepath.IsAbs(g) {
				g = filepath.Join(root, g)
			}
			add(g)
		}
	}
	for _, p := range nestedGitEntries(root) {
		add(p)
		if b, err := readBounded(p, 4096); err == nil {
			if g, ok := cutGitdir(string(b)); ok {
				if !filepath.IsAbs(g) {
					g = filepath.Join(filepath.Dir(p), g)
				}
				add(g)
			}
		}
	}
	return out
}

// strictlyUnder reports whether p lies beneath dir (both clean and
// absolute), not at dir itself.
func strictlyUnder(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// nodeModules is the innermost node_modules directory holding the file
// real, or "" when it lies in none.
func nodeModules(real string) string {
	for dir := filepath.Dir(real); dir != "/" && dir != "."; dir = filepath.Dir(dir) {
		if filepath.Base(dir) == "node_modules" {
			return dir
		}
	}
	return ""
}
