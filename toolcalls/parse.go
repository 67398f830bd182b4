// Package toolcalls recovers tool calls that a model wrote as text instead of
// in the API's tool-call field. Small and local models served without a
// tool-call parser (or with the wrong one) answer with the call in their own
// training format, and a session that ignored it would stall; qwen-code's
// xml-tool-call-fallback is the model for this. Three dialects are read:
//
//   - Hermes/Qwen: <tool_call>{"name": "read", "arguments": {"path": "a"}}</tool_call>
//   - Qwen3-coder: <tool_call><function=read><parameter=path>a</parameter></function></tool_call>,
//     also without the outer <tool_call>
//   - Anthropic/kimi: <invoke name="read"><parameter name="path">a</parameter></invoke>,
//     optionally inside <function_calls> (and with an antml: prefix)
//
// The package is pure and deterministic: the workflow calls it on a recorded
// reply, so the same text must give the same calls, ids included, on every
// replay.
package toolcalls

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/longrun/longrun/conversation"
)

// DefaultIDPrefix starts the id of every call recovered from text, so a
// person reading the conversation can tell it from a call the API carried.
const DefaultIDPrefix = "call_text_"

// Options tunes ParseOptions.
type Options struct {
	// Known reports whether a tool exists. A block calling anything else is
	// left in the text: a name the model made up is prose, not a call, and
	// answering it with unknown_tool would invite more of them. Nil knows
	// every name.
	Known func(name string) bool
	// Schemas maps a tool name to its parameters' JSON Schema. A parameter
	// the schema types as a string stays a string even when it looks like
	// JSON ("42", "true"); the rest are read as JSON when they parse.
	Schemas map[string]json.RawMessage
	// IDPrefix replaces DefaultIDPrefix. Ids are unique within one text
	// only; a caller that may parse the same text twice in a session (a
	// model repeating itself) passes a prefix naming the turn.
	IDPrefix string
}

// Parse returns the tool calls written in text whose tool known accepts
// (nil accepts every name), and the text with those calls removed and
// trimmed. Without schemas a parameter value that parses as a JSON number,
// boolean, object or array becomes that JSON value; use ParseWith when the
// tools' schemas are at hand.
func Parse(text string, known func(name string) bool) (calls []conversation.ToolCall, rest string) {
	return ParseOptions(text, Options{Known: known})
}

// ParseWith is Parse for a catalog given as tool name to parameter schema:
// only the names in schemas are known, and a parameter typed string stays a
// string.
func ParseWith(text string, schemas map[string]json.RawMessage) (calls []conversation.ToolCall, rest string) {
	return ParseOptions(text, Options{
		Known:   func(name string) bool { _, ok := schemas[name]; return ok },
		Schemas: schemas,
	})
}

// ParseOptions is Parse with every option. Blocks are taken in text order.
// A malformed block (unclosed, a parameter without its closing tag, JSON
// that does not parse) is left in the text whole, up to its closing tag or
// the end of the text, so nothing half-read becomes a call. In a block of
// several calls, the known ones are taken and the unknown ones stay.
func ParseOptions(text string, o Options) (calls []conversation.ToolCall, rest string) {
	p := &parser{s: text, o: o, kinds: map[string]map[string]bool{}}
	prefix := o.IDPrefix
	if prefix == "" {
		prefix = DefaultIDPrefix
	}
	var cuts []span // removed from the text, in order
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '<')
		if j < 0 {
			break
		}
		i += j
		op, ok := matchOpener(text, i)
		if !ok {
			i++
			continue
		}
		b, ok := op.parse(p, i)
		if !ok {
			i = skipPast(text, i, op.close)
			continue
		}
		all := true
		var taken []span
		for _, it := range b.items {
			if !p.known(it.name) {
				all = false
				continue
			}
			calls = append(calls, conversation.ToolCall{
				ID:        callID(prefix, len(calls), it.name, it.args),
				Name:      it.name,
				Arguments: it.args,
			})
			taken = append(taken, it.span)
		}
		if all {
			cuts = append(cuts, span{i, b.end})
		} else {
			cuts = append(cuts, taken...)
		}
		i = b.end
	}
	var out strings.Builder
	last := 0
	for _, c := range cuts {
		out.WriteString(text[last:c.start])
		last = c.end
	}
	out.WriteString(text[last:])
	return calls, strings.TrimSpace(out.String())
}

