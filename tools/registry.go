package tools

import (
	"fmt"
	"sort"
)

// Registry holds the tools a worker offers, by name.
type Registry struct {
	byName map[string]Tool
}

// NewRegistry returns a registry of the given tools. Two tools with one name
// is a programming error.
func NewRegistry(ts ...Tool) *Registry {
	r := &Registry{byName: map[string]Tool{}}
	for _, t := range ts {
		name := t.Spec().Name
		if _, dup := r.byName[name]; dup {
			panic(fmt.Sprintf("tools: duplicate tool %q", name))
		}
		r.byName[name] = t
	}
	return r
}

// Lookup returns the tool with that name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Specs returns every tool's spec, sorted by name so the catalog sent to the
// model (and recorded in history) is stable.
func (r *Registry) Specs() []Spec {
	out := make([]Spec, 0, len(r.byName))
	for _, t := range r.byName {
		out = append(out, t.Spec())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
