package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// sandboxProbeTimeout bounds each start-up probe (bwrap, go env): a probe
// that hangs must not hang the worker.
const sandboxProbeTimeout = 10 * time.Second

// sandbox is what the probe found: bwrap itself and the directories
// commands need inside it. It is probed once per process because none of
// it changes while the worker runs.
type sandbox struct {
	bwrap string
	// hide are directories replaced by an empty tmpfs: the worker's home
	// (dot files, ~/.ssh, cloud and git credentials) and its runtime
	// directory (agent and D-Bus sockets).
	hide []string
	// visible are directories inside a hidden one that commands still
	// need, bound read-only: GOROOT and PATH entries such as ~/go/bin or
	// ~/sdk/go1.26/bin.
	visible []string
	// goCache is bound read-write: it is a content-addressed build cache,
	// not a credential, and without it every `go build` or `go test` in
	// the sandbox would rebuild the standard library (tens of seconds on
	// two cores). The cost is that a command can add entries the worker
	// user's own builds would read; approval and the hard block stand
	// before that.
	goCache string
	// goModCache is bound read-only, so a command cannot rewrite module
	// source other builds trust; only when the session allows the network
	// (the only way a download can succeed) is it writable.
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
	for _, dir := range []string{homeDir(), os.Getenv("XDG_RUNTIME_DIR")} {
		if dir = realDir(dir); dir != "" && dir != "/" {
			sb.hide = append(sb.hide, dir)
		}
	}
	sb.findGo(lookPath)
	ctx, cancel := context.WithTimeout(context.Background(), sandboxProbeTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bwrap, sb.args("", "/", false, -1, []string{"true"})...).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return sandboxProbe{why: fmt.Sprintf("%s does not work here: %s", bwrap, msg)}
	}
	return sandboxProbe{sb: sb}
}

// findGo asks the go command, when there is one, where its caches and
// root are, so `go build` works inside with the home directory hidden.
func (sb *sandbox) findGo(lookPath func(string) (string, error)) {
	goBin, err := lookPath("go")
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), sandboxProbeTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, goBin, "env", "-json", "GOCACHE", "GOMODCACHE", "GOROOT").Output()
	if err != nil {
		return
	}
	var env struct{ GOCACHE, GOMODCACHE, GOROOT string }
	if json.Unmarshal(out, &env) != nil {
		return
	}
	// go creates both caches on first use anyway; they must exist now to
	// be bound.
	for _, d := range []*string{&env.GOCACHE, &env.GOMODCACHE} {
		if filepath.IsAbs(*d) && os.MkdirAll(*d, 0o755) == nil {
			*d = realDir(*d)
		} else {
			*d = ""
		}
	}
	sb.goCache, sb.goModCache = env.GOCACHE, env.GOMODCACHE
	dirs := append([]string{realDir(env.GOROOT)}, filepath.SplitList(os.Getenv("PATH"))...)
	for _, d := range dirs {
		if d = realDir(d); d != "" && sb.hidden(d) {
			sb.visible = append(sb.visible, d)
		}
	}
}

// hidden reports whether dir lies strictly inside a hidden directory or
// the private /tmp.
func (sb *sandbox) hidden(dir string) bool {
	for _, h := range append([]string{"/tmp"}, sb.hide...) {
		if strings.HasPrefix(dir, h+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// env returns the variables set inside the sandbox: the caches where the
// probe found them (the go env file under the hidden home is not
// readable inside), and TMPDIR on the private /tmp, because a TMPDIR
// elsewhere is read-only there.
func (sb *sandbox) env() []string {
	env := []string{"TMPDIR=/tmp", "GOTMPDIR="}
	if sb.goCache != "" {
		env = append(env, "GOCACHE="+sb.goCache)
	}
	if sb.goModCache != "" {
		env = append(env, "GOMODCACHE="+sb.goModCache)
	}
	return env
}

// mount is one file system change on top of the read-only root.
type mount struct {
	flag string // --tmpfs, --bind or --ro-bind
	path string
}

// args returns bwrap's arguments for running argv in dir with root (the
// session's workspace; "" for none) writable. infoFD, when not negative,
// is where bwrap writes the host pid of the sandbox's init process, which
// leads the commands' process group (see Shell.Run).
//
// The namespaces: a new pid namespace, so the command sees only its own
// processes (not the worker's /proc/PID/environ, which holds its keys) and
// everything in it dies with its init; no network unless allowed (the new
// namespace has only a loopback of its own); --new-session, so the
// command has no controlling terminal to push input into. --cap-drop ALL
// matters when the worker runs as root: bwrap then keeps every capability,
// and one could simply remount / read-write. --die-with-parent kills the
// sandbox if bwrap itself is killed.
func (sb *sandbox) args(root, dir string, allowNetwork bool, infoFD int, argv []string) []string {
	args := []string{
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--new-session", "--die-with-parent", "--cap-drop", "ALL",
	}
	if !allowNetwork {
		args = append(args, "--unshare-net")
	}
	if infoFD >= 0 {
		args = append(args, "--info-fd", fmt.Sprint(infoFD))
	}
	mounts := []mount{{"--tmpfs", "/tmp"}}
	for _, h := range sb.hide {
		mounts = append(mounts, mount{"--tmpfs", h})
	}
	for _, v := range sb.visible {
		mounts = append(mounts, mount{"--ro-bind", v})
	}
	if sb.goModCache != "" {
		flag := "--ro-bind"
		if allowNetwork {
			flag = "--bind"
		}
		mounts = append(mounts, mount{flag, sb.goModCache})
	}
	if sb.goCache != "" {
		mounts = append(mounts, mount{"--bind", sb.goCache})
	}
	if root != "" {
		mounts = append(mounts, mount{"--bind", root})
	}
	// A mount hides what is below it, so parents go first: the workspace
	// under /tmp or under the home stays visible over their tmpfs, and a
	// home inside the workspace is still hidden. At equal depth the later
	// entry wins, so a workspace that is the home itself stays usable.
	sort.SliceStable(mounts, func(i, j int) bool { return depth(mounts[i].path) < depth(mounts[j].path) })
	for _, m := range mounts {
		if m.flag == "--tmpfs" {
			args = append(args, m.flag, m.path)
		} else {
			args = append(args, m.flag, m.path, m.path)
		}
	}
	args = append(args, "--chdir", dir, "--")
	return append(args, argv...)
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
// is set up: {"child-pid": N, ...}. A deadline keeps a wedged bwrap from
// hanging the tool before its timeout is even armed.
func readChildPID(f *os.File) (int, error) {
	_ = f.SetReadDeadline(time.Now().Add(sandboxProbeTimeout))
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	if err := json.NewDecoder(f).Decode(&info); err != nil {
		return 0, fmt.Errorf("read bwrap info: %w", err)
	}
	if info.ChildPID <= 0 {
		return 0, errors.New("read bwrap info: no child-pid")
	}
	return info.ChildPID, nil
}
