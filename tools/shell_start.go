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
	// x is bwrap's side of a sandboxed command: the pipes it reports
	// through and the network helper; nil unsandboxed.
	x *sandboxExec
	// setupErr is why the sandbox was killed before the command ran (its
	// network could not be attached); set by group.
	setupErr error
	// startErr is why bwrap did not report that its sandbox was set up
	// (its own message, if any, is in the output); set by group. The
	// command then most likely did not run, and a failure says why.
	startErr error
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
// its own process group, the allowlisted environment (commandEnv) with
// TERM=dumb and no pager, stdin on the null device, stdout and stderr both
// to out, and bubblewrap around it when sb is set (newSandboxExec: the
// working directory read-only for env.ReadOnlySandbox, the network only
// through pasta). start closes out: the children hold it now, and the
// reader must see EOF when they are gone.
//
// background asks the kernel to SIGKILL the command when the worker dies
// (Pdeathsig): a job must not outlive the worker that is the only one able
// to list, read or kill it. It reaches bash (or bwrap, whose
// --die-with-parent then takes the whole sandbox); children an unsandboxed
// bash left behind are orphaned, the best plain Linux allows.
func (s *Shell) start(env Env, sb *sandbox, dir, command string, out *os.File, background bool) (*proc, error) {
	defer out.Close()
	argv := []string{"bash", "-c", command}
	p := &proc{sb: sb}
	if sb == nil {
		// Unconfined, the command keeps the worker's home and temporary
		// directory: only an approved command gets here.
		var set []string
		for _, name := range []string{"HOME", "TMPDIR"} {
			if v, ok := os.LookupEnv(name); ok {
				set = append(set, name+"="+v)
			}
		}
		p.cmd = exec.Command(argv[0], argv[1:]...)
		p.cmd.Env = commandEnv(s.cfg, set...)
	} else {
		x, err := newSandboxExec(sb, s.cfg, workerDirs{state: s.stateDir, config: s.configDir, paths: s.hidePaths}, SandboxSpec{
			Argv: argv, Dir: dir, Root: env.Workspace.Root(),
			// A command nobody approved gets no network, whatever the
			// session allows: it could send the workspace away.
			ReadOnly: env.ReadOnlySandbox, Network: env.AllowNetwork && !env.ReadOnlySandbox,
		})
		if err != nil {
			return nil, &startError{name: "the sandbox", err: err}
		}
		p.x, p.cmd = x, x.cmd
	}
	cmd := p.cmd
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
	if p.x != nil {
		p.x.started()
	}
	return p, nil
}

// group returns the process group to signal, once, and lets a sandboxed
// command run. Unsandboxed it is bash's own. bwrap --new-session puts its
// init and the command in a new session, so signals go to that group and
// not to bwrap itself: bwrap dies on SIGTERM, and its death would SIGKILL
// the command (--die-with-parent) before it had its grace period. If the
// pid cannot be read, bwrap failed to set up; its group is the fallback
// and its message is in the output. If the network cannot be attached,
// the sandbox is killed before the command runs and setupErr says why.
// A foreground caller must already be draining the output: see Shell.Run.
func (p *proc) group() int {
	pgid := p.cmd.Process.Pid
	if p.x != nil {
		err := p.x.attach()
		if p.x.childPID > 0 {
			pgid = p.x.childPID
			p.setupErr = err
		} else {
			p.startErr = err
		}
	}
	return pgid
}

// close stops the sandbox's network helper and releases its pipes.
func (p *proc) close() {
	if p.x != nil {
		p.x.close()
	}
}
