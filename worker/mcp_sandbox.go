package main

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/longrun/longrun/mcp"
	"github.com/longrun/longrun/tools"
)

// openMCP builds the Manager for the servers loadConfig found; nil when
// there are none. Stdio servers start in the workspace root, in the
// sandbox where it works (mcpCommand).
func openMCP(cfg mcp.Config, root string, logger *slog.Logger, tcfg tools.Config) (*mcp.Manager, error) {
	if len(cfg.Servers) == 0 {
		return nil, nil
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	for name, s := range cfg.Servers {
		if s.Command != "" && s.Sandbox != nil && !*s.Sandbox {
			logger.Warn(`MCP server runs outside the sandbox with the worker's rights, as its configuration says ("sandbox": false)`, "mcp_server", name)
		}
	}
	return mcp.New(cfg, mcp.Options{Logger: logger, Dir: root, Command: mcpCommand(tcfg, logger)})
}

// mcpCommand is the worker's mcp.Options.Command: every stdio server runs
// in the sandbox shell commands get, configured as they are (the worker's
// directories and files hidden, an empty home, a private /tmp, no host
// sockets, no capabilities, its own processes only), with:
//
//   - its program resolved on the host (tools.HostProgram), never in the
//     workspace or checkout it serves, which the model writes: a server
//     configured with a program there is refused, saying why;
//   - PYTHONSAFEPATH=1 and a PATH without the workspace's directories:
//     `python3 -m pyhelper_mcp` imports the installed module, not a
//     pyhelper_mcp.py the model wrote (Python 3.11 and later; an older
//     Python ignores the variable), and a node_modules/.bin the model
//     made is not looked in;
//   - its working directory the workspace (or the session's checkout,
//     for its instance: it sees the session's edits), except for the
//     package runners that resolve the package they run from there
//     (npx, npm, pnpm, yarn, bun, uv and the like: cwdRunners), which
//     start in the sandbox's own empty /tmp, so npx does not run a
//     package the model put in the checkout's node_modules;
//   - the workspace read-only (ReadOnly): a server is a program the model
//     drives with its arguments, and must not change the workspace
//     without a person approving the change through the workspace's own
//     tools;
//   - the network through pasta when this worker has it, and, for the
//     instance of a session's checkout, only when that session allows the
//     network: most servers call an API, and pasta keeps them from this
//     host's loopback (Temporal, its UI); without pasta the server runs
//     with no network and a warning, never on the host's;
//   - its allowlisted environment (the HOME it would get is the sandbox's
//     empty one).
//
// A server a person's own mcp.json marks "sandbox": false runs as a plain
// child process; so does every server where no sandbox works, with a
// warning naming it (once per server and reason): its program is still
// the host's and PYTHONSAFEPATH set.
// cwdRunners are programs that find what they run from their working
// directory (a project's node_modules, package.json, pyproject.toml): a
// server started through one starts outside the workspace.
var cwdRunners = []string{"npx", "npm", "pnpm", "pnpx", "yarn", "bun", "bunx", "deno", "uv", "uvx", "pipx", "poetry", "pdm", "hatch"}

func mcpCommand(tcfg tools.Config, logger *slog.Logger) func(mcp.Launch) (*mcp.Process, error) {
	network, netWhy := tools.CheckSandboxNetwork(tcfg.Shell)
	var warned sync.Map
	warnOnce := func(l mcp.Launch, msg string, args ...any) {
		if _, dup := warned.LoadOrStore(l.Server+"\x00"+msg, true); !dup {
			logger.Warn(msg, append([]any{"mcp_server", l.Server}, args...)...)
		}
	}
	return func(l mcp.Launch) (*mcp.Process, error) {
		prog, err := tools.HostProgram(l.Argv[0], l.Dir)
		if err != nil {
			return nil, fmt.Errorf("MCP server %s: %w", l.Server, err)
		}
		l.Argv = append([]string{prog}, l.Argv[1:]...)
		env := []string{"PYTHONSAFEPATH=1"}
		for _, kv := range l.Env {
			if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "PATH=") {
				env = append(env, kv)
			}
		}
		env = append(env, "PATH="+tools.HostPATH(l.Dir))
		dir := l.Dir
		if slices.Contains(cwdRunners, filepath.Base(prog)) {
			dir = "/tmp" // in the sandbox its own, empty
		}
		if l.NoSandbox {
			l.Env = env
			if dir != l.Dir {
				l.Dir = "/"
			}
			return mcp.ExecCommand(l)
		}
		net := network
		if l.Network != nil {
			net = network && *l.Network
		}
		sc, err := tools.SandboxCommand(tcfg, tools.SandboxSpec{
			Argv: l.Argv, Dir: dir, Root: l.Dir, Env: env, ReadOnly: true, Network: net,
		})
		switch {
		case errors.Is(err, tools.ErrNoSandbox):
			warnOnce(l, "MCP server runs unsandboxed, with the worker's rights: no sandbox works on this worker", "reason", err.Error())
			l.Env = env
			if dir != l.Dir {
				l.Dir = "/"
			}
			return mcp.ExecCommand(l)
		case err != nil:
			return nil, fmt.Errorf("sandbox for MCP server %s: %w", l.Server, err)
		}
		if !network && (l.Network == nil || *l.Network) {
			warnOnce(l, "MCP server runs sandboxed without a network: this worker has no network that keeps it from this host's loopback services", "reason", netWhy)
		}
		return &mcp.Process{Cmd: sc.Cmd, Start: sc.Start, Wait: sc.Wait}, nil
	}
}
