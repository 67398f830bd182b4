package tools

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// pastaReadyTimeout bounds the wait for pasta to configure the sandbox's
// network.
const pastaReadyTimeout = 10 * time.Second

// pastaArgs are pasta's options for a sandbox, and why:
//
//   - --config-net: give the namespace an address, a route and the
//     host's MTU, so the command needs no setup of its own.
//   - -t/-u none: forward no host port into the sandbox.
//   - -T/-U none: forward none of the sandbox's loopback ports out to the
//     host's loopback (pasta's default maps them).
//   - --no-map-gw: the gateway address is not mapped to the host, which
//     would make the host's loopback services (the Temporal frontend, its
//     Web UI, a local model endpoint) one hop away.
//   - --foreground: pasta stays the worker's child, so it is killed when
//     the command ends (and with the worker, by Pdeathsig), never left
//     behind holding the namespace.
//   - --quiet: its notices are not the command's output.
var pastaArgs = []string{"--config-net", "--quiet", "--foreground",
	"-t", "none", "-u", "none", "-T", "none", "-U", "none", "--no-map-gw"}

// pastaProc is a running pasta, attached to one sandbox.
type pastaProc struct {
	cmd  *exec.Cmd
	done chan struct{}
	once sync.Once
}

// startPasta attaches user-mode networking to the network namespace of
// the sandbox whose init is pid, and returns once the namespace has a
// default route. The namespace is handed to pasta as an open file (fd 3):
// pasta drops its capabilities before opening a path, and opening another
// process's /proc/PID/ns/net then fails. As root, pasta needs --runas 0
// to keep the rights to configure the namespace; otherwise it joins the
// sandbox's user namespace as well.
func startPasta(bin string, pid int) (*pastaProc, error) {
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		return nil, fmt.Errorf("attach network: %w", err)
	}
	defer ns.Close()
	args := append([]string(nil), pastaArgs...)
	extra := []*os.File{ns}
	if os.Geteuid() == 0 {
		args = append(args, "--runas", "0")
	} else {
		userns, err := os.Open(fmt.Sprintf("/proc/%d/ns/user", pid))
		if err != nil {
			return nil, fmt.Errorf("attach network: %w", err)
		}
		defer userns.Close()
		extra = append(extra, userns)
		args = append(args, "--userns", "/proc/self/fd/4")
	}
	args = append(args, "--netns", "/proc/self/fd/3")
	out := newCappedBuffer(4096)
	cmd := exec.Command(bin, args...)
	cmd.ExtraFiles = extra
	cmd.Stdout = writerFunc(func(p []byte) (int, error) { out.Write(p); return len(p), nil })
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("attach network: start %s: %w", bin, err)
	}
	p := &pastaProc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	deadline := time.After(pastaReadyTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !hasDefaultRoute(pid) {
		select {
		case <-p.done:
			return nil, fmt.Errorf("attach network: pasta exited: %s", strings.TrimSpace(out.String()))
		case <-deadline:
			p.stop()
			return nil, fmt.Errorf("attach network: pasta did not configure the sandbox's network within %s: %s", pastaReadyTimeout, strings.TrimSpace(out.String()))
		case <-tick.C:
		}
	}
	return p, nil
}

// stop kills pasta and waits for it; the namespace it served is gone or
// going with the command.
func (p *pastaProc) stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
}

// hasDefaultRoute reports whether the network namespace of pid has an
// IPv4 or IPv6 default route on an interface other than loopback: pasta
// adds it last, once the interface is up and addressed.
func hasDefaultRoute(pid int) bool {
	if f, err := os.Open(fmt.Sprintf("/proc/%d/net/route", pid)); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 1 && fields[0] != "lo" && fields[1] == "00000000" {
				return true
			}
		}
	}
	if f, err := os.Open(fmt.Sprintf("/proc/%d/net/ipv6_route", pid)); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) == 10 && fields[9] != "lo" && fields[1] == "00" && strings.Trim(fields[0], "0") == "" {
				return true
			}
		}
	}
	return false
}

// writerFunc adapts a function to io.Writer.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
