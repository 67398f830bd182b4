package mcp

import (
	"context"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// processTransport is the go-sdk's CommandTransport for a Process: the
// sdk's calls cmd.Start and cmd.Wait itself, and a sandboxed server must
// instead be started through its sandbox (which attaches its network
// before the server runs) and waited for through it (which stops the
// network helper when the server is gone).
type processTransport struct {
	p *Process
	// terminate is how long Close waits after closing stdin before
	// SIGTERM, and after SIGTERM before SIGKILL.
	terminate time.Duration
}

// Connect starts the process and speaks newline-delimited JSON over its
// stdin and stdout.
func (t *processTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	stdout, err := t.p.Cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.p.Cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.p.start(); err != nil {
		return nil, err
	}
	// The connection is closed by closing stdin, not stdout, as the
	// MCP specification says for stdio.
	return (&sdk.IOTransport{Reader: io.NopCloser(stdout), Writer: &processStopper{stdin: stdin, p: t.p, terminate: t.terminate}}).Connect(ctx)
}

// processStopper is the connection's writer: Close ends the process the
// way the MCP specification asks (close stdin, wait, SIGTERM, wait,
// SIGKILL) and waits for it, so nothing of it (a sandbox, its network
// helper) is left once the connection is closed.
type processStopper struct {
	stdin     io.WriteCloser
	p         *Process
	terminate time.Duration

	once sync.Once
	err  error
}

func (s *processStopper) Write(b []byte) (int, error) { return s.stdin.Write(b) }

func (s *processStopper) Close() error {
	s.once.Do(func() { s.err = s.stop() })
	return s.err
}

func (s *processStopper) stop() error {
	_ = s.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- s.p.wait() }()
	wait := func() (error, bool) {
		select {
		case err := <-done:
			return err, true
		case <-time.After(s.terminate):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return exitErr(err)
	}
	if s.p.Cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return exitErr(err)
		}
	}
	_ = s.p.Cmd.Process.Kill()
	if err, ok := wait(); ok {
		return exitErr(err)
	}
	return fmt.Errorf("stdio server %s did not exit after SIGKILL", s.p.Cmd.Path)
}

// exitErr drops the exit status of a server that was stopped: it exiting
// is what was asked for.
func exitErr(err error) error {
	if _, ok := err.(interface{ ExitCode() int }); ok {
		return nil
	}
	return err
}
