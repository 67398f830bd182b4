package workflows

import (
	"sort"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract
	"github.com/longrun/longrun/toolspec"
)

// toolCatalog is the session's tools as this run loaded them
// (driver.loadCatalog): the worker's and the session's own, what the
// model was last sent, and the worker's default model. The driver holds
// it by value; the policy (session.Decide) reads it as a
// session.Catalog.
type toolCatalog struct {
	specs        map[string]toolspec.Spec
	self         map[string]answerer // the tools this session answers itself, by name
	toolDefs     []activities.ToolDef
	defaultModel string // the worker's LONGRUN_MODEL, from the catalog

	// toolsRef names toolsSent, the tool definitions a worker stored for
	// this run (ModelResponse.ToolsRef); not carried across continue-as-new,
	// so each run's history holds the catalog once.
	toolsRef  string
	toolsSent []activities.ToolDef
}

// Spec is the tool the model may call by name (session.Catalog): a hidden
// tool is the runtime's, never the model's.
func (c toolCatalog) Spec(name string) (toolspec.Spec, bool) {
	sp, ok := c.specs[name]
	return sp, ok && sp.Exposure != toolspec.ExposureHidden
}

// Names are the session's tool names, sorted (session.Catalog).
func (c toolCatalog) Names() []string {
	names := make([]string, 0, len(c.specs))
	for n := range c.specs {
		names = append(names, n)
	}
	sort.Strings(names) // map order is random; the text must replay
	return names
}
