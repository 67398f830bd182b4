package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// groupProc is a child process started in its own process group, so the
// chaos tests can kill it the way a crashed machine would: all at once,
// with no chance to clean up.
type groupProc struct {
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
}

// startGroupProc starts bin with args and env in a new process group, its
// output appended to logPath (kept across restarts, for the failure report).
func startGroupProc(bin string, args, env []string, logPath string) (*groupProc, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logf, "=== start %s %s at %s\n", filepath.Base(bin), strings.Join(args, " "), time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &groupProc{cmd: cmd, log: logf, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logf.Close(); close(p.done) }()
	return p, nil
}

// kill SIGKILLs the process, its group and the groups of all its
// descendants, and waits for it to be reaped. The shell tool puts each
// command in a process group of its own, so killing the worker's group
// alone would leave a running tool behind; a real crash of the machine
// would not. The worker is stopped first so it cannot start another child
// between the scan and the kill. It returns the descendants it killed.
func (p *groupProc) kill() []int {
	pid := p.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGSTOP)
	desc := descendants(pid)
	for _, d := range desc {
		if g, err := syscall.Getpgid(d); err == nil && g != pid {
			_ = syscall.Kill(-g, syscall.SIGKILL)
		}
		_ = syscall.Kill(d, syscall.SIGKILL)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
	return desc
}

// stop asks the process to exit (SIGTERM), and kills it if it has not
// within 10 seconds.
func (p *groupProc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.kill()
	}
}

// descendants lists every process below pid, children first.
func descendants(pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		kids := childrenOf(queue[:1])
		queue = append(queue[1:], kids...)
		out = append(out, kids...)
	}
	return out
}

// tailFile returns the last n bytes of a file, for failure reports.
func tailFile(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		_, _ = f.Seek(fi.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

var devserverReady = regexp.MustCompile(`devserver ready: temporal=(\S+)`)

// startDevserver starts a devserver of the test's own on an SQLite file
// (or, under LONGRUN_POSTGRES_URL, a PostgreSQL database named after it)
// and returns it with its frontend address once it says it is ready.
// port 0 picks a free port; a restart passes the first run's port so
// workers and clients already dialled to it reconnect.
func startDevserver(db string, port int, logPath string) (*groupProc, string, error) {
	// The devserver picks free ports for its HTTP API and internal services
	// at each start (listen on :0, close, bind later); on a busy machine an
	// outgoing connection of another test can take one in between, and the
	// server then exits with "bind: address already in use". That is the
	// machine's race, not the server's state: try again, a few times.
	var (
		p    *groupProc
		addr string
		err  error
	)
	for attempt := 0; attempt < 4; attempt++ {
		p, addr, err = startDevserverOnce(db, port, logPath)
		if err == nil || !strings.Contains(err.Error(), "address already in use") {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 500 * time.Millisecond)
	}
	return p, addr, err
}

func startDevserverOnce(db string, port int, logPath string) (*groupProc, string, error) {
	store, err := devserverStoreArgs(db)
	if err != nil {
		return nil, "", err
	}
	return startDevserverArgs(logPath, append(store, "--port", strconv.Itoa(port), "--ui-port", "0")...)
}

// startDevserverArgs starts the devserver with args, its output going to
// logPath, and waits for its readiness line.
func startDevserverArgs(logPath string, args ...string) (*groupProc, string, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(devserverPath, args...)
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, "", err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, "", fmt.Errorf("start devserver: %w", err)
	}
	p := &groupProc{cmd: cmd, log: logf, done: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if m := devserverReady.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m[1]
			}
		}
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	select {
	case addr := <-ready:
		return p, addr, nil
	case <-p.done:
		return nil, "", fmt.Errorf("devserver exited before it was ready:\n%s", tailFile(logPath, 4000))
	case <-time.After(120 * time.Second):
		p.kill()
		return nil, "", fmt.Errorf("devserver not ready after 120s:\n%s", tailFile(logPath, 4000))
	}
}
