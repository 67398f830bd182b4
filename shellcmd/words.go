package shellcmd

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxBraceWords caps how many words one argument may expand to; the analysis
// looks at the first ones and marks the command as not read-only.
const maxBraceWords = 256

// word is one shell word after quote removal. Expansions that only have a
// value at run time ($VAR, $(cmd), $((1+1))) are kept as written, so "$HOME"
// stays "$HOME" and rules can still recognise it.
type word struct {
	value  string
	static bool // no run-time expansion: value is exactly the argument
	// glob is set when an unquoted *, ? or [...] makes the word a pattern
	// the shell replaces with matching file names.
	glob bool
	// leadGlob is set when such a pattern could match a name starting with
	// "-", which the program would then read as an option.
	leadGlob bool
}

// words resolves the arguments of a simple command, applying brace expansion.
func (a *analyzer) words(ws []*syntax.Word, sc scope) []word {
	var out []word
	for _, w := range ws {
		if !syntax.SplitBraces(w) {
			out = append(out, a.word(w, sc))
			continue
		}
		n := 0
		for ew, err := range expand.BracesSeq(nil, w) {
			if err != nil || n == maxBraceWords {
				a.notReadOnly()
				break
			}
			out = append(out, a.word(ew, sc))
			n++
		}
	}
	return out
}

// word resolves one word. Command substitutions inside it are analysed as
// commands of their own.
func (a *analyzer) word(w *syntax.Word, sc scope) word {
	var b strings.Builder
	static, glob, leadGlob := true, false, false
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if at := globAt(p.Value); at >= 0 {
				glob = true
				// Only a pattern at the start of the word can expand to a
				// name starting with "-": "src/*" and "x*" cannot.
				leadGlob = leadGlob || (b.Len() == 0 && at == 0)
			}
			b.WriteString(unescapeUnquoted(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(decodeANSIC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				if lit, ok := dp.(*syntax.Lit); ok {
					b.WriteString(unescapeDouble(lit.Value))
					continue
				}
				static = false
				a.scan(dp, sc)
				b.WriteString(a.source(dp))
			}
		default:
			// $VAR, ${...}, $(...), `...`, <(...), $((...)), extglobs.
			static = false
			a.scan(p, sc)
			b.WriteString(a.source(p))
		}
	}
	return word{value: b.String(), static: static, glob: glob, leadGlob: leadGlob}
}

// globAt returns the index of the first unescaped glob metacharacter in the
// raw text of an unquoted literal, or -1. A "[" counts only with a "]" after
// it, as in the shell: "[" alone (the test command) is a plain word.
func globAt(raw string) int {
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '*', '?':
			return i
		case '[':
			if strings.IndexByte(raw[i+1:], ']') >= 0 {
				return i
			}
		}
	}
	return -1
}

// source prints a node back as shell text, for expansions kept as written.
func (a *analyzer) source(n syntax.Node) string {
	var b strings.Builder
	if err := a.printer.Print(&b, n); err != nil {
		return "?"
	}
	return b.String()
}

// unescapeUnquoted removes backslashes the way the shell does outside quotes:
// \x is x, and a backslash-newline pair disappears.
func unescapeUnquoted(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble removes backslashes inside double quotes, where only
// \$ \` \" \\ and backslash-newline are escapes.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				b.WriteByte(s[i+1])
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// decodeANSIC decodes the body of a $'...' string.
func decodeANSIC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	simple := map[byte]string{
		'a': "\a", 'b': "\b", 'e': "\x1b", 'E': "\x1b", 'f': "\f", 'n': "\n",
		'r': "\r", 't': "\t", 'v': "\v", '\\': `\`, '\'': "'", '"': `"`, '?': "?",
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		c := s[i+1]
		if r, ok := simple[c]; ok {
			b.WriteString(r)
			i++
			continue
		}
		switch {
		case c >= '0' && c <= '7':
			j := i + 1
			for j < len(s) && j < i+4 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i+1:j], 8, 32)
			b.WriteByte(byte(n))
			i = j - 1
		case c == 'x' || c == 'u' || c == 'U':
			maxDigits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			j := i + 2
			for j < len(s) && j < i+2+maxDigits && isHex(s[j]) {
				j++
			}
			if j == i+2 {
				b.WriteString(s[i : i+2])
				i++
				continue
			}
			n, _ := strconv.ParseUint(s[i+2:j], 16, 32)
			if c == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteString(string(rune(n)))
			}
			i = j - 1
		case c == 'c' && i+2 < len(s):
			b.WriteByte(s[i+2] & 0x1f)
			i += 2
		default:
			b.WriteString(s[i : i+2])
			i++
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// display renders argv for Verdict.Commands: static words are quoted when
// needed so that the text reads back as the same arguments, words with
// run-time expansions are shown as written.
func display(ws []word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.value
		if !w.static {
			continue
		}
		if w.value == "" || strings.ContainsAny(w.value, " \t\n'\"\\;&|<>()$`") || !utf8.ValidString(w.value) {
			if q, err := syntax.Quote(w.value, syntax.LangBash); err == nil {
				parts[i] = q
			} else {
				parts[i] = strconv.Quote(w.value)
			}
		}
	}
	return strings.Join(parts, " ")
}
