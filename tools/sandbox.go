package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// SandboxMode says whether shell commands run inside bubblewrap (bwrap).
// The sandbox is a second line of defence behind approval and the hard
// block: it limits what an approved command that goes wrong can reach.
type SandboxMode string

// The sandbox modes. Auto is the default because a worker on a machine
// without bwrap should still work, and say so; On is for operators who
// would rather not start than run commands unconfined.
const (
	SandboxAuto SandboxMode = "auto" // use bwrap when it is present and works
	SandboxOn   SandboxMode = "on"   // require bwrap: commands fail without it
	SandboxOff  SandboxMode = "off"  // never use bwrap
)

// ErrSandboxUnavailable is returned when SandboxOn is asked for and bwrap
// is missing or does not work on this machine.
var ErrSandboxUnavailable = errors.New("sandbox unavailable")

// ParseSandboxMode reads a mode as written in a flag or the environment;
// the empty string is auto.
func ParseSandboxMode(s string) (SandboxMode, error) {
	switch m := SandboxMode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return SandboxAuto, nil
	case SandboxAuto, SandboxOn, SandboxOff:
		return m, nil
	}
	return "", fmt.Errorf("sandbox mode %q: want auto, on or off", s)
}

// CheckSandbox reports how shell commands configured by cfg will run:
// sandboxed, or not and why. It fails with ErrSandboxUnavailable when cfg
// requires the sandbox and it cannot run, so a worker can refuse to start
// rather than find out on the first command.
func CheckSandbox(cfg ShellConfig) (sandboxed bool, why string, err error) {
	sb, why, err := resolveSandbox(cfg.Sandbox, hostSandbox())
	return sb != nil, why, err
}

// CheckSandboxNetwork reports whether sandboxed commands of sessions that
// allow the network can have it: only through pasta, whose network cannot
// reach the host's loopback. Without pasta such commands are refused.
func CheckSandboxNetwork(cfg ShellConfig) (ok bool, why string) {
	sb, why, _ := resolveSandbox(cfg.Sandbox, hostSandbox())
	switch {
	case sb == nil:
		return false, why
	case sb.pasta == "":
		return false, sb.pastaWhy
	}
	return true, ""
}

// sandboxProbeTimeout bounds each start-up probe (bwrap, go env): a probe
// that hangs must not hang the worker.
const sandboxProbeTimeout = 10 * time.Second

// sandbox is what the probe found: bwrap itself and the directories
// commands need inside it. It is probed once per process because none of
// it changes while the worker runs.
type sandbox struct {
	bwrap string
	// pasta is the user-mode network (Debian package passt) a command
	// that may use the network gets; "" when it is not installed, and
	// such a command is then refused (see sandboxNet).
	pasta string
	// pastaWhy says why pasta is "": not installed, or failing here.
	pastaWhy string
	// hide are directories replaced by an empty tmpfs: the worker's home
	// (dot files, ~/.ssh, cloud and git credentials), its runtime
	// directory (agent and D-Bus sockets), and the directories where hosts
	// keep unix sockets (socketDirs).
	hide []string
	// home is the hidden home: HOME inside the sandbox, an empty tmpfs;
	// "" when the worker has no home to hide, and HOME is then /tmp.
	home string
	// sockets are unix sockets the probe found outside the hidden
	// directories (findSockets): /dev/null is bound over each, so a
	// connect fails.
	sockets []string
	// visible are directories inside a hidden one that commands still
	// need, bound read-only: GOROOT and PATH entries such as ~/go/bin or
	// ~/sdk/go1.26/bin.
	visible []string
	// goModCache is the host's module cache, bound read-only into every
	// sandbox, so no command can rewrite module source the person's own
	// builds trust (the sandbox user owns the files and could chmod
	// them). A command that may download gets the worker's own module
	// cache instead (sandboxModCache). The build cache is not the host's
	// either (see sandboxGoCache).
	goModCache string
}

// sandboxProbe is the result of looking at the machine: a working sandbox,
// or why there is none.
type sandboxProbe struct {
	sb  *sandbox
	why string
}

