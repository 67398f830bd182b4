package toolcalls

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/longrun/longrun/conversation"
)

// FuzzParse checks what the session relies on for any reply text: no
// panic, every call's arguments a valid JSON object in valid UTF-8 (it goes
// into history and to the tool's validator), ids unique, known names only,
// and the same answer twice (the workflow replays it).
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"a.go\"}}\n</tool_call>",
		`<tool_call>{"name": "read", "arguments": "{\"path\": \"a\"}"}</tool_call>`,
		"<tool_call>\n<function=write>\n<parameter=path>\na\n</parameter>\n<parameter=content>\nfunc F[T any]() {}\n</parameter>\n</function>\n</tool_call>",
		"<function=read>\n<parameter=path>\na\n</parameter>\n</function>\n</tool_call>",
		"<function_calls>\n<invoke name=\"read\"><parameter name=\"path\">a &lt; &#x41;</parameter></invoke>\n<invoke name=\"x\"></invoke>\n</function_calls>",
		withNS("<NS:invoke name=\"shell\"><NS:parameter name=\"command\">ls</NS:parameter></NS:invoke>"),
		"<function=write>\n<parameter=content>\n<![CDATA[</parameter>]]>\n</parameter>\n<parameter=n>\n{\"a\": [1, 2e3]}\n</parameter>\n</function>",
		"<invoke name=\"read\"><parameter name=\"path\">a.go</invoke>",
		"<tool_call>\n<function=read>\n<parameter=path>\n",
		"text <b>bold</b> a < b && c",
		"<function=edit>\n<parameter=new>\n\xff\xfe\n</parameter>\n<parameter=j>\n[\"\xff\"]\n</parameter>\n</function>",
	} {
		f.Add(seed)
	}
	schemas := map[string]json.RawMessage{
		"read":  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}}}`),
		"write": json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}`),
		"edit":  json.RawMessage(`{"properties":{"new":{"type":["string","null"]}}}`),
		"shell": json.RawMessage(`not a schema`),
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, known := range []func(string) bool{nil, catalog} {
			calls, rest := Parse(text, known)
			check(t, text, calls, rest, known)
			again, rest2 := Parse(text, known)
			if len(again) != len(calls) || rest2 != rest {
				t.Fatalf("not deterministic: %d calls then %d", len(calls), len(again))
			}
			for i := range calls {
				if calls[i] != again[i] {
					t.Fatalf("not deterministic: %+v then %+v", calls[i], again[i])
				}
			}
		}
		calls, rest := ParseWith(text, schemas)
		check(t, text, calls, rest, func(n string) bool { _, ok := schemas[n]; return ok })
	})
}

func check(t *testing.T, text string, calls []conversation.ToolCall, rest string, known func(string) bool) {
	t.Helper()
	if len(rest) > len(text) {
		t.Fatalf("rest is longer than the text: %q", rest)
	}
	ids := map[string]bool{}
	for _, c := range calls {
		if !json.Valid([]byte(c.Arguments)) || !utf8.ValidString(c.Arguments) || c.Arguments[0] != '{' {
			t.Fatalf("arguments are not a JSON object in UTF-8: %q", c.Arguments)
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(c.Arguments), &obj); err != nil {
			t.Fatalf("arguments do not decode as an object: %q: %v", c.Arguments, err)
		}
		if known != nil && !known(c.Name) {
			t.Fatalf("call to unknown tool %q", c.Name)
		}
		if ids[c.ID] {
			t.Fatalf("id %s used twice", c.ID)
		}
		ids[c.ID] = true
	}
}
