package tools

import (
	"fmt"
	"sort"
)

// Registry holds the tools a worker offers, by name, with their specs.
// A spec is built once here: building one generates its JSON schema by
// reflection, which every call would otherwise pay (RunTool asks whether
// the tool edits files).
type Registry struct {
	byName map[string]Tool
	specs  map[string]Spec
}

// NewRegistry returns a registry of the given tools. Two tools with one name
// is a programming error.
func NewRegistry(ts ...Tool) *Registry {
	r := &Registry{byName: map[string]Tool{}, specs: map[string]Spec{}}
	for _, t := range ts {
		spec := t.Spec()
		if _, dup := r.byName[spec.Name]; dup {
			panic(fmt.Sprintf("tools: duplicate tool %q", spec.Name))
		}
		r.byName[spec.Name], r.specs[spec.Name] = t, spec
	}
	return r
}

// Spec returns the spec of the tool with that name, as built when the
// registry was made.
func (r *Registry) Spec(name string) (Spec, bool) {
	s, ok := r.specs[name]
	return s, ok
}

// Lookup returns the tool with that name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Specs returns every tool's spec, sorted by name so the catalog sent to the
// model (and recorded in history) is stable.
func (r *Registry) Specs() []Spec {
	out := make([]Spec, 0, len(r.specs))
	for _, s := range r.specs {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
