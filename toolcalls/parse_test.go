package toolcalls

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
)

// call is the part of a ToolCall a table row states; ids are tested apart.
type call struct{ name, args string }

func names(ns ...string) func(string) bool {
	set := map[string]bool{}
	for _, n := range ns {
		set[n] = true
	}
	return func(n string) bool { return set[n] }
}

var catalog = names("read", "write", "edit", "shell", "grep")

// withNS writes Claude's namespaced tags: NS: in a template becomes the
// prefix, so the prefix need not be spelled out in a literal.
func withNS(s string) string { return strings.ReplaceAll(s, "NS:", "antml"+":") }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func strip(calls []conversation.ToolCall) []call {
	var out []call
	for _, c := range calls {
		out = append(out, call{c.Name, c.Arguments})
	}
	return out
}

func TestParse(t *testing.T) {
	t.Parallel()
	goSource := "package main\n\nfunc Map[T any](xs []T, f func(T) T) []T {\n\tout := make([]T, 0, len(xs))\n\tfor _, x := range xs {\n\t\tif len(out) < 3 && x != nil {\n\t\t\tout = append(out, f(x))\n\t\t}\n\t}\n\treturn out\n}"
	cases := []struct {
		name  string
		text  string
		known func(string) bool // catalog when nil
		want  []call
		rest  string
	}{
		{
			name: "hermes",
			text: "<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"a.go\", \"limit\": 20}}\n</tool_call>",
			want: []call{{"read", `{"path":"a.go","limit":20}`}},
		},
		{
			name: "hermes with text before and after",
			text: "Let me look at it.\n<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"a.go\"}}\n</tool_call>\nThen I will fix it.",
			want: []call{{"read", `{"path":"a.go"}`}},
			rest: "Let me look at it.\n\nThen I will fix it.",
		},
		{
			name: "hermes arguments encoded as a string",
			text: `<tool_call>{"name": "read", "arguments": "{\"path\": \"a.go\"}"}</tool_call>`,
			want: []call{{"read", `{"path":"a.go"}`}},
		},
		{
			name: "hermes parameters key and no arguments",
			text: `<tool_call>{"name": "read", "parameters": {"path": "x"}}</tool_call><tool_call>{"name": "shell"}</tool_call>`,
			want: []call{{"read", `{"path":"x"}`}, {"shell", `{}`}},
		},
		{
			name: "hermes two objects in one block, a closing tag inside a string",
			text: "<tool_call>\n{\"name\": \"grep\", \"arguments\": {\"pattern\": \"</tool_call>\"}}\n{\"name\": \"read\", \"arguments\": {\"path\": \"b\"}}\n</tool_call>",
			want: []call{{"grep", `{"pattern":"</tool_call>"}`}, {"read", `{"path":"b"}`}},
		},
		{
			name: "hermes malformed JSON is left",
			text: "<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": }\n</tool_call> after",
			rest: "<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": }\n</tool_call> after",
		},
		{
			name: "hermes arguments not an object",
			text: `<tool_call>{"name": "read", "arguments": [1]}</tool_call>`,
			rest: `<tool_call>{"name": "read", "arguments": [1]}</tool_call>`,
		},
		{
			name: "qwen3-coder, indentation and blank lines kept",
			text: "I'll write it.\n<tool_call>\n<function=write>\n<parameter=path>\nmain.go\n</parameter>\n<parameter=content>\n" + goSource + "\n</parameter>\n</function>\n</tool_call>",
			want: []call{{"write", `{"path":"main.go","content":` + strings.ReplaceAll(strings.ReplaceAll(mustJSON(goSource), `\u003c`, "<"), `\u0026`, "&") + `}`}},
			rest: "I'll write it.",
		},
		{
			name: "qwen3-coder without the outer tag",
			text: "<function=read>\n<parameter=path>\nsrc/a.go\n</parameter>\n<parameter=offset>\n10\n</parameter>\n</function>",
			want: []call{{"read", `{"path":"src/a.go","offset":10}`}},
		},
		{
			name: "qwen3-coder missing only the opening tag",
			text: "<function=read>\n<parameter=path>\na\n</parameter>\n</function>\n</tool_call>\ndone",
			want: []call{{"read", `{"path":"a"}`}},
			rest: "done",
		},
		{
			name: "qwen3-coder two functions in one block",
			text: "<tool_call>\n<function=read>\n<parameter=path>\na\n</parameter>\n</function>\n<function=read>\n<parameter=path>\nb\n</parameter>\n</function>\n</tool_call>",
			want: []call{{"read", `{"path":"a"}`}, {"read", `{"path":"b"}`}},
		},
		{
			name: "HTML in a value",
			text: "<function=write>\n<parameter=path>\nindex.html\n</parameter>\n<parameter=content>\n<div class=\"a\">\n  <p>hi</p>\n  <parameter>not a tag</parameter>\n</div>\n</parameter>\n</function>",
			want: []call{{"write", `{"path":"index.html","content":"<div class=\"a\">\n  <p>hi</p>\n  <parameter>not a tag</parameter>\n</div>"}`}},
		},
		{
			name: "a closing parameter tag inside a value, not followed by a tag",
			text: "<function=write>\n<parameter=content>\nconst end = \"</parameter>\" // the close\n</parameter>\n</function>",
			want: []call{{"write", `{"content":"const end = \"</parameter>\" // the close"}`}},
		},
		{
			name: "a closing function tag inside a value is malformed outside CDATA",
			text: "<function=write>\n<parameter=content>\nx</function>y\n</parameter>\n</function> <function=write>\n<parameter=content>\n<![CDATA[x</function>y]]>\n</parameter>\n</function>",
			want: []call{{"write", `{"content":"x</function>y"}`}},
			rest: "<function=write>\n<parameter=content>\nx</function>y\n</parameter>\n</function>",
		},
		{
			name: "only one framing newline trimmed",
			text: "<function=write>\n<parameter=content>\n\n  indented\n\n</parameter>\n</function>",
			want: []call{{"write", `{"content":"\n  indented\n"}`}},
		},
		{
			name: "CRLF framing",
			text: "<function=read>\r\n<parameter=path>\r\na.go\r\n</parameter>\r\n</function>",
			want: []call{{"read", `{"path":"a.go"}`}},
		},
		{
			name: "invoke",
			text: `<invoke name="read"><parameter name="path">a.go</parameter><parameter name="limit">5</parameter></invoke>`,
			want: []call{{"read", `{"path":"a.go","limit":5}`}},
		},
		{
			name: "function_calls with two invokes and text around",
			text: "Reading both.\n<function_calls>\n<invoke name=\"read\">\n<parameter name=\"path\">a</parameter>\n</invoke>\n<invoke name='grep'>\n<parameter name=\"pattern\">func \\w+\\[T any\\]</parameter>\n</invoke>\n</function_calls>\nok",
			want: []call{{"read", `{"path":"a"}`}, {"grep", `{"pattern":"func \\w+\\[T any\\]"}`}},
			rest: "Reading both.\n\nok",
		},
		{
			name: "namespaced invoke tags",
			text: withNS("<NS:function_calls>\n<NS:invoke name=\"shell\">\n<NS:parameter name=\"command\">ls -la | head</NS:parameter>\n</NS:invoke>\n</NS:function_calls>"),
			want: []call{{"shell", `{"command":"ls -la | head"}`}},
		},
		{
			name: "a known and an unknown invoke: the unknown one stays in its wrapper",
			text: "<function_calls>\n<invoke name=\"read\"><parameter name=\"path\">a</parameter></invoke>\n<invoke name=\"browse\"><parameter name=\"url\">x</parameter></invoke>\n</function_calls>",
			want: []call{{"read", `{"path":"a"}`}},
			rest: "<function_calls>\n\n<invoke name=\"browse\"><parameter name=\"url\">x</parameter></invoke>\n</function_calls>",
		},
		{
			name: "entities decoded, other ampersands kept",
			text: `<invoke name="edit"><parameter name="new">if a &lt; b &amp;&amp; c &gt; d { s = &quot;it&#39;s&quot; + &apos;&#x41;&#66;&apos; } // a && b &nbsp; &#0; &#xZZ; &</parameter></invoke>`,
			want: []call{{"edit", `{"new":"if a < b && c > d { s = \"it's\" + 'AB' } // a && b &nbsp; &#0; &#xZZ; &"}`}},
		},
		{
			name: "entities in the name attribute",
			text: `<invoke name="&#114;ead"><parameter name="path">a</parameter></invoke>`,
			want: []call{{"read", `{"path":"a"}`}},
		},
		{
			name: "CDATA taken verbatim, even a closing tag inside",
			text: "<function=write>\n<parameter=content>\n<![CDATA[a &lt; b && </parameter>\n</function> c]]> &amp; d\n</parameter>\n</function>",
			want: []call{{"write", `{"content":"a &lt; b && </parameter>\n</function> c & d"}`}},
		},
		{
			name: "unknown tool left in the text",
			text: "Try this:\n<tool_call>{\"name\": \"browse\", \"arguments\": {\"url\": \"x\"}}</tool_call>",
			rest: "Try this:\n<tool_call>{\"name\": \"browse\", \"arguments\": {\"url\": \"x\"}}</tool_call>",
		},
		{
			name: "unknown function left, a known one after it taken",
			text: "<function=browse>\n<parameter=url>\nx\n</parameter>\n</function>\n<function=read>\n<parameter=path>\na\n</parameter>\n</function>",
			want: []call{{"read", `{"path":"a"}`}},
			rest: "<function=browse>\n<parameter=url>\nx\n</parameter>\n</function>",
		},
		{
			name: "unclosed block at the end is left",
			text: "Reading.\n<tool_call>\n<function=read>\n<parameter=path>\na.go\n</parameter>\n</function>\n",
			rest: "Reading.\n<tool_call>\n<function=read>\n<parameter=path>\na.go\n</parameter>\n</function>",
		},
		{
			name: "unclosed parameter is left",
			text: `<invoke name="read"><parameter name="path">a.go</invoke> and <invoke name="read"><parameter name="path">b</parameter></invoke>`,
			rest: `<invoke name="read"><parameter name="path">a.go</invoke> and`,
			want: []call{{"read", `{"path":"b"}`}},
		},
		{
			name: "stray text between parameters is malformed",
			text: "<function=read>\n<parameter=path>\na\n</parameter>\nand then\n</function>",
			rest: "<function=read>\n<parameter=path>\na\n</parameter>\nand then\n</function>",
		},
		{
			name: "JSON-looking values without a schema",
			text: "<function=edit>\n<parameter=n>\n20\n</parameter>\n<parameter=flag>\ntrue\n</parameter>\n<parameter=obj>\n{\"a\": [1, 2]}\n</parameter>\n<parameter=nil>\nnull\n</parameter>\n<parameter=q>\n\"q\"\n</parameter>\n<parameter=word>\ntruth\n</parameter>\n</function>",
			want: []call{{"edit", `{"n":20,"flag":true,"obj":{"a":[1,2]},"nil":"null","q":"\"q\"","word":"truth"}`}},
		},
		{
			name: "a parameter given twice keeps its first place and last value",
			text: `<invoke name="read"><parameter name="path">a</parameter><parameter name="limit">1</parameter><parameter name="path">b</parameter></invoke>`,
			want: []call{{"read", `{"path":"b","limit":1}`}},
		},
		{
			name:  "nil known accepts any name",
			text:  `<invoke name="mcp__docs__search"><parameter name="q">x</parameter></invoke>`,
			known: func(string) bool { return true },
			want:  []call{{"mcp__docs__search", `{"q":"x"}`}},
		},
		{
			name: "dialects mixed in one reply",
			text: "a\n<tool_call>{\"name\": \"read\", \"arguments\": {\"path\": \"1\"}}</tool_call>\nb\n<invoke name=\"read\"><parameter name=\"path\">two</parameter></invoke>\nc",
			want: []call{{"read", `{"path":"1"}`}, {"read", `{"path":"two"}`}},
			rest: "a\n\nb\n\nc",
		},
		{
			name: "prose with markup and no calls",
			text: "  Use <b>bold</b>, a < b, <invoker> and <function> freely.  ",
			rest: "Use <b>bold</b>, a < b, <invoker> and <function> freely.",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			known := tc.known
			if known == nil {
				known = catalog
			}
			calls, rest := Parse(tc.text, known)
			require.Equal(t, tc.want, strip(calls))
			require.Equal(t, tc.rest, rest)
			for _, c := range calls {
				require.True(t, json.Valid([]byte(c.Arguments)), c.Arguments)
			}
		})
	}
}