// hostSandbox probes this machine once; every Shell and CheckSandbox share
// the answer, so what the worker logs at start-up is what commands get.
var hostSandbox = sync.OnceValue(func() sandboxProbe { return probeSandbox(exec.LookPath) })

// resolveSandbox applies mode to what the probe found.
func resolveSandbox(mode SandboxMode, p sandboxProbe) (*sandbox, string, error) {
	switch mode {
	case SandboxOff:
		return nil, "the sandbox is turned off (sandbox mode off)", nil
	case SandboxOn:
		if p.sb == nil {
			return nil, p.why, fmt.Errorf("%w: sandbox mode on, but %s", ErrSandboxUnavailable, p.why)
		}
	default:
		if p.sb == nil {
			return nil, p.why, nil
		}
	}
	return p.sb, "", nil
}

// socketDirs are where hosts keep unix sockets (systemd, D-Bus, Docker,
// databases under /run; programs' private sockets under /var/tmp): each
// that exists is replaced by an empty tmpfs. A unix socket is reachable
// through a read-only mount (connect needs no write to the file system),
// so only hiding the file keeps a command from talking to the service
// behind it. /tmp is private anyway and /dev is bwrap's own (--dev: a
// fresh /dev/shm); sockets elsewhere are found by findSockets.
var socketDirs = []string{"/run", "/var/run", "/var/tmp", "/var/lock"}

// socketScanSkip are trees findSockets does not walk: kernel file systems
// (/proc, /sys; /dev is replaced) and the large read-only trees of
// installed software, where no service keeps a socket.
var socketScanSkip = []string{"/proc", "/sys", "/dev", "/usr", "/nix", "/snap", "/gnu"}

// socketScanBudget bounds the start-up walk for sockets; a tree larger
// than that is not walked to its end.
const socketScanBudget = 300_000

// probeSandbox finds bwrap with lookPath and runs it once with the flags
// every command gets: bwrap can be installed and still fail (no user
// namespaces in a container, a seccomp profile), and such a machine must
// fall back loudly rather than fail every command.
func probeSandbox(lookPath func(string) (string, error)) sandboxProbe {
	bwrap, err := lookPath("bwrap")
	if err != nil {
		return sandboxProbe{why: "bwrap (bubblewrap) is not installed: " + err.Error()}
	}
	sb := &sandbox{bwrap: bwrap}
	if pasta, err := lookPath("pasta"); err == nil {
		sb.pasta = pasta
	} else {
		sb.pastaWhy = "pasta (Debian package passt) is not installed: " + err.Error()
	}
	if h := realDir(homeDir()); h != "" && h != "/" {
		sb.home = h
	}
	for _, dir := range append([]string{sb.home, os.Getenv("XDG_RUNTIME_DIR")}, socketDirs...) {
		if dir = realDir(dir); dir != "" && dir != "/" && !slices.Contains(sb.hide, dir) {
			sb.hide = append(sb.hide, dir)
		}
	}
	sb.findGo(lookPath)
	// /etc/resolv.conf is often a link into /run (systemd-resolved,
	// NetworkManager): the file itself stays visible, or nothing in a
	// networked sandbox could resolve a name.
	if rc, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && sb.hidden(rc) {
		sb.visible = append(sb.visible, rc)
	}
	sb.sockets = findSockets("/", append(append([]string{"/tmp"}, sb.hide...), socketScanSkip...), socketScanBudget)
	ctx, cancel := context.WithTimeout(context.Background(), sandboxProbeTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bwrap, sb.args(sandboxRun{dir: "/", sockets: liveSockets(sb.sockets), infoFD: -1, blockFD: -1, argv: []string{"true"}})...).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return sandboxProbe{why: fmt.Sprintf("%s does not work here: %s", bwrap, msg)}
	}
	if sb.pasta != "" {
		if err := probeNetwork(sb); err != nil {
			sb.pasta, sb.pastaWhy = "", fmt.Sprintf("%s does not work here: %v", sb.pasta, err)
		}
	}
	return sandboxProbe{sb: sb}
}

