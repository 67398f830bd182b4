package toolcalls

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// param is one parameter as written: its name and its decoded text.
type param struct{ name, value string }

// paramStyle is how a dialect opens a parameter: <parameter=P> in
// Qwen3-coder's, <parameter name="P"> in the invoke dialect.
type paramStyle interface {
	// open parses an opening tag at pos and returns the parameter's name
	// and where its value starts.
	open(s string, pos int) (name string, value int, ok bool)
	// close is the parameter's closing tag.
	close() string
}

type equalsStyle struct{}

func (equalsStyle) open(s string, pos int) (string, int, bool) {
	const tag = "<parameter="
	if !strings.HasPrefix(s[pos:], tag) {
		return "", 0, false
	}
	pos += len(tag)
	gt := strings.IndexByte(s[pos:], '>')
	if gt < 0 {
		return "", 0, false
	}
	name := strings.TrimSpace(s[pos : pos+gt])
	if !validName(name) {
		return "", 0, false
	}
	return name, pos + gt + 1, true
}

func (equalsStyle) close() string { return "</parameter>" }

type attrStyle struct{ ns string }

func (a attrStyle) open(s string, pos int) (string, int, bool) {
	tag := "<" + a.ns + "parameter"
	if !hasTagPrefix(s[pos:], tag) {
		return "", 0, false
	}
	attrs, value, ok := parseAttrs(s, pos+len(tag))
	if !ok || !validName(attrs["name"]) {
		return "", 0, false
	}
	return attrs["name"], value, true
}

func (a attrStyle) close() string { return "</" + a.ns + "parameter>" }

// params parses parameters up to the block's closing tag and returns the
// index after it.
func (p *parser) params(pos int, st paramStyle, blockClose string) (int, []param, bool) {
	var params []param
	for {
		pos = skipSpace(p.s, pos)
		if strings.HasPrefix(p.s[pos:], blockClose) {
			return pos + len(blockClose), params, true
		}
		name, value, ok := st.open(p.s, pos)
		if !ok {
			return 0, nil, false
		}
		end, after, ok := valueEnd(p.s, value, st, blockClose)
		if !ok {
			return 0, nil, false
		}
		params = append(params, param{name, decodeValue(p.s[value:end])})
		pos = after
	}
}

// valueEnd finds the closing tag of a value starting at pos. Values hold
// code and markup (Go generics, HTML, even the string "</parameter>"), so
// the close counts only where the next parameter or the block's end
// follows it, and a CDATA section is skipped whole. The block's own closing
// tag ends the search: a value missing its close must not run on into the
// next call (a value may hold that tag only inside CDATA). It returns the
// value's end and the index after the closing tag.
func valueEnd(s string, pos int, st paramStyle, blockClose string) (end, after int, ok bool) {
	closeTag := st.close()
	for cur := pos; ; {
		k := strings.Index(s[cur:], closeTag)
		if k < 0 {
			return 0, 0, false
		}
		k += cur
		b := strings.Index(s[cur:k], blockClose)
		limit := k
		if b >= 0 {
			limit = cur + b
		}
		if c := strings.Index(s[cur:limit], cdataOpen); c >= 0 {
			if e := strings.Index(s[cur+c:], cdataClose); e >= 0 {
				cur += c + e + len(cdataClose)
				continue
			}
			// An unclosed CDATA opener is literal text, as decodeValue reads it.
		}
		if b >= 0 {
			return 0, 0, false
		}
		after := k + len(closeTag)
		q := skipSpace(s, after)
		if strings.HasPrefix(s[q:], blockClose) {
			return k, after, true
		}
		if _, _, ok := st.open(s, q); ok {
			return k, after, true
		}
		cur = k + 1
	}
}

const cdataOpen, cdataClose = "<![CDATA[", "]]>"

// decodeValue turns a value as written into its text: the one newline the
// format puts after the opening tag and before the closing one goes, every
// other character (indentation, blank lines) stays; CDATA sections are
// taken verbatim and XML entities elsewhere are decoded.
func decodeValue(raw string) string {
	raw = strings.TrimPrefix(raw, "\n")
	raw = strings.TrimPrefix(raw, "\r\n")
	if strings.HasSuffix(raw, "\r\n") {
		raw = raw[:len(raw)-2]
	} else {
		raw = strings.TrimSuffix(raw, "\n")
	}
	var b strings.Builder
	for {
		c := strings.Index(raw, cdataOpen)
		if c < 0 {
			break
		}
		e := strings.Index(raw[c+len(cdataOpen):], cdataClose)
		if e < 0 {
			break
		}
		b.WriteString(decodeEntities(raw[:c]))
		b.WriteString(raw[c+len(cdataOpen) : c+len(cdataOpen)+e])
		raw = raw[c+len(cdataOpen)+e+len(cdataClose):]
	}
	b.WriteString(decodeEntities(raw))
	return b.String()
}

// decodeEntities decodes the five XML entities and numeric character
// references. Anything else with an ampersand (&& in code, HTML's &nbsp;)
// is left alone: decoding HTML's whole table would change source code that
// merely looks like an entity.
func decodeEntities(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '&')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		s = s[i:]
		r, n := entity(s)
		if n == 0 {
			b.WriteByte('&')
			s = s[1:]
			continue
		}
		b.WriteString(r)
		s = s[n:]
	}
}

