package workflows

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/tools"
	"github.com/longrun/longrun/toolsearch"
)

// What the model sees each turn. Tools cost context, so a large catalog
// (MCP servers) is mostly deferred: not sent until the model finds it
// with tool_search, after which it is sent for the rest of the session.
// Hidden tools are never sent. Only name, description and parameters ever
// reach the model (activities.ToolDef); exposure, concurrency, timeouts
// and the rest of the spec stay here.

// hasDeferred reports whether the catalog defers any tool.
func hasDeferred(specs []tools.Spec) bool {
	for _, sp := range specs {
		if sp.Exposure == tools.ExposureDeferred {
			return true
		}
	}
	return false
}

// exposedDefs are the tool definitions the next request carries: the
// session's visible tools minus deferred ones not yet found and hidden
// ones.
func (s *session) exposedDefs() []activities.ToolDef {
	out := make([]activities.ToolDef, 0, len(s.toolDefs))
	for _, d := range s.toolDefs {
		switch s.specs[d.Name].Exposure {
		case tools.ExposureHidden:
		case tools.ExposureDeferred:
			if s.loaded[d.Name] {
				out = append(out, d)
			}
		default:
			out = append(out, d)
		}
	}
	return out
}

// load marks deferred tools as found: they are sent from the next turn.
func (s *session) load(names ...string) {
	for _, n := range names {
		if s.specs[n].Exposure != tools.ExposureDeferred {
			continue
		}
		if s.loaded == nil {
			s.loaded = map[string]bool{}
		}
		s.loaded[n] = true
	}
}

// runToolSearch answers tool_search from the catalog recorded at session
// start: a pure function of it, so the workflow answers without a worker
// and replays the same answer.
func (s *session) runToolSearch(c conversation.ToolCall) tools.Result {
	var p toolsearch.SearchParams
	if err := json.Unmarshal([]byte(c.Arguments), &p); err != nil {
		return tools.Errorf("tool_search: %v", err)
	}
	if p.Limit <= 0 {
		p.Limit = toolsearch.DefaultLimit
	}
	visible := map[string]bool{}
	for _, d := range s.toolDefs {
		visible[d.Name] = true
	}
	names := make([]string, 0, len(s.specs))
	for n := range s.specs {
		names = append(names, n)
	}
	sort.Strings(names) // map order is random; the index must be the same on replay
	var candidates []tools.Spec
	for _, n := range names {
		if sp := s.specs[n]; sp.Exposure == tools.ExposureDeferred && visible[n] {
			candidates = append(candidates, sp)
		}
	}
	found := toolsearch.New(candidates).Search(p.Query, p.Limit)
	if len(found) == 0 {
		return tools.Result{Content: fmt.Sprintf("no tool matches %q; try other words (what the tool does, or a service name)", p.Query)}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "found %d tools; they can be called from now on:\n", len(found))
	for _, sp := range found {
		s.load(sp.Name)
		fmt.Fprintf(&b, "- %s: %s\n", sp.Name, truncate(strings.ReplaceAll(sp.Description, "\n", " "), 200))
	}
	return tools.Result{Content: b.String()}
}
