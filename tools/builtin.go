package tools

// Config configures the built-in tools; the worker fills it from its own
// configuration.
type Config struct {
	Shell ShellConfig
}

// DefaultConfig returns the configuration used when the worker sets none.
func DefaultConfig() Config {
	return Config{Shell: DefaultShellConfig()}
}

// Builtin returns the built-in tools. It is one explicit list, not init()
// registration, so what a worker offers is visible in one place.
func Builtin(cfg Config) []Tool {
	return []Tool{
		NewRead(),
		NewList(),
		NewGlob(),
		NewGrep(),
		NewWrite(),
		NewEdit(),
		NewApplyPatch(),
		NewShell(cfg.Shell),
	}
}
