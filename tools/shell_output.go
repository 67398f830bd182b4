package tools

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"time"
)

// DefaultMaxSpillBytes caps the file one command's full output is saved
// to (ShellConfig.MaxSpillBytes): a command printing without end must not
// fill the worker's disk.
const DefaultMaxSpillBytes = 100 << 20

// spill keeps a command's full output for a person once the model's copy
// has to be cut. It holds the first limit bytes in memory and makes the
// file (beneath the state directory, see stateDir) only when the output
// outgrows them, so most commands write no file at all. Past max bytes
// the rest is counted and discarded: the reader keeps draining the pipe,
// so the command never blocks on a full one.
type spill struct {
	state   *stateDir
	session string
	limit   int
	max     int64

	mu      sync.Mutex
	pending []byte
	f       *os.File
	path    string
	written int64 // bytes in the file
	total   int64 // bytes the command printed
	err     error // the first failure to make or write the file
	// quotaCut: the session's quota (SessionFiles) ran out before the
	// output did.
	quotaCut bool
}

func newSpill(state *stateDir, session string, limit int, max int64) *spill {
	return &spill{state: state, session: session, limit: limit, max: max}
}

// Write takes the next output; it never fails, a failure is kept for the note.
func (s *spill) Write(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total += int64(len(p))
	if s.f == nil {
		if s.err != nil {
			return
		}
		if len(s.pending)+len(p) <= s.limit {
			s.pending = append(s.pending, p...)
			return
		}
		if s.f, s.path, s.err = s.create(); s.err != nil {
			s.pending = nil
			return
		}
		p = append(s.pending, p...)
		s.pending = nil
	}
	if s.err != nil {
		return
	}
	room := s.max - s.written
	if room <= 0 {
		return
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	if g := s.state.take(s.session, int64(len(p))); g < int64(len(p)) {
		p, s.quotaCut = p[:g], true
	}
	if len(p) == 0 {
		return
	}
	n, err := s.f.Write(p)
	s.written += int64(n)
	if err != nil {
		s.err = err
	}
}

// create makes the spill file, named so that two commands never share one.
func (s *spill) create() (*os.File, string, error) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := fmt.Sprintf("shell-%s-%s.log", time.Now().UTC().Format("20060102-150405"), hex.EncodeToString(b[:]))
	sf, err := s.state.sessionFile(s.session, stateSpillDir, name)
	if err != nil {
		return nil, "", err
	}
	f, err := sf.create()
	return f, sf.abs, err
}

// close closes the file and returns the note for the model when its copy
// was cut: how much was saved and where. The file is outside the
// workspace, where no tool reads, so the note says how to see more.
func (s *spill) close(truncated bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if truncated && s.f == nil && s.err == nil && len(s.pending) > 0 {
		// Cut by a hair less than limit (an odd limit): save what is held.
		if s.f, s.path, s.err = s.create(); s.err == nil {
			p := s.pending[:min(int64(len(s.pending)), s.max)]
			if g := s.state.take(s.session, int64(len(p))); g < int64(len(p)) {
				p, s.quotaCut = p[:g], true
			}
			n, err := s.f.Write(p)
			s.written, s.err = int64(n), err
		}
	}
	if s.f != nil {
		if err := s.f.Close(); err != nil && s.err == nil {
			s.err = err
		}
	}
	if !truncated {
		return ""
	}
	const where = "outside the workspace where tools cannot read it; to see the dropped part, rerun the command filtered (grep, sed -n, tail) or redirected to a file"
	switch {
	case s.f == nil && s.err != nil:
		return fmt.Sprintf("[full output not saved: %v]\n", s.err)
	case s.f == nil:
		return ""
	case s.quotaCut && s.written == 0:
		_ = os.Remove(s.path)
		return fmt.Sprintf("[%s; nothing of this command's full output (%d bytes) was saved]\n", s.state.quotaNote(), s.total)
	case s.quotaCut:
		return fmt.Sprintf("[%s; the command printed %d bytes, the first %d are saved to %s, %s]\n", s.state.quotaNote(), s.total, s.written, s.path, where)
	case s.err != nil:
		return fmt.Sprintf("[full output partly saved (%d bytes) to %s: %v]\n", s.written, s.path, s.err)
	case s.written < s.total:
		return fmt.Sprintf("[full output cut at %d bytes: the command printed %d, the rest was discarded; the first %d bytes are saved to %s, %s]\n",
			s.max, s.total, s.written, s.path, where)
	}
	return fmt.Sprintf("[full output (%d bytes) saved to %s, %s]\n", s.written, s.path, where)
}
