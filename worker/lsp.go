package main

import (
	"errors"
	"log/slog"
	"path/filepath"

	"github.com/longrun/longrun/lsp"
	"github.com/longrun/longrun/tools"
)

// openLSP reads lsp.json from the worker's configuration directory and
// adds the built-in gopls when it is on the PATH. It returns nil when no
// server is on: the worker then offers no lsp_* tools. A workspace cannot
// name a server: a server is a program this worker runs over the
// session's files, so only the worker's owner may choose it. Every server
// starts in the sandbox tcfg configures (tools.LanguageServerLaunch):
// where none works, servers are refused unless --sandbox is off.
func openLSP(configDir string, logger *slog.Logger, tcfg tools.Config) (*lsp.Manager, error) {
	var cfg lsp.Config
	file := ""
	if configDir != "" {
		file = filepath.Join(configDir, lsp.ConfigFile)
		var err error
		cfg, err = lsp.LoadConfig(file)
		switch {
		case errors.Is(err, lsp.ErrNoConfig):
			file = ""
		case err != nil:
			return nil, err
		}
	}
	cfg, err := cfg.WithDefaults(nil)
	if err != nil {
		return nil, err
	}
	if len(cfg.Names()) == 0 {
		logger.Info("no language servers (gopls is not on the PATH and lsp.json names none): no lsp_* tools, no diagnostics after edits")
		return nil, nil
	}
	cfg.Launch = tools.LanguageServerLaunch(tcfg)
	switch sandboxed, why, _ := tools.CheckSandbox(tcfg.Shell); {
	case sandboxed:
		logger.Info("language servers run sandboxed: the session's files read-only, no network, no cgo, the worker's files hidden")
	case tcfg.Shell.Sandbox == tools.SandboxOff:
		logger.Warn("language servers run unsandboxed, with the worker's rights (--sandbox off); cgo off and a minimal environment", "reason", why)
	default:
		logger.Warn("language servers are refused: they run only in the sandbox, and none works here (or run the worker with --sandbox off)", "reason", why)
	}
	m := lsp.NewManager(cfg)
	logger.Info("language servers (started per session on first use)", "config", file, "servers", cfg.Names(),
		"diagnostics_wait", m.DiagnosticsWait(), "idle_timeout", m.IdleTimeout())
	return m, nil
}
