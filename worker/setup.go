package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/tools"
)

// setupFlags are the repositories' setup commands (--setup, repeatable;
// LONGRUN_SETUP, one entry a line) and their bound (--setup-timeout).
// An entry is COMMAND, for every repository, or /REPO=COMMAND, for the
// repository whose top directory is /REPO.
type setupFlags struct {
	entries []string
	set     bool
	timeout time.Duration
	keep    time.Duration
	cfg     activities.SetupConfig
}

// String and Set make setupFlags a repeatable flag: the first --setup
// replaces what LONGRUN_SETUP gave.
func (s *setupFlags) String() string { return strings.Join(s.entries, "\n") }

func (s *setupFlags) Set(v string) error {
	if !s.set {
		s.entries, s.set = nil, true
	}
	s.entries = append(s.entries, v)
	return nil
}

// bind adds the setup flags, each defaulting to its variable.
func (s *setupFlags) bind(fs *flag.FlagSet, getenv func(string) string) error {
	for _, line := range strings.Split(getenv("LONGRUN_SETUP"), "\n") {
		if strings.TrimSpace(line) != "" {
			s.entries = append(s.entries, line)
		}
	}
	fs.Var(s, "setup", "a command run in each new checkout of a repository before the session's first model call (e.g. 'go mod download', 'npm ci'), in the sandbox with the network on; /REPO=COMMAND for the repository whose top directory is /REPO, COMMAND for every other; repeatable. What it downloads into Go's module cache is kept per hash of the lockfiles and reused read-only by later sessions (env LONGRUN_SETUP, one entry a line)")
	timeout, err := envDuration(getenv, "LONGRUN_SETUP_TIMEOUT", activities.DefaultSetupTimeout, "20m", "")
	if err != nil {
		return err
	}
	fs.DurationVar(&s.timeout, "setup-timeout", timeout, "longest a setup command (--setup) may run; past it it is stopped and the session goes on without it (env LONGRUN_SETUP_TIMEOUT)")
	keep, err := envDuration(getenv, "LONGRUN_SETUP_KEEP", activities.DefaultSetupKeep, "720h", "keep every layer")
	if err != nil {
		return err
	}
	fs.DurationVar(&s.keep, "setup-keep", keep, "how long a setup layer (--setup) no session made or reused stays; older ones no checkout uses are removed when the worker starts and when a new layer is made; 0 keeps them all (env LONGRUN_SETUP_KEEP)")
	return nil
}

// parse reads the entries into commands by repository.
func (s *setupFlags) parse() error {
	if s.keep < 0 {
		return fmt.Errorf("--setup-keep %s: want 0 (keep every layer) or more", s.keep)
	}
	s.cfg = activities.SetupConfig{Timeout: s.timeout, Keep: s.keep}
	for _, e := range s.entries {
		repo, cmd := splitSetup(e)
		if strings.TrimSpace(cmd) == "" {
			return fmt.Errorf("--setup %q: no command", e)
		}
		if s.cfg.Commands == nil {
			s.cfg.Commands = map[string]string{}
		}
		if _, dup := s.cfg.Commands[repo]; dup {
			if repo == "" {
				return fmt.Errorf("--setup %q: a second command for every repository; name the repository (/REPO=COMMAND)", e)
			}
			return fmt.Errorf("--setup %q: a second command for %s", e, repo)
		}
		s.cfg.Commands[repo] = strings.TrimSpace(cmd)
	}
	return nil
}

// splitSetup reads /REPO=COMMAND: an entry whose text before the first
// "=" is an absolute path with no space names a repository; any other is
// a command for every repository (so `GOFLAGS=-mod=mod go mod download`
// is a command).
func splitSetup(e string) (repo, cmd string) {
	before, after, ok := strings.Cut(e, "=")
	if ok && filepath.IsAbs(before) && !strings.ContainsAny(before, " \t") {
		return filepath.Clean(before), after
	}
	return "", e
}

// config is what activities get: nil without any command, so sessions
// issue no setup command; the sandbox is the tools'.
func (s *setupFlags) config(tcfg tools.Config) *activities.SetupConfig {
	if len(s.cfg.Commands) == 0 {
		return nil
	}
	c := s.cfg
	c.Sandbox = tcfg
	return &c
}