var xmlEntities = []struct{ name, text string }{
	{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}, {"&quot;", `"`}, {"&apos;", "'"},
}

// entity decodes the entity at the start of s and returns its text and
// length, or a zero length if s does not start with one.
func entity(s string) (string, int) {
	for _, e := range xmlEntities {
		if strings.HasPrefix(s, e.name) {
			return e.text, len(e.name)
		}
	}
	if !strings.HasPrefix(s, "&#") {
		return "", 0
	}
	semi := strings.IndexByte(s, ';')
	if semi < 3 || semi > 10 {
		return "", 0
	}
	digits, base := s[2:semi], 10
	if digits[0] == 'x' || digits[0] == 'X' {
		digits, base = digits[1:], 16
	}
	if digits == "" {
		return "", 0
	}
	r := 0
	for _, c := range []byte(digits) {
		d := digitValue(c)
		if d < 0 || d >= base {
			return "", 0
		}
		r = r*base + d
	}
	if r == 0 || !utf8.ValidRune(rune(r)) {
		return "", 0
	}
	return string(rune(r)), semi + 1
}

func digitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// parseAttrs reads name="value" attributes (either quote) up to '>' and
// returns them decoded with the index after '>'.
func parseAttrs(s string, pos int) (map[string]string, int, bool) {
	attrs := map[string]string{}
	for {
		pos = skipSpace(s, pos)
		if pos >= len(s) {
			return nil, 0, false
		}
		if s[pos] == '>' {
			return attrs, pos + 1, true
		}
		start := pos
		for pos < len(s) && isAttrNameByte(s[pos]) {
			pos++
		}
		name := s[start:pos]
		pos = skipSpace(s, pos)
		if name == "" || pos >= len(s) || s[pos] != '=' {
			return nil, 0, false
		}
		pos = skipSpace(s, pos+1)
		if pos >= len(s) || (s[pos] != '"' && s[pos] != '\'') {
			return nil, 0, false
		}
		q := strings.IndexByte(s[pos+1:], s[pos])
		if q < 0 {
			return nil, 0, false
		}
		attrs[name] = decodeEntities(s[pos+1 : pos+1+q])
		pos += q + 2
	}
}

func isAttrNameByte(c byte) bool {
	return c == '_' || c == '-' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// buildArgs encodes the parameters as a JSON object in the order written;
// a parameter given twice keeps its first place and its last value.
func (p *parser) buildArgs(tool string, params []param) string {
	strOnly := p.stringParams(tool)
	var names []string
	values := map[string]string{}
	for _, pr := range params {
		if _, dup := values[pr.name]; !dup {
			names = append(names, pr.name)
		}
		if strOnly[pr.name] {
			values[pr.name] = jsonString(pr.value)
		} else {
			values[pr.name] = jsonValue(pr.value)
		}
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonString(n))
		b.WriteByte(':')
		b.WriteString(values[n])
	}
	b.WriteByte('}')
	return b.String()
}

// stringParams reads which of tool's parameters the schema types as a
// string and nothing else (null aside), once per tool.
func (p *parser) stringParams(tool string) map[string]bool {
	if m, ok := p.kinds[tool]; ok {
		return m
	}
	m := map[string]bool{}
	p.kinds[tool] = m
	var schema struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
	}
	if json.Unmarshal(p.o.Schemas[tool], &schema) != nil {
		return m
	}
	for name, prop := range schema.Properties {
		var types []string
		var one string
		if json.Unmarshal(prop.Type, &one) == nil {
			types = []string{one}
		} else if json.Unmarshal(prop.Type, &types) != nil {
			continue
		}
		str, other := false, false
		for _, t := range types {
			switch t {
			case "string":
				str = true
			case "null":
			default:
				other = true
			}
		}
		m[name] = str && !other
	}
	return m
}

// jsonValue is the value as JSON when it is a JSON number, boolean, object
// or array, and as a JSON string otherwise. A bare null or a quoted string
// stays text: a model writing "null" or "\"x\"" as a value more likely
// means those characters.
func jsonValue(v string) string {
	t := strings.TrimSpace(v)
	if t != "" && strings.IndexByte("{[-0123456789tf", t[0]) >= 0 && json.Valid([]byte(t)) {
		var b bytes.Buffer
		if json.Compact(&b, []byte(t)) == nil {
			// Invalid UTF-8 can only sit inside a JSON string here, where
			// replacing it keeps the JSON valid and the payload encodable.
			return strings.ToValidUTF8(b.String(), "\uFFFD")
		}
	}
	return jsonString(v)
}

// jsonString encodes s as a JSON string without escaping <, > and &, so
// code and markup read as written in the conversation.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// objectArgs normalises a Hermes "arguments" value to a compact JSON
// object: absent or null is {}, a string holding an object is unwrapped,
// anything else is not a call.
func objectArgs(raw json.RawMessage) (string, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return "{}", true
	}
	if t[0] == '"' {
		var inner string
		if json.Unmarshal(t, &inner) != nil {
			return "", false
		}
		t = bytes.TrimSpace([]byte(inner))
		if !json.Valid(t) {
			return "", false
		}
	}
	if len(t) == 0 || t[0] != '{' {
		return "", false
	}
	var b bytes.Buffer
	if json.Compact(&b, t) != nil {
		return "", false
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD"), true
}
