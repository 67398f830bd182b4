package main

import (
	"errors"
	"log/slog"
	"path/filepath"

	"github.com/longrun/longrun/lsp"
)

// openLSP reads lsp.json from the worker's configuration directory and
// adds the built-in gopls when it is on the PATH. It returns nil when no
// server is on: the worker then offers no lsp_* tools. A workspace cannot
// name a server: a server is a program this worker runs outside the
// sandbox, so only the worker's owner may choose it.
func openLSP(configDir string, logger *slog.Logger) (*lsp.Manager, error) {
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
	m := lsp.NewManager(cfg)
	logger.Info("language servers (started per session on first use)", "config", file, "servers", cfg.Names(),
		"diagnostics_wait", m.DiagnosticsWait(), "idle_timeout", m.IdleTimeout())
	return m, nil
}
