package mcp

import (
	"encoding/json"
	"errors"

	"github.com/longrun/longrun/tools"
)

// permissiveSchema takes any arguments object. It stands in for a schema
// the session's validator cannot compile, so the tool stays usable and the
// server, which has the real schema, judges the arguments.
var permissiveSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// parameters turns an MCP tool's input schema into Spec.Parameters the
// session accepts: an object schema (the model is always sent an arguments
// object, and OpenAI requires type object with properties) that
// tools.ValidateArguments compiles. Servers send schemas without "type",
// without "properties", or with nothing at all for a tool with no inputs.
// The bool reports whether the schema had to be replaced by the permissive
// one.
func parameters(name string, in any) (json.RawMessage, bool) {
	m, ok := in.(map[string]any)
	if !ok {
		// A server may hand back a schema in another Go shape; go through
		// JSON so only its content matters.
		if b, err := json.Marshal(in); err == nil {
			m = nil
			_ = json.Unmarshal(b, &m)
		}
	}
	if m == nil {
		return permissiveSchema, in != nil
	}
	out := make(map[string]any, len(m)+2)
	for k, v := range m {
		out[k] = v
	}
	if t, _ := out["type"].(string); t != "object" {
		out["type"] = "object"
	}
	if _, ok := out["properties"].(map[string]any); !ok {
		out["properties"] = map[string]any{}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return permissiveSchema, true
	}
	// Compile it the way the session will, with no arguments: a compile
	// failure is not an *ArgumentError.
	var ae *tools.ArgumentError
	if err := tools.ValidateArguments(tools.Spec{Name: name, Parameters: b}, "{}"); err != nil && !errors.As(err, &ae) {
		return permissiveSchema, true
	}
	return b, false
}
