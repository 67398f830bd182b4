package tools

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/longrun/longrun/toolspec"
)

// The argument schemas of the built-ins are generated from their Params
// structs by toolspec.ParamsSchema; these are its names as the tool files
// write them.

type paramProps = toolspec.ParamProps

func paramsSchema[P any](bound func(paramProps)) json.RawMessage {
	return toolspec.ParamsSchema[P](bound)
}

func nonEmpty(s *jsonschema.Schema)                      { toolspec.NonEmpty(s) }
func atLeast(s *jsonschema.Schema, minimum int)          { toolspec.AtLeast(s, minimum) }
func between(s *jsonschema.Schema, minimum, maximum int) { toolspec.Between(s, minimum, maximum) }
func oneOf(s *jsonschema.Schema, values ...string)       { toolspec.OneOf(s, values...) }