// callID derives the id from position and content: the workflow replays,
// so a random id would differ from the recorded one.
func callID(prefix string, n int, name, args string) string {
	sum := sha256.Sum256([]byte(name + "\x00" + args))
	return fmt.Sprintf("%s%d_%s", prefix, n, hex.EncodeToString(sum[:4]))
}

// skipPast returns the index after the first close at or after at, or the
// end of s: a malformed block is kept as text, and nothing inside it is
// read as a call of its own.
func skipPast(s string, at int, close string) int {
	if k := strings.Index(s[at+1:], close); k >= 0 {
		return at + 1 + k + len(close)
	}
	return len(s)
}

type span struct{ start, end int }

// item is one call read from a block.
type item struct {
	span
	name string
	args string // a JSON object
}

// block is one parsed block: a wrapper with its calls, or a lone call.
type block struct {
	end   int
	items []item
}

type parser struct {
	s     string
	o     Options
	kinds map[string]map[string]bool // tool -> parameter -> typed string only
}

func (p *parser) known(name string) bool { return p.o.Known == nil || p.o.Known(name) }

// opener is a tag that starts a block.
type opener struct {
	close string // the block's closing tag, to skip it when malformed
	parse func(p *parser, at int) (block, bool)
}

// namespaces are the tag prefixes of the invoke dialect: Claude's own tags
// carry antml:, and models trained on its transcripts copy them.
var namespaces = []string{"", "antml:"}

func matchOpener(s string, at int) (opener, bool) {
	rest := s[at:]
	switch {
	case strings.HasPrefix(rest, "<tool_call>"):
		return opener{"</tool_call>", (*parser).toolCall}, true
	case strings.HasPrefix(rest, "<function="):
		return opener{"</function>", (*parser).loneFunction}, true
	}
	for _, ns := range namespaces {
		if strings.HasPrefix(rest, "<"+ns+"function_calls>") {
			return opener{"</" + ns + "function_calls>", func(p *parser, at int) (block, bool) { return p.functionCalls(at, ns) }}, true
		}
		if hasTagPrefix(rest, "<"+ns+"invoke") {
			return opener{"</" + ns + "invoke>", func(p *parser, at int) (block, bool) { return p.loneInvoke(at, ns) }}, true
		}
	}
	return opener{}, false
}

// hasTagPrefix reports whether s starts with tag followed by white space,
// so <invoke name=...> matches and <invoker> does not.
func hasTagPrefix(s, tag string) bool {
	return strings.HasPrefix(s, tag) && len(s) > len(tag) && isSpace(s[len(tag)])
}

// toolCall parses <tool_call> holding Hermes JSON objects or Qwen3-coder
// functions, one or more.
func (p *parser) toolCall(at int) (block, bool) {
	const open, close = "<tool_call>", "</tool_call>"
	pos := at + len(open)
	var items []item
	for {
		pos = skipSpace(p.s, pos)
		rest := p.s[pos:]
		switch {
		case strings.HasPrefix(rest, close):
			return block{end: pos + len(close), items: items}, len(items) > 0
		case strings.HasPrefix(rest, "{"):
			it, ok := p.hermes(pos)
			if !ok {
				return block{}, false
			}
			items = append(items, it)
			pos = it.end
		case strings.HasPrefix(rest, "<function="):
			it, ok := p.function(pos)
			if !ok {
				return block{}, false
			}
			items = append(items, it)
			pos = it.end
		default:
			return block{}, false
		}
	}
}