func TestParseWithSchemas(t *testing.T) {
	t.Parallel()
	schemas := map[string]json.RawMessage{
		"write": json.RawMessage(`{"type":"object","properties":{
			"path":{"type":"string"},
			"content":{"type":["string","null"]},
			"count":{"type":"integer"},
			"mode":{"type":["string","integer"]},
			"opts":{"type":"object"}}}`),
		"bare": nil,
	}
	text := "<function=write>\n<parameter=path>\n42\n</parameter>\n<parameter=content>\n{\"a\": 1}\n</parameter>\n<parameter=count>\n 7 \n</parameter>\n<parameter=mode>\n644\n</parameter>\n<parameter=opts>\nnot json\n</parameter>\n<parameter=extra>\ntrue\n</parameter>\n</function>\n" +
		"<function=bare>\n<parameter=n>\n1\n</parameter>\n</function>\n" +
		"<function=read>\n<parameter=path>\na\n</parameter>\n</function>"
	calls, rest := ParseWith(text, schemas)
	require.Equal(t, []call{
		// A string parameter stays a string however it looks; the others are
		// JSON when they parse; an unknown parameter is tried as JSON too.
		{"write", `{"path":"42","content":"{\"a\": 1}","count":7,"mode":644,"opts":"not json","extra":true}`},
		{"bare", `{"n":1}`},
	}, strip(calls))
	require.Equal(t, "<function=read>\n<parameter=path>\na\n</parameter>\n</function>", rest, "read is not in the schemas, so it is not known")
}