// probeNetwork runs `true` in a sandbox with the network attached, the
// way every networked command runs, so what the worker says at start-up
// about network-enabled sessions is what they get.
func probeNetwork(sb *sandbox) error {
	x, err := newSandboxExec(sb, ShellConfig{}, workerDirs{}, SandboxSpec{Argv: []string{"true"}, Dir: "/", Network: true, probe: true})
	if err != nil {
		return err
	}
	defer x.close()
	if err := x.cmd.Start(); err != nil {
		return err
	}
	if err := x.attach(); err != nil {
		_ = x.cmd.Process.Kill()
		_ = x.cmd.Wait()
		return err
	}
	return x.cmd.Wait()
}

// findSockets walks root, except the trees in skip, for unix sockets, up
// to budget entries. A socket made after the probe outside socketDirs is
// not found: that is a limit, written down in the README's security model.
func findSockets(root string, skip []string, budget int) []string {
	var found []string
	seen := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if seen++; seen > budget {
			return filepath.SkipAll
		}
		if d.IsDir() && p != root && slices.Contains(skip, p) {
			return filepath.SkipDir
		}
		if d.Type()&fs.ModeSocket != 0 {
			found = append(found, p)
		}
		return nil
	})
	return found
}

// liveSockets returns the sockets that are still sockets: bwrap would
// have to create the mount point of one that is gone, and fails on the
// read-only root (or creates a file in the working directory).
func liveSockets(sockets []string) []string {
	var live []string
	for _, s := range sockets {
		if fi, err := os.Lstat(s); err == nil && fi.Mode()&fs.ModeSocket != 0 {
			live = append(live, s)
		}
	}
	return live
}

// findGo asks the go command, when there is one, where its module cache
// and root are, so `go build` works inside with the home directory hidden.
func (sb *sandbox) findGo(lookPath func(string) (string, error)) {
	goBin, err := lookPath("go")
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), sandboxProbeTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, goBin, "env", "-json", "GOMODCACHE", "GOROOT").Output()
	if err != nil {
		return
	}
	var env struct{ GOMODCACHE, GOROOT string }
	if json.Unmarshal(out, &env) != nil {
		return
	}
	// go creates the cache on first use anyway; it must exist now to be
	// bound.
	if filepath.IsAbs(env.GOMODCACHE) && os.MkdirAll(env.GOMODCACHE, 0o755) == nil {
		sb.goModCache = realDir(env.GOMODCACHE)
	}
	dirs := append([]string{realDir(env.GOROOT)}, filepath.SplitList(os.Getenv("PATH"))...)
	for _, d := range dirs {
		if d = realDir(d); d != "" && sb.hidden(d) && !slices.Contains(sb.visible, d) {
			sb.visible = append(sb.visible, d)
		}
	}
}

