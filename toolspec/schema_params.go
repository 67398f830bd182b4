package toolspec

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
)

// ParamProps are the generated schemas of a Params struct's fields, by
// their JSON names (for ParamsSchema's bound).
type ParamProps = paramProps

// ParamsSchema generates a tool's argument schema from its Params struct,
// as every built-in's is (paramsSchema): the built-ins (package tools),
// the tools the session answers itself, tool_search.
func ParamsSchema[P any](bound func(ParamProps)) json.RawMessage { return paramsSchema[P](bound) }

// NonEmpty requires a string property to have at least one character.
func NonEmpty(s *jsonschema.Schema) { nonEmpty(s) }

// AtLeast bounds an integer property from below, inclusive.
func AtLeast(s *jsonschema.Schema, minimum int) { atLeast(s, minimum) }

// Between bounds an integer property from both sides, inclusive.
func Between(s *jsonschema.Schema, minimum, maximum int) { between(s, minimum, maximum) }

// OneOf restricts a string property to the given values.
func OneOf(s *jsonschema.Schema, values ...string) { oneOf(s, values...) }
