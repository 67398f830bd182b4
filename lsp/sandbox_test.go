package lsp_test

import (
	"github.com/longrun/longrun/lsp"
	"github.com/longrun/longrun/tools"
)

// init runs this package's language-server tests in the sandbox a
// worker runs servers in (tools.LanguageServerLaunch), where one works
// here; elsewhere as plain children (the sandbox mode off path).
func init() {
	mode := tools.SandboxAuto
	if ok, _, _ := tools.CheckSandbox(tools.ShellConfig{Sandbox: mode}); !ok {
		mode = tools.SandboxOff
	}
	lsp.SetTestLaunch(tools.LanguageServerLaunch(tools.Config{Shell: tools.ShellConfig{Sandbox: mode}}))
}
