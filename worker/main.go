// Command worker runs Longrun's session workflow and its activities: it
// dials Temporal, registers AgentSession, the model activity and the tool
// activities, and runs tools confined to the workspace root.
package main

import (
	"fmt"
	"os"
)

func main() {
	m, err := ParseFlags(os.Args[1:], os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(2)
	}
	if err := m.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}
