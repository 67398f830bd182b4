package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/longrun/longrun/untrusted"
)

// chatIdleDefault is how long a session chat starts waits for the next
// message once the model stops, when --idle-timeout is not given: a chat
// goes on after an answer (start's default, 0, ends the session then).
const chatIdleDefault = time.Hour

// cmdChat is `longrun chat [SESSION]`: a full-screen conversation with a
// session in the person's terminal. With no SESSION the first message
// typed starts one where chat runs, the way start does (start's session
// flags apply); with SESSION it attaches and replays what the session's
// event stream keeps. Leaving it (Ctrl-D) leaves the session running.
func (a *app) cmdChat(ctx context.Context, fs *flag.FlagSet, args []string) error {
	sf := bindSessionFlags(fs)
	var o startOptions
	fs.StringVar(&o.id, "id", "", "the new session's id (default session-<timestamp>-<random>)")
	noColor := fs.Bool("no-color", false, "no colours (also env NO_COLOR)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("chat takes at most one SESSION (type the first message in the chat), not %q", strings.Join(pos[1:], " "))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	session := ""
	if len(pos) == 1 {
		session = pos[0]
		for _, name := range sessionFlagNames() {
			if set[name] {
				return usagef("--%s shapes a new session; chat %s attaches to one that exists", name, untrusted.Token(session))
			}
		}
	} else {
		if !set["idle-timeout"] {
			sf.idle = chatIdleDefault
		}
		// The flags are checked before the screen opens; the prompt is
		// the first message typed.
		if _, err := sf.input("-"); err != nil {
			return err
		}
	}
	if a.cfg.JSON {
		return usagef("chat is for a person at a terminal; scripts use start, events --follow, send, approve and deny")
	}
	if !a.terminal(a.stdin) || !a.terminal(a.stdout) {
		return usagef("chat needs a terminal on stdin and stdout; scripts use start, events --follow, send, approve and deny")
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := newChatModel(ctx, a, c, session)
	m.color = !*noColor && a.getenv("NO_COLOR") == ""
	m.newSession = func(prompt string) (startOptions, error) {
		o := o
		in, err := sf.input(prompt)
		o.input = in
		return o, err
	}
	m.workdirSet = set["workdir"]
	p := tea.NewProgram(m, tea.WithInput(a.stdin), tea.WithOutput(a.stdout), tea.WithContext(ctx))
	m.send = p.Send
	_, err = p.Run()
	cancel()
	m.wg.Wait()
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("chat: %w", err)
	}
	return m.farewell(a.stdout)
}

// sessionFlagNames are the flags that shape a new session (start's).
func sessionFlagNames() []string {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	bindSessionFlags(fs)
	fs.String("id", "", "")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// farewell is what chat leaves on the terminal once its screen is gone:
// how to come back to a session that goes on, or how it ended.
func (m *chatModel) farewell(w io.Writer) error {
	switch {
	case m.session == "":
		return nil
	case m.closed != "":
		fmt.Fprintf(w, "session %s %s\n", untrusted.Token(m.session), untrusted.Token(m.closed))
		if m.closed != "completed" {
			return exitError{code: exitFailure}
		}
		return nil
	}
	fmt.Fprintf(w, "detached from %s; it keeps running. Reattach with: %s chat %s\n", untrusted.Token(m.session), progName, shellQuote(m.session))
	return nil
}

// notes is an io.Writer that hands each line written to it to the chat as
// a note: the CLI's own helpers (sendDecision, describeStart) write their
// words there instead of over the screen.
type notes struct {
	mu   sync.Mutex
	part string
	send func(tea.Msg)
}

func (n *notes) Write(p []byte) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.part + string(p)
	lines := strings.Split(s, "\n")
	n.part = lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		if strings.TrimSpace(l) != "" {
			n.send(noteMsg(l))
		}
	}
	return len(p), nil
}
