package toolsearch

import (
	_ "embed"

	"github.com/longrun/longrun/toolspec"
)

// SearchName is the name the model calls the tool search by.
const SearchName = "tool_search"

// DefaultLimit is how many tools a search returns when the model gives no
// limit (Codex's default); MaxLimit bounds what it may ask for, since every
// spec returned is loaded into its context from then on.
const (
	DefaultLimit = 8
	MaxLimit     = 20
)

//go:embed tool_search.md
var searchDescription string

// SearchParams are the arguments of a tool_search call.
type SearchParams struct {
	Query string `json:"query" jsonschema:"The capability you need, in a few words: what it acts on and what it does."`
	Limit int    `json:"limit,omitempty" jsonschema:"How many tools to return; default 8."` // 0: DefaultLimit
}

// SearchSpec describes the tool_search tool the session offers when some
// tools are deferred. The session, not a worker, answers it from an Index
// over the deferred tools, so it is read-only and shared.
func SearchSpec() toolspec.Spec {
	return toolspec.Spec{
		Name:        SearchName,
		Description: searchDescription,
		Parameters: toolspec.ParamsSchema[SearchParams](func(p toolspec.ParamProps) {
			toolspec.NonEmpty(p["query"])
			toolspec.Between(p["limit"], 1, 20)
		}),
		ReadOnly:       true,
		TimeoutSeconds: 10,
		Concurrency:    toolspec.ConcurrencyShared,
	}
}
