package checkout

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"

	"github.com/longrun/longrun/gitsafe"
)

// batch is a git process answering requests on its stdin, one at a time.
type batch struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	errb bytes.Buffer
	name string
}

// startBatch starts git with args in dir, its stdin and stdout kept for
// requests.
func startBatch(ctx context.Context, dir string, args ...string) (*batch, error) {
	cmd, err := gitCmd(ctx, gitsafe.HostLocal, dir, nil, args...)
	if err != nil {
		return nil, err
	}
	b := &batch{cmd: cmd, name: "git " + strings.Join(args, " ")}
	cmd.Stderr = &b.errb
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", b.name, err)
	}
	b.in, b.out = in, bufio.NewReader(out)
	return b, nil
}

// line sends req and reads one line of answer.
func (b *batch) line(req []byte) (string, error) {
	if _, err := b.in.Write(req); err != nil {
		return "", b.fail(err)
	}
	l, err := b.out.ReadString('\n')
	if err != nil {
		return "", b.fail(err)
	}
	return strings.TrimSuffix(l, "\n"), nil
}

func (b *batch) fail(err error) error {
	b.close()
	if msg := strings.TrimSpace(b.errb.String()); msg != "" {
		return fmt.Errorf("%s: %s", b.name, msg)
	}
	return fmt.Errorf("%s: %w", b.name, err)
}

func (b *batch) close() {
	if b.in != nil {
		b.in.Close()
		b.in = nil
		b.cmd.Wait()
	}
}

// catFile reads objects through one git cat-file --batch.
type catFile struct{ *batch }

// get gives the object named name (an id, or HEAD), its type and body; a
// missing one is errFullLook.
func (c *catFile) get(name string) (string, []byte, error) {
	h, err := c.line([]byte(name + "\n"))
	if err != nil {
		return "", nil, err
	}
	f := strings.Fields(h)
	if len(f) != 3 {
		return "", nil, errFullLook // "<name> missing" or ambiguous
	}
	size, err := strconv.Atoi(f[2])
	if err != nil {
		return "", nil, fmt.Errorf("git cat-file: unexpected header %q", h)
	}
	body := make([]byte, size+1)
	if _, err := io.ReadFull(c.out, body); err != nil {
		return "", nil, c.fail(err)
	}
	return f[1], body[:size], nil
}

// openState starts git cat-file --batch and reads HEAD and the previous
// checkpoint through it: the checkpoint's state, as checkpointState.
func openState(ctx context.Context, dir, prev string) (*catFile, ckptState, error) {
	var st ckptState
	b, err := startBatch(ctx, dir, "cat-file", "--batch")
	if err != nil {
		return nil, st, err
	}
	c := &catFile{b}
	h, err := c.line([]byte("HEAD\n"))
	if err != nil {
		return c, st, err
	}
	f := strings.Fields(h)
	if len(f) != 3 || f[1] != "commit" {
		return c, st, errFullLook
	}
	if _, err := io.CopyN(io.Discard, c.out, mustAtoi(f[2])+1); err != nil {
		return c, st, c.fail(err)
	}
	st.head = f[0]
	typ, body, err := c.get(prev)
	if err != nil {
		return c, st, err
	}
	if typ != "commit" {
		return c, st, errFullLook
	}
	for _, l := range strings.Split(string(body), "\n") {
		if l == "" {
			break // the end of the headers
		}
		if v, ok := strings.CutPrefix(l, "tree "); ok {
			st.prevTree = v
		}
		if v, ok := strings.CutPrefix(l, "parent "); ok && st.prevParent == "" {
			st.prevParent = v
		}
	}
	if st.prevTree == "" || st.prevParent == "" {
		return c, st, errFullLook
	}
	return c, st, nil
}

func mustAtoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