// hidden reports whether p lies strictly inside a hidden directory or
// the private /tmp.
func (sb *sandbox) hidden(p string) bool {
	for _, h := range append([]string{"/tmp"}, sb.hide...) {
		if strings.HasPrefix(p, h+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// sandboxGoCache is the build cache commands in the sandbox use: the
// worker's own, never the host user's. A command can write to the cache it
// is given (go test must), and the host's cache is read by every build the
// person runs later, so a shared one is a poisoning path. The cost: the
// first build in the sandbox is cold (the standard library is compiled
// once, tens of seconds on two cores); later ones hit this cache, which
// sandboxed commands of every session share. It lives under the state
// directory when the worker has one, else in the user's cache directory
// (longrun/sandbox-go-build: kept across restarts, not a temporary
// directory that would be left behind by every worker process), and only
// if neither works in a temporary directory of this process.
//
// Commands nobody approved (readOnly) get a cache of their own: they must
// be able to build, and what they write there (a misjudged command may
// plant anything) then reaches only other read-only runs, which can change
// nothing, never the build of an approved command.
func sandboxGoCache(stateDir string, readOnly bool) string {
	if readOnly {
		return namedGoCache(stateDir, "go-build-unapproved", processGoCacheUnapproved)
	}
	return namedGoCache(stateDir, "go-build", processGoCache)
}

// namedGoCache is the build cache called name under the state directory,
// else in the user's cache directory, else fallback's.
func namedGoCache(stateDir, name string, fallback func() string) string {
	var dirs []string
	if stateDir != "" {
		dirs = append(dirs, filepath.Join(stateDir, name))
	}
	if cache, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(cache, "longrun", "sandbox-"+name))
	}
	for _, dir := range dirs {
		if os.MkdirAll(dir, 0o700) == nil {
			if real := realDir(dir); real != "" {
				return real
			}
		}
	}
	return fallback()
}

// processGoCache is the build cache of a worker that can create neither
// of the others.
var processGoCache = sync.OnceValue(func() string {
	dir, err := os.MkdirTemp("", "longrun-go-build-")
	if err != nil {
		return ""
	}
	return realDir(dir)
})

// processGoCacheUnapproved is processGoCache for read-only runs.
var processGoCacheUnapproved = sync.OnceValue(func() string {
	dir, err := os.MkdirTemp("", "longrun-go-build-unapproved-")
	if err != nil {
		return ""
	}
	return realDir(dir)
})

// sandboxModCache is the module cache of sandboxed commands that may
// download (an approved command of a session that allows the network):
// the worker's own, never the host's, which every sandbox sees read-only.
// A command can write to its module cache (the sandbox user owns the
// files: `chmod u+w` and an edit), so a shared one would let a session
// plant code the person's next `go run` of another project trusts. What
// a command plants here reaches only other sandboxed commands of this
// worker, which read module source from here only after go.sum checked
// it when it was downloaded. The host's download cache is the first
// proxy (GOPROXY=file://...), so a module the host has is not fetched
// again. It lives beside the build cache: <state>/go-mod, else the
// user's cache directory, else a temporary directory of this process.
func sandboxModCache(stateDir string) string {
	var dirs []string
	if stateDir != "" {
		dirs = append(dirs, filepath.Join(stateDir, "go-mod"))
	}
	if cache, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(cache, "longrun", "sandbox-go-mod"))
	}
	for _, dir := range dirs {
		if os.MkdirAll(dir, 0o700) == nil {
			if real := realDir(dir); real != "" {
				return real
			}
		}
	}
	return processModCache()
}

// processModCache is the module cache of a worker that can create
// neither of the others.
var processModCache = sync.OnceValue(func() string {
	dir, err := os.MkdirTemp("", "longrun-go-mod-")
	if err != nil {
		return ""
	}
	return realDir(dir)
})

// sandboxRun is one command to run in the sandbox.
type sandboxRun struct {
	// root is the directory bound from the host: the session's working
	// directory, never the worker's whole workspace, so a command does not
	// see its neighbour sessions' files. "" binds none.
	root string
	// dir is where the command starts.
	dir string
	// readOnly binds root read-only: a command nobody approved.
	readOnly bool
	// network gives the sandbox user-mode networking (pasta); without it
	// the sandbox's network namespace has only its own loopback.
	network bool
	// goCache is the writable build cache (sandboxGoCache); "" for none.
	goCache string
	// modCache is the worker's own module cache (sandboxModCache), bound
	// writable for a command that may download; "" for none.
	modCache string
	// setupModCache is the module cache of the session's setup layer
	// (setupModCacheFor), bound read-only; "" for none.
	setupModCache string
	// sockets are the probe's sockets that still exist (liveSockets):
	// /dev/null is bound over each.
	sockets []string
	// protect are paths bound read-only over themselves after root:
	// control files (controlFiles).
	protect []string
	// hide are more directories replaced by an empty tmpfs: the worker's
	// state and config directories and the other directories its flags
	// and environment name (workerDirs).
	hide []string
	// hideFiles are files /dev/null is bound over: the worker's keys,
	// certificates and other files its flags and environment name.
	hideFiles []string
	// programs are program files bound read-only at their place after
	// everything is hidden: a server the worker resolved on the host
	// that lies in a hidden directory (a test binary under /tmp); src is
	// the file itself, path where the command names it.
	programs []mount
	// gitDirs are bound read-only: the git directories a session's own
	// checkout needs (checkoutGitDirs).
	gitDirs []string
	// gitHide are directories of the shared git directory replaced by an
	// empty tmpfs, and gitBack what of them is the session's own, bound
	// back read-only (sessionGitView).
	gitHide []string
	gitBack []mount
	// infoFD, when not negative, is where bwrap writes the host pid of
	// the sandbox's init process; blockFD, when not negative, is read
	// before the command starts (the network is attached meanwhile).
	infoFD, blockFD int
	argv            []string
	// tmpBytes is the size of the private /tmp; 0 is DefaultTmpBytes.
	tmpBytes int64
}