// loneFunction parses a Qwen3-coder function without the outer tag, and
// swallows a stray </tool_call> after it: the model sometimes drops only
// the opening tag.
func (p *parser) loneFunction(at int) (block, bool) {
	it, ok := p.function(at)
	if !ok {
		return block{}, false
	}
	return block{end: swallowClose(p.s, it.end, "</tool_call>"), items: []item{it}}, true
}

// functionCalls parses <function_calls> holding one or more invokes.
func (p *parser) functionCalls(at int, ns string) (block, bool) {
	open, close := "<"+ns+"function_calls>", "</"+ns+"function_calls>"
	pos := at + len(open)
	var items []item
	for {
		pos = skipSpace(p.s, pos)
		rest := p.s[pos:]
		switch {
		case strings.HasPrefix(rest, close):
			return block{end: pos + len(close), items: items}, len(items) > 0
		case hasTagPrefix(rest, "<"+ns+"invoke"):
			it, ok := p.invoke(pos, ns)
			if !ok {
				return block{}, false
			}
			items = append(items, it)
			pos = it.end
		default:
			return block{}, false
		}
	}
}

func (p *parser) loneInvoke(at int, ns string) (block, bool) {
	it, ok := p.invoke(at, ns)
	if !ok {
		return block{}, false
	}
	return block{end: it.end, items: []item{it}}, true
}

// swallowClose returns the index after close if only white space separates
// it from pos, else pos.
func swallowClose(s string, pos int, close string) int {
	q := skipSpace(s, pos)
	if strings.HasPrefix(s[q:], close) {
		return q + len(close)
	}
	return pos
}

// hermes parses one JSON object {"name": ..., "arguments": {...}} at pos.
// "parameters" is accepted for "arguments", and arguments given as a
// string holding a JSON object are unwrapped, as some models double-encode.
func (p *parser) hermes(pos int) (item, bool) {
	dec := json.NewDecoder(strings.NewReader(p.s[pos:]))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return item{}, false
	}
	var call struct {
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(raw, &call); err != nil || !validName(call.Name) {
		return item{}, false
	}
	argv := call.Arguments
	if len(argv) == 0 {
		argv = call.Parameters
	}
	args, ok := objectArgs(argv)
	if !ok {
		return item{}, false
	}
	return item{span: span{pos, pos + int(dec.InputOffset())}, name: call.Name, args: args}, true
}

// function parses <function=NAME> parameters </function> at pos.
func (p *parser) function(pos int) (item, bool) {
	start := pos
	pos += len("<function=")
	gt := strings.IndexByte(p.s[pos:], '>')
	if gt < 0 {
		return item{}, false
	}
	name := strings.TrimSpace(p.s[pos : pos+gt])
	if !validName(name) {
		return item{}, false
	}
	end, params, ok := p.params(pos+gt+1, equalsStyle{}, "</function>")
	if !ok {
		return item{}, false
	}
	return item{span: span{start, end}, name: name, args: p.buildArgs(name, params)}, true
}

// invoke parses <invoke name="NAME"> parameters </invoke> at pos.
func (p *parser) invoke(pos int, ns string) (item, bool) {
	start := pos
	attrs, pos, ok := parseAttrs(p.s, pos+len("<"+ns+"invoke"))
	if !ok {
		return item{}, false
	}
	name := attrs["name"]
	if !validName(name) {
		return item{}, false
	}
	end, params, ok := p.params(pos, attrStyle{ns}, "</"+ns+"invoke>")
	if !ok {
		return item{}, false
	}
	return item{span: span{start, end}, name: name, args: p.buildArgs(name, params)}, true
}

// validName accepts what a tool name can be: no white space or markup.
// Whether the tool exists is Known's business.
func validName(name string) bool {
	return name != "" && len(name) <= 256 && !strings.ContainsAny(name, " \t\r\n<>\"'&=")
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(s string, pos int) int {
	for pos < len(s) && isSpace(s[pos]) {
		pos++
	}
	return pos
}
