package workflows

import (
	"encoding/json"
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
	"github.com/longrun/longrun/toolsearch"
	"github.com/longrun/longrun/toolspec"
)

// What the model sees each turn. Tools cost context, so a large catalog
// (MCP servers) is mostly deferred: not sent until the model finds it
// with tool_search, after which it is sent for the rest of the session.
// Hidden tools are never sent. Only name, description and parameters ever
// reach the model (activities.ToolDef); exposure, concurrency, timeouts
// and the rest of the spec stay here.

// hasDeferred reports whether the catalog defers any tool.
func hasDeferred(specs []toolspec.Spec) bool {
	for _, sp := range specs {
		if sp.Exposure == toolspec.ExposureDeferred {
			return true
		}
	}
	return false
}

// exposedDefs are the tool definitions the next request carries: the
// session's visible tools minus deferred ones not yet found and hidden
// ones.
func (s *driver) exposedDefs() []activities.ToolDef {
	out := make([]activities.ToolDef, 0, len(s.cat.toolDefs))
	for _, d := range s.cat.toolDefs {
		switch s.cat.specs[d.Name].Exposure {
		case toolspec.ExposureHidden:
		case toolspec.ExposureDeferred:
			if s.Loaded[d.Name] {
				out = append(out, d)
			}
		default:
			out = append(out, d)
		}
	}
	return out
}

// load marks deferred tools as found: they are sent from the next turn.
func (s *driver) load(names ...string) {
	for _, n := range names {
		if s.cat.specs[n].Exposure != toolspec.ExposureDeferred {
			continue
		}
		if s.Loaded == nil {
			s.Loaded = map[string]bool{}
		}
		s.Loaded[n] = true
	}
}

// toolSearchTool is tool_search, answered by the session from the catalog
// recorded at session start: a pure function of it, so the workflow
// answers without a worker and replays the same answer. Offered when the
// catalog defers some tool.
type toolSearchTool struct{}

func (toolSearchTool) offer(_ *driver, catalog []toolspec.Spec) bool { return hasDeferred(catalog) }

func (toolSearchTool) spec() toolspec.Spec { return toolsearch.SearchSpec() }

func (toolSearchTool) answer(_ workflow.Context, s *driver, cs callRef) (toolspec.Result, error) {
	return s.searchTools(cs.call().Arguments), nil
}

// searchTools finds deferred tools for the model and loads them.
func (s *driver) searchTools(args string) toolspec.Result {
	var p toolsearch.SearchParams
	if err := json.Unmarshal([]byte(args), &p); err != nil {
		return toolspec.Errorf("%s: %v", toolsearch.SearchName, err)
	}
	if p.Limit <= 0 {
		p.Limit = toolsearch.DefaultLimit
	}
	visible := map[string]bool{}
	for _, d := range s.cat.toolDefs {
		visible[d.Name] = true
	}
	var candidates []toolspec.Spec
	for _, n := range s.cat.Names() { // sorted: the index must be the same on replay
		if sp := s.cat.specs[n]; sp.Exposure == toolspec.ExposureDeferred && visible[n] {
			candidates = append(candidates, sp)
		}
	}
	found := toolsearch.New(candidates).Search(p.Query, p.Limit)
	if len(found) == 0 {
		return toolspec.Result{Content: fmt.Sprintf("no tool matches %q; try other words (what the tool does, or a service name)", p.Query)}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "found %d tools; they can be called from now on:\n", len(found))
	for _, sp := range found {
		s.load(sp.Name)
		fmt.Fprintf(&b, "- %s: %s\n", sp.Name, truncate(strings.ReplaceAll(sp.Description, "\n", " "), 200))
	}
	return toolspec.Result{Content: b.String()}
}
