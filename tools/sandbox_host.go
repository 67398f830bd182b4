package tools

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/longrun/longrun/lsp"
)

// HostProgram resolves the program of a server the worker's owner
// configured (a language server, an MCP server) on the host: on the
// worker's PATH without its relative entries and without any entry under
// root (a checkout's node_modules/.bin, a "." that would be the
// checkout), made absolute against the worker's own directory when it
// names a path. A program that lies under root, through a symlink or
// not, is refused: the model writes the checkout, so a program found
// there is the model's, not the owner's.
func HostProgram(name, root string) (string, error) {
	if name == "" {
		return "", errors.New("no program named")
	}
	prog := name
	if !strings.Contains(name, "/") {
		var found bool
		for _, dir := range filepath.SplitList(HostPATH(root)) {
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				prog, found = p, true
				break
			}
		}
		if !found {
			return "", fmt.Errorf("%s is not on the worker's PATH (its relative entries and those in the workspace are not looked in)", name)
		}
	}
	abs, err := filepath.Abs(prog)
	if err != nil {
		return "", fmt.Errorf("program %s: %w", name, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("program %s: %w", name, err)
	}
	if root != "" {
		if r := realOrSelf(root); within(root, abs) || within(r, real) || within(r, abs) {
			return "", fmt.Errorf("program %s resolves to %s, inside the workspace %s: a server runs only a program the worker's owner installed, never one in the workspace", name, real, root)
		}
	}
	return abs, nil
}

// HostPATH is the worker's PATH without relative entries and entries
// under root (a checkout's node_modules/.bin): what a server started for
// root looks programs up in (a script's `#!/usr/bin/env node` included).
func HostPATH(root string) string {
	var keep []string
	r := realOrSelf(root)
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if !filepath.IsAbs(dir) {
			continue
		}
		if root != "" && (within(root, dir) || within(r, realOrSelf(dir))) {
			continue
		}
		keep = append(keep, dir)
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

// realOrSelf is p without symlinks, or p when it does not resolve.
func realOrSelf(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// HostCommand is the one door for a process a session's work needs that
// runs without the sandbox: only where the worker's owner turned the
// sandbox off (--sandbox off) or marked a server "sandbox": false. The
// program is resolved on the host (HostProgram, never in spec.Root), the
// environment is the allowlisted one commands get (no credentials) with
// the worker's HOME and TMPDIR and a PATH without the workspace, and the
// process leads its own process group, so stopping it stops what it
// started.
func HostCommand(cfg Config, spec SandboxSpec) (*exec.Cmd, error) {
	if len(spec.Argv) == 0 || !filepath.IsAbs(spec.Dir) {
		return nil, errors.New("host command: want a program and an absolute Dir")
	}
	prog, err := HostProgram(spec.Argv[0], spec.Root)
	if err != nil {
		return nil, err
	}
	set := []string{"PATH=" + HostPATH(spec.Root)}
	for _, name := range []string{"HOME", "TMPDIR"} {
		if v, ok := os.LookupEnv(name); ok {
			set = append(set, name+"="+v)
		}
	}
	cmd := exec.Command(prog, spec.Argv[1:]...)
	cmd.Dir = spec.Dir
	cmd.Env = commandEnv(cfg.Shell, append(set, spec.Env...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd, nil
}

// ErrServersNeedSandbox refuses a language server on a worker where no
// sandbox works and the sandbox is not turned off.
var ErrServersNeedSandbox = errors.New("language servers run only in the sandbox, and no sandbox works on this worker")

// LanguageServerLaunch is the worker's lsp.Launch: every language server
// runs in the sandbox shell commands get (cfg's: the worker's directories
// and files hidden, an empty home, a private /tmp, no host sockets, no
// capabilities), with:
//
//   - the program resolved on the host (HostProgram), never in the
//     workspace, bound back read-only if a hidden directory covers it;
//   - the workspace root read-only: a server reads the session's files,
//     and its edits reach them only through an approved patch;
//   - no network at all, and lsp.ServerEnv's settings (GOPROXY=off,
//     GOTOOLCHAIN=local, CGO_ENABLED=0: no C compiler quoting files);
//   - the host's module cache read-only, and a Go build cache of its own
//     (go-build-lsp under the state directory);
//   - a PATH without the workspace's directories.
//
// Where no sandbox works, servers are refused (ErrServersNeedSandbox),
// unless the owner turned the sandbox off: then a server runs as a host
// process (HostCommand: the same minimal environment and settings).
func LanguageServerLaunch(cfg Config) lsp.Launch { return languageServerLaunch(cfg, hostSandbox) }

// languageServerLaunch is LanguageServerLaunch with the machine's probe
// given, so a test can be a worker without a sandbox.
func languageServerLaunch(cfg Config, probe func() sandboxProbe) lsp.Launch {
	return func(l lsp.LaunchSpec) (*lsp.Process, error) {
		if len(l.Argv) == 0 || !filepath.IsAbs(l.Root) {
			return nil, errors.New("language server: want a program and an absolute workspace root")
		}
		sb, why, err := resolveSandbox(cfg.Shell.Sandbox, probe())
		if err != nil {
			return nil, err
		}
		env := append([]string{"PATH=" + HostPATH(l.Root)}, l.Env...)
		spec := SandboxSpec{Argv: l.Argv, Dir: l.Root, Root: l.Root, Env: env, ReadOnly: true}
		if sb == nil {
			if cfg.Shell.Sandbox != SandboxOff {
				return nil, fmt.Errorf("%w (%s): install bubblewrap, or run the worker with --sandbox off to run them unconfined", ErrServersNeedSandbox, why)
			}
			cmd, err := HostCommand(cfg, spec)
			if err != nil {
				return nil, err
			}
			return &lsp.Process{Cmd: cmd}, nil
		}
		prog, err := HostProgram(l.Argv[0], l.Root)
		if err != nil {
			return nil, err
		}
		spec.Argv = append([]string{prog}, l.Argv[1:]...)
		spec.goCache, spec.program = "go-build-lsp", prog
		run, err := newSandboxExec(sb, cfg.Shell, cfg.workerDirs(), spec)
		if err != nil {
			return nil, err
		}
		run.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		sc := &SandboxedCmd{Cmd: run.cmd, run: run}
		return &lsp.Process{Cmd: sc.Cmd, Start: sc.Start, Wait: sc.Wait, Kill: sc.kill}, nil
	}
}

// kill ends the sandbox at once: its init's process group (the command
// and everything it started) and bwrap's.
func (c *SandboxedCmd) kill() {
	if pid := c.PID(); pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	if c.Cmd.Process != nil {
		_ = syscall.Kill(-c.Cmd.Process.Pid, syscall.SIGKILL)
	}
}
