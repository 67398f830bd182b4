// Package mcptest holds a stdio MCP server for tests that must start one
// as a command (through a worker's mcp.json, in a sandbox, in a
// directory of its own), where a test binary cannot serve itself.
package mcptest

import (
	"os"
	"os/exec"
	"testing"
)

// ProbeServer is a stdio MCP server in Python (standard library only)
// with one read-only tool, "cwd", that answers "cwd <working directory>
// pid <its pid> probe <text of ./probe.txt>" (or "no probe.txt"): what a
// test needs to see where a server runs, and which process it is.
const ProbeServer = `
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    meth = m.get("method")
    if meth == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "probe", "version": "0"}}
    elif meth == "tools/list":
        r = {"tools": [{"name": "cwd", "description": "Reports the working directory and the text of its probe.txt.", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}]}
    elif meth == "tools/call":
        try:
            p = open("probe.txt").read()
        except OSError:
            p = "no probe.txt"
        r = {"content": [{"type": "text", "text": "cwd %s pid %d probe %s" % (os.getcwd(), os.getpid(), p)}]}
    elif meth == "ping":
        r = {}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "no method " + str(meth)}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
`

// Python is the python3 to run ProbeServer with: the system's first,
// since a sandboxed server sees no home directory (where pyenv's and
// the like live); the test is skipped, loudly, where there is none.
func Python(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("SKIPPED LOUDLY: the probe MCP server is a python3 script, and python3 is not installed: %v", err)
	}
	return p
}
