package lsp

import (
	"os"
	"os/exec"
	"syscall"
)

// testLaunch starts the servers of this package's tests. An external test
// file (sandbox_test.go) sets it to the worker's sandboxed launcher where
// a sandbox works, so these tests talk to servers as a worker runs them;
// hostLaunch is the fallback, a plain child process.
var testLaunch Launch = hostLaunch

// SetTestLaunch lets the external test package choose testLaunch.
func SetTestLaunch(l Launch) { testLaunch = l }

// hostLaunch runs the server as a plain child in its own process group.
func hostLaunch(s LaunchSpec) (*Process, error) {
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.Dir = s.Root
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return &Process{Cmd: cmd}, nil
}
