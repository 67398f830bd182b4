package activities

import (
	"encoding/json"

	"github.com/longrun/longrun/conversation"
)

// freeformInputKey is the argument a custom tool's raw input becomes when
// its schema does not name one.
const freeformInputKey = "input"

// freeformArguments fills in the JSON arguments of the calls to custom
// (freeform) tools in msg, which arrive as raw text (ToolCall.Freeform,
// e.g. a patch written to apply_patch's grammar): the tool validates and
// runs JSON like any other, so the text becomes the value of the one
// string property the tool's schema has (apply_patch's "patch"), or of
// "input". Freeform stays as it was, for the wire protocol to send back.
func freeformArguments(msg conversation.Message, defs []ToolDef) conversation.Message {
	for i, c := range msg.ToolCalls {
		if c.Freeform == "" || c.Arguments != "" {
			continue
		}
		key := freeformInputKey
		for _, d := range defs {
			if d.Name == c.Name {
				if k := soleStringProperty(d.Parameters); k != "" {
					key = k
				}
				break
			}
		}
		b, _ := json.Marshal(map[string]string{key: c.Freeform})
		msg.ToolCalls[i].Arguments = string(b)
	}
	return msg
}

// soleStringProperty is the name of a schema's only property when that
// property is a string, else "".
func soleStringProperty(schema json.RawMessage) string {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Properties) != 1 {
		return ""
	}
	for name, p := range s.Properties {
		if p.Type == "string" {
			return name
		}
	}
	return ""
}
