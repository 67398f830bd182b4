package main

import (
	"flag"
	"os"

	"golang.org/x/term"
)

// watchUI is how watch talks to the person in front of it, decided once
// per command from the flags, the environment and whether stdin and stdout
// are terminals. The zero value is the plain, non-interactive output that
// pipes, logs and scripts get.
type watchUI struct {
	style
	// live draws the spinner: it rewrites its line with \r, which only
	// means something on a terminal.
	live bool
	// interactive asks y/n/f/s for each new approval on stdin.
	interactive bool
}

// uiFlags are the flags of watch and start --wait that choose the UI.
type uiFlags struct {
	interactive, noInteractive, noColor bool
}

func (a *app) uiFlags(fs *flag.FlagSet) *uiFlags {
	var f uiFlags
	fs.BoolVar(&f.interactive, "interactive", false, "prompt to approve or deny each new pending call, even when stdin or stdout is not a terminal")
	fs.BoolVar(&f.noInteractive, "no-interactive", false, "never prompt; only announce pending calls (default when stdin or stdout is not a terminal)")
	fs.BoolVar(&f.noColor, "no-color", false, "no colours on a terminal (also env NO_COLOR)")
	return &f
}

// resolveUI decides the UI. Colour and the spinner need stdout to be a
// terminal that understands escape codes (TERM=dumb does not); --json
// output is for programs and gets neither. Prompting needs a person at
// both ends: answers come from stdin and the question goes to stdout.
func (a *app) resolveUI(f *uiFlags) (watchUI, error) {
	if f.interactive && f.noInteractive {
		return watchUI{}, usagef("--interactive and --no-interactive contradict each other")
	}
	if f.interactive && a.cfg.JSON {
		return watchUI{}, usagef("--interactive cannot be combined with --json: the prompt would corrupt the JSON lines")
	}
	if a.cfg.JSON {
		return watchUI{}, nil
	}
	outTTY := a.terminal(a.stdout) && a.getenv("TERM") != "dumb"
	ui := watchUI{live: outTTY}
	ui.blocks = outTTY
	ui.color = outTTY && !f.noColor && a.getenv("NO_COLOR") == ""
	ui.interactive = f.interactive || !f.noInteractive && outTTY && a.terminal(a.stdin)
	return ui, nil
}

// terminal reports whether v (stdin or stdout) is a terminal; tests replace
// the check through a.isTerminal.
func (a *app) terminal(v any) bool {
	if a.isTerminal != nil {
		return a.isTerminal(v)
	}
	return isTerminalFile(v)
}

// isTerminalFile is true for an *os.File open on a terminal device.
func isTerminalFile(v any) bool {
	f, ok := v.(*os.File)
	return ok && f != nil && term.IsTerminal(int(f.Fd()))
}

// termWidth is the width of stdout's terminal, so the spinner line never
// wraps (a wrapped line cannot be erased with \r); 80 when unknown.
func (a *app) termWidth() int {
	if f, ok := a.stdout.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 80
}
