// Package bad holds the comparisons TestNoDecisionOnAToolName must catch
// (TestNameComparisonsFound); it is never built.
package bad

import "github.com/longrun/longrun/permission"

type call struct{ Name, Tool string }

func decide(name string, c call, cs struct{ call call }) int {
	if name == permission.ShellTool { // 1
		return 1
	}
	if c.Tool != "shell" { // 2
		return 2
	}
	if "write" == cs.call.Name { // 3
		return 3
	}
	switch c.Name {
	case "shell": // 4
		return 4
	case "": // an empty name: not a decision on a tool
		return 0
	}
	switch {
	case cs.call.Name == tools.ShellName: // 5
		return 5
	}
	switch toolName := c.Tool; toolName {
	case TodoName, "read": // 6, 7
		return 6
	}
	if c.Name == "" || c.Name == c.Tool || name == DoomLoopTool {
		return 0 // emptiness, two names, the doom-loop rule name: fine
	}
	return 0
}
