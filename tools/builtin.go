package tools

import "github.com/longrun/longrun/lsp"

// Config configures the built-in tools; the worker fills it from its own
// configuration.
type Config struct {
	Shell ShellConfig
	// Jobs holds the background jobs the shell starts and the job tools
	// act on. The worker makes one per process, so it can kill a session's
	// jobs when the session ends and every job at shutdown; nil gives the
	// tools a private one nobody else can reach (tests, tools listings).
	Jobs *Jobs
	// StateDir is the worker's own state directory ($XDG_STATE_HOME/longrun
	// or --state-dir): tool-output spills and job logs live under it, per
	// session, where no sandbox mounts and no file tool can name them.
	// Empty keeps them in a private temporary directory (tests).
	StateDir string
	// Files are the sessions' files beneath StateDir (spills, job logs)
	// with their quota; the worker makes them so its reaper can delete an
	// ended session's. Nil: the tools make their own from StateDir and
	// Shell.SessionQuotaBytes.
	Files *SessionFiles
	// ConfigDir is the worker's own configuration directory (--config:
	// mcp.json, permissions.json, trusted.json). Like StateDir it is
	// hidden inside every sandbox, so no command reads the worker's rules
	// or the secrets an mcp.json may hold. Empty: none to hide.
	ConfigDir string
	// HidePaths are the other files and directories the worker knows
	// about, hidden like StateDir inside every sandbox (shell commands,
	// jobs, language servers, MCP servers): the encryption keys, a
	// checkpoint remote that is a path, the transcript store, TLS
	// certificates and keys, the Temporal config file, every existing
	// path the worker's flags and LONGRUN_* / TEMPORAL_* environment
	// name. Absolute; the worker leaves out what commands need (the
	// workspace, system directories, programs).
	HidePaths []string
	// Skills is where the skill tool finds skills besides the workspace.
	Skills SkillConfig
	// Web configures web_fetch and web_search (absent without a search
	// provider).
	Web WebConfig
	// LSP holds the worker's language servers; nil: no lsp_* tools.
	LSP *lsp.Manager
}

// DefaultConfig returns the configuration used when the worker sets none.
func DefaultConfig() Config {
	return Config{Shell: DefaultShellConfig()}
}

// Builtin returns the built-in tools. It is one explicit list, not init()
// registration, so what a worker offers is visible in one place. New tools
// are appended: the order is part of what models and recorded histories
// see.
func Builtin(cfg Config) []Tool {
	jobs := cfg.Jobs
	if jobs == nil {
		jobs = NewJobs()
	}
	shell := NewShell(cfg.Shell)
	shell.jobs = jobs
	if cfg.Files != nil {
		shell.state = cfg.Files.d
	} else {
		shell.state = NewSessionFiles(cfg.StateDir, shell.cfg.SessionQuotaBytes).d
	}
	shell.stateDir = cfg.StateDir
	shell.configDir = cfg.ConfigDir
	shell.hidePaths = cfg.HidePaths
	ts := []Tool{
		NewRead(),
		NewList(),
		NewGlob(),
		NewGrep(),
		NewWrite(),
		NewEdit(),
		NewApplyPatch(),
		shell,
		NewJobOutput(jobs, shell.cfg.OutputLimit),
		NewJobList(jobs),
		NewJobKill(jobs),
		NewSkill(cfg.Skills),
		NewWebFetch(cfg.Web),
	}
	if cfg.Web.Search.URL != "" {
		ts = append(ts, NewWebSearch(cfg.Web))
	}
	if cfg.LSP != nil {
		ts = append(ts, LSPTools(cfg.LSP)...)
	}
	return ts
}
