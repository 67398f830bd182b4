package activities

import (
	"slices"
	"sync"
)

// toolDefsKept is how many sets of tool definitions a worker keeps
// decoded. A worker sees few: one per distinct tool list its sessions
// send (the built-ins, plus each MCP configuration, each plan-mode cut),
// so this holds them all while a set a session stopped using is dropped.
const toolDefsKept = 64

// toolDefsCache keeps the tool definitions stored under a reference,
// decoded, so a model call names its tools by ToolsRef without reading
// and decoding them again: before it, every call after a session's first
// read the definitions from the transcript store (a file read and a hash
// check, a decryption with --encryption-keys, a GET with an S3 store,
// on the way to the model) and decoded them, though a reference is the
// hash of its content and can never name other definitions. Its zero
// value is ready for use and safe for concurrent use.
type toolDefsCache struct {
	mu    sync.Mutex
	defs  map[string][]ToolDef
	order []string // references, least recently stored first
}

// get returns a copy of the slice kept under ref (the definitions'
// bytes are shared: no one changes them).
func (c *toolDefsCache) get(ref string) ([]ToolDef, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defs, ok := c.defs[ref]
	return slices.Clone(defs), ok
}

// put keeps defs under ref, dropping the oldest set past toolDefsKept.
func (c *toolDefsCache) put(ref string, defs []ToolDef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.defs == nil {
		c.defs = map[string][]ToolDef{}
	}
	if _, ok := c.defs[ref]; ok {
		return
	}
	c.defs[ref] = slices.Clone(defs)
	c.order = append(c.order, ref)
	if len(c.order) > toolDefsKept {
		delete(c.defs, c.order[0])
		c.order = slices.Delete(c.order, 0, 1)
	}
}