func TestParseIDs(t *testing.T) {
	t.Parallel()
	text := "<tool_call>{\"name\": \"read\", \"arguments\": {\"path\": \"a\"}}</tool_call>\n" +
		"<tool_call>{\"name\": \"read\", \"arguments\": {\"path\": \"a\"}}</tool_call>\n" +
		"<tool_call>{\"name\": \"read\", \"arguments\": {\"path\": \"b\"}}</tool_call>"
	calls, _ := Parse(text, catalog)
	require.Len(t, calls, 3)
	form := regexp.MustCompile(`^call_text_[0-9]+_[0-9a-f]{8}$`)
	seen := map[string]bool{}
	for i, c := range calls {
		require.Regexp(t, form, c.ID)
		require.True(t, strings.HasPrefix(c.ID, "call_text_"+string(rune('0'+i))+"_"), c.ID)
		require.False(t, seen[c.ID], "ids are unique within a text: %s", c.ID)
		seen[c.ID] = true
	}
	require.Equal(t, calls[0].ID[len("call_text_0_"):], calls[1].ID[len("call_text_1_"):], "same content, same hash")
	require.NotEqual(t, calls[1].ID[len("call_text_1_"):], calls[2].ID[len("call_text_2_"):], "other content, other hash")

	again, _ := Parse(text, catalog)
	require.Equal(t, calls, again, "a replay must see the same ids")

	prefixed, _ := ParseOptions(text, Options{Known: catalog, IDPrefix: "call_text_t3_"})
	require.Equal(t, "call_text_t3_"+calls[0].ID[len("call_text_"):], prefixed[0].ID)
}