// mount is one file system change on top of the read-only root.
type mount struct {
	flag string // --tmpfs, --bind or --ro-bind
	path string
	src  string // what is bound at path; "" is path itself
	size int64  // of a tmpfs, in bytes
}

// Sizes of the hidden directories' tmpfs mounts (held in the host's
// memory while a command runs): the home gets room for the dot files and
// caches tools write there; the others are only hidden, nothing needs to
// write into them.
const (
	sandboxHomeBytes   = 64 << 20
	sandboxHiddenBytes = 1 << 20
)

// args returns bwrap's arguments for r. Every mount, and why:
//
//   - / read-only: programs, libraries and /etc are where the host has
//     them, and nothing outside the working directory can be changed.
//   - /dev and /proc of the sandbox's own: no host devices, no host
//     /dev/shm, and /proc shows only the sandbox's processes (not the
//     worker's /proc/PID/environ, which holds its keys).
//   - /tmp, the home, the runtime directory, socketDirs and the worker's
//     state and config directories (r.hide): an empty tmpfs each, sized
//     (/tmp ShellConfig.TmpBytes, the home sandboxHomeBytes, the others
//     sandboxHiddenBytes). A private /tmp whose files vanish with the command, an
//     empty home (no dot files, ~/.ssh, cloud or git credentials), and no
//     host unix sockets; sockets the probe found elsewhere have /dev/null
//     bound over them.
//   - visible: directories under a hidden one that commands need
//     (GOROOT, PATH entries under the home), read-only.
//   - the host's Go module cache, read-only, always; a command that may
//     download gets the worker's own (sandboxModCache), writable, and the
//     build cache is the worker's own (sandboxGoCache), writable.
//   - hideFiles: /dev/null over each file the worker's flags and
//     environment name (keys, certificates); programs: a server's
//     program bound back where a hidden directory covers it.
//   - root, the session's working directory: writable, or read-only for
//     a command nobody approved.
//   - protect: control files (.longrun, .git, AGENTS.md) read-only over
//     themselves, so even an approved command cannot rewrite the rules,
//     the repository's configuration or the next session's prompt.
//
// The namespaces: a new pid namespace, so everything in it dies with its
// init; always a new network namespace: with only its own loopback, or
// with pasta attached when r.network (see sandboxNet), never the host's,
// whose loopback serves Temporal and its UI; --new-session, so the
// command has no controlling terminal to push input into. --cap-drop ALL
// matters when the worker runs as root: bwrap then keeps every capability,
// and one could simply remount / read-write. --die-with-parent kills the
// sandbox if bwrap itself is killed.
func (sb *sandbox) args(r sandboxRun) []string {
	args := []string{
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--unshare-net",
		"--new-session", "--die-with-parent", "--cap-drop", "ALL",
	}
	if r.infoFD >= 0 {
		args = append(args, "--info-fd", fmt.Sprint(r.infoFD))
	}
	if r.blockFD >= 0 {
		args = append(args, "--block-fd", fmt.Sprint(r.blockFD))
	}
	tmp := r.tmpBytes
	if tmp <= 0 {
		tmp = DefaultTmpBytes
	}
	// /dev/shm of bwrap's --dev is a tmpfs without a size (half the host's
	// memory): it gets /tmp's bound.
	mounts := []mount{{flag: "--tmpfs", path: "/tmp", size: tmp}, {flag: "--tmpfs", path: "/dev/shm", size: tmp}}
	home := realDir(sb.home)
	for _, h := range append(slices.Clone(sb.hide), r.hide...) {
		size := int64(sandboxHiddenBytes)
		if h == home || h == sb.home {
			size = sandboxHomeBytes
		}
		mounts = append(mounts, mount{flag: "--tmpfs", path: h, size: size})
	}
	for _, s := range r.sockets {
		mounts = append(mounts, mount{flag: "--ro-bind", path: s, src: "/dev/null"})
	}
	for _, v := range sb.visible {
		mounts = append(mounts, mount{flag: "--ro-bind", path: v})
	}
	if sb.goModCache != "" {
		mounts = append(mounts, mount{flag: "--ro-bind", path: sb.goModCache})
	}
	if r.modCache != "" {
		mounts = append(mounts, mount{flag: "--bind", path: r.modCache})
	}
	if r.setupModCache != "" {
		mounts = append(mounts, mount{flag: "--ro-bind", path: r.setupModCache})
	}
	if r.goCache != "" {
		mounts = append(mounts, mount{flag: "--bind", path: r.goCache})
	}
	for _, f := range r.hideFiles {
		mounts = append(mounts, mount{flag: "--ro-bind", path: f, src: "/dev/null"})
	}
	for _, p := range r.programs {
		mounts = append(mounts, mount{flag: "--ro-bind", path: p.path, src: p.src})
	}
	if r.root != "" {
		flag := "--bind"
		if r.readOnly {
			flag = "--ro-bind"
		}
		mounts = append(mounts, mount{flag: flag, path: r.root})
	}
	for _, p := range r.protect {
		mounts = append(mounts, mount{flag: "--ro-bind", path: p})
	}
	for _, p := range r.gitDirs {
		mounts = append(mounts, mount{flag: "--ro-bind", path: p})
	}
	for _, p := range r.gitHide {
		mounts = append(mounts, mount{flag: "--tmpfs", path: p, size: sandboxHiddenBytes})
	}
	for _, m := range r.gitBack {
		mounts = append(mounts, mount{flag: "--ro-bind", path: m.path, src: m.src})
	}
	// A mount hides what is below it, so parents go first: the workspace
	// under /tmp or under the home stays visible over their tmpfs, the Go
	// build cache under the state directory is bound back over its tmpfs,
	// and a home inside the workspace is still hidden. At equal depth the later
	// entry wins, so a workspace that is the home itself stays usable.
	sort.SliceStable(mounts, func(i, j int) bool { return depth(mounts[i].path) < depth(mounts[j].path) })
	for _, m := range mounts {
		switch {
		case m.flag == "--tmpfs":
			// Sized: an unbounded tmpfs is host memory a command can
			// fill, charged to no process.
			args = append(args, "--size", fmt.Sprint(m.size), m.flag, m.path)
		case m.src != "":
			args = append(args, m.flag, m.src, m.path)
		default:
			args = append(args, m.flag, m.path, m.path)
		}
	}
	args = append(args, "--chdir", r.dir, "--")
	return append(args, r.argv...)
}

