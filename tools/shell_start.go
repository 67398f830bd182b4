package tools

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// proc is a command start has launched, foreground or background.
type proc struct {
	cmd   *exec.Cmd
	sb    *sandbox // nil when unsandboxed
	began time.Time
	// info is the read end of bwrap's --info-fd pipe; nil unsandboxed.
	info *os.File
}

// startError is a command that could not be launched at all (bash or bwrap
// missing, a bad directory): the model is told, it is not a broken worker.
type startError struct {
	name string
	err  error
}

func (e *startError) Error() string { return fmt.Sprintf("cannot start %s: %v", e.name, e.err) }

// startFailure turns an error of start into the tool's answer: a result
// when the command could not be launched, a Go error when the worker could
// not even set up the pipes.
func startFailure(err error) (Result, error) {
	var se *startError
	if errors.As(err, &se) {
		return Errorf("%v", se), nil
	}
	return Result{}, err
}

// start launches command the one way every shell command runs, so a
// background job gets exactly what a foreground command gets: `bash -c` in
// its own process group, the scrubbed environment with TERM=dumb and no
// pager, stdin on the null device, stdout and stderr both to out, and
// bubblewrap around it when sb is set. start closes out: the children hold
// it now, and the reader must see EOF when they are gone.
//
// background asks the kernel to SIGKILL the command when the worker dies
// (Pdeathsig): a job must not outlive the worker that is the only one able
// to list, read or kill it. It reaches bash (or bwrap, whose
// --die-with-parent then takes the whole sandbox); children an unsandboxed
// bash left behind are orphaned, the best plain Linux allows.
func (s *Shell) start(env Env, sb *sandbox, dir, command string, out *os.File, background bool) (*proc, error) {
	defer out.Close()
	argv := []string{"bash", "-c", command}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = s.environ()
	p := &proc{cmd: cmd, sb: sb}
	var infoW *os.File
	if sb != nil {
		var err error
		if p.info, infoW, err = os.Pipe(); err != nil {
			return nil, fmt.Errorf("create sandbox info pipe: %w", err)
		}
		defer infoW.Close()
		cmd = exec.Command(sb.bwrap, sb.args(env.Workspace.Root(), dir, env.AllowNetwork, 3, argv)...)
		cmd.ExtraFiles = []*os.File{infoW} // fd 3
		cmd.Env = s.environ(sb.env()...)
		p.cmd = cmd
	}
	cmd.Dir = dir
	cmd.Stdin = nil // the null device
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if background {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	p.began = time.Now()
	if err := cmd.Start(); err != nil {
		p.close()
		return nil, &startError{name: cmd.Args[0], err: err}
	}
	return p, nil
}

// group returns the process group to signal, once. Unsandboxed it is bash's
// own. bwrap --new-session puts its init and the command in a new session,
// so signals go to that group and not to bwrap itself: bwrap dies on
// SIGTERM, and its death would SIGKILL the command (--die-with-parent)
// before it had its grace period. If the pid cannot be read, bwrap failed
// to set up; its group is the fallback and its message is in the output.
// A foreground caller must already be draining the output: see Shell.Run.
func (p *proc) group() int {
	pgid := p.cmd.Process.Pid
	if p.info != nil {
		if child, err := readChildPID(p.info); err == nil {
			pgid = child
		}
		p.close()
	}
	return pgid
}

// close releases the info pipe.
func (p *proc) close() {
	if p.info != nil {
		p.info.Close()
		p.info = nil
	}
}
