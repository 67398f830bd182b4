package toolspec

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// paramsSchema returns the JSON Schema of a tool's arguments, generated
// from its Params struct P so each argument is described once, on its
// field: the json tag gives the property's name and makes it required
// unless it has omitempty, the jsonschema tag is its description, and
// unknown properties are refused. The library reads nothing else from
// tags, so bounds and enums are set by bound, on the generated schemas of
// the properties by name (see nonEmpty, atLeast, between, oneOf); bound
// may be nil. A Params struct the library cannot describe is a
// programming error and panics (every built-in's Spec runs in the tests).
//
// The top level is written as the hand-written schemas always had it:
// type, properties, required and additionalProperties, in that order,
// with required present even when empty (the library leaves an empty list
// out; TestBuiltinSpecs holds every tool to it).
func paramsSchema[P any](bound func(paramProps)) json.RawMessage {
	b, err := generateSchema[P](bound)
	if err != nil {
		panic(fmt.Sprintf("toolspec: parameter schema of %T: %v", *new(P), err))
	}
	return b
}

func generateSchema[P any](bound func(paramProps)) (json.RawMessage, error) {
	s, err := jsonschema.For[P](nil)
	if err != nil {
		return nil, err
	}
	if bound != nil {
		bound(s.Properties)
	}
	generated, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var top struct {
		Type                 string          `json:"type"`
		Properties           json.RawMessage `json:"properties"`
		Required             []string        `json:"required"`
		AdditionalProperties json.RawMessage `json:"additionalProperties"`
	}
	// Properties stays raw so it keeps the fields' order; a keyword
	// beyond these four would be lost, so it is refused.
	dec := json.NewDecoder(bytes.NewReader(generated))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&top); err != nil {
		return nil, err
	}
	if top.Properties == nil {
		top.Properties = json.RawMessage(`{}`)
	}
	if top.Required == nil {
		top.Required = []string{}
	}
	return json.Marshal(top)
}

// paramProps are the generated schemas of a Params struct's fields, by
// their JSON names.
type paramProps = map[string]*jsonschema.Schema

// nonEmpty requires a string property to have at least one character.
func nonEmpty(s *jsonschema.Schema) { s.MinLength = jsonschema.Ptr(1) }

// atLeast bounds an integer property from below.
func atLeast(s *jsonschema.Schema, minimum int) { s.Minimum = jsonschema.Ptr(float64(minimum)) }

// between bounds an integer property from both sides, inclusive.
func between(s *jsonschema.Schema, minimum, maximum int) {
	atLeast(s, minimum)
	s.Maximum = jsonschema.Ptr(float64(maximum))
}

// oneOf restricts a string property to the given values.
func oneOf(s *jsonschema.Schema, values ...string) {
	s.Enum = make([]any, len(values))
	for i, v := range values {
		s.Enum[i] = v
	}
}