// depth counts the components of a clean absolute path ("/" is 0).
func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// realDir returns dir absolute and without symlinks (mounts act on the
// real path), or "" if it is not an existing directory.
func realDir(dir string) string {
	if dir == "" || !filepath.IsAbs(dir) {
		return ""
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return ""
	}
	return real
}

func homeDir() string {
	h, _ := os.UserHomeDir()
	return h
}

// readChildPID reads the JSON bwrap writes to --info-fd once the sandbox
// is set up: {"child-pid": N, ...}. A deadline (wait) keeps a wedged bwrap
// from hanging the tool before its timeout is even armed. Past it the
// error names the wait: on a loaded machine creating the namespaces can
// be that slow, and bwrap then dies writing to the closed pipe, so the
// command fails with nothing of its own to say why.
func readChildPID(f *os.File, wait time.Duration) (int, error) {
	_ = f.SetReadDeadline(time.Now().Add(wait))
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	if err := json.NewDecoder(f).Decode(&info); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, fmt.Errorf("bwrap did not report its sandbox set up within %s (the machine may be overloaded: creating namespaces is slow then): %w", wait, err)
		}
		return 0, fmt.Errorf("read bwrap info: %w", err)
	}
	if info.ChildPID <= 0 {
		return 0, errors.New("read bwrap info: no child-pid")
	}
	return info.ChildPID, nil
}
