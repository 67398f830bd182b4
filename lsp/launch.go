package lsp

import (
	"errors"
	"os/exec"
	"sort"
)

// Launch makes the process of a language server, not yet started. The
// worker gives one that runs the server in its sandbox (package tools'
// LanguageServerLaunch): this package starts no process of its own, so a
// server never runs with the worker's rights by accident.
type Launch func(LaunchSpec) (*Process, error)

// LaunchSpec is one server to start for one workspace root.
type LaunchSpec struct {
	// Server is the server's name in lsp.json, for messages.
	Server string
	// Argv is the command as configured and its arguments; the launcher
	// resolves the program on the host, never in the workspace.
	Argv []string
	// Root is the workspace root the server serves: its directory, which
	// it may read and must not change.
	Root string
	// Env are NAME=value entries the server gets on top of the minimal
	// environment the launcher gives (ServerEnv).
	Env []string
}

// Process is a server's process as a Launch made it. Set nothing on Cmd
// but its pipes; Start, Wait and Kill, when set, replace Cmd's own (a
// sandbox starts and stops more than the one process).
type Process struct {
	Cmd   *exec.Cmd
	Start func() error
	Wait  func() error
	// Kill ends the server and everything it started at once.
	Kill func()
}

// ErrNoLaunch is the error of a Manager whose Config has no Launch.
var ErrNoLaunch = errors.New("language servers are off: the worker gave no way to start them")

// ServerEnv is what a server's environment holds besides the launcher's
// minimal one: the Go settings that keep gopls from the network
// (GOPROXY=off: it runs `go list`, which would otherwise download the
// modules a workspace's go.mod names; GOTOOLCHAIN=local: nor a toolchain
// a go.mod asks for), then the server's own env, which may set either
// back, and last CGO_ENABLED=0, which nothing sets back: with cgo, `go
// list -compiled` runs the C compiler on a package's preamble, and an
// `#include "/any/file"` comes back quoted in a diagnostic.
func ServerEnv(s ServerConfig) []string {
	out := []string{"GOPROXY=off", "GOTOOLCHAIN=local"}
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k != "CGO_ENABLED" {
			out = append(out, k+"="+s.Env[k])
		}
	}
	return append(out, "CGO_ENABLED=0")
}

func (p *Process) start() error {
	if p.Start != nil {
		return p.Start()
	}
	return p.Cmd.Start()
}

func (p *Process) wait() error {
	if p.Wait != nil {
		return p.Wait()
	}
	return p.Cmd.Wait()
}
