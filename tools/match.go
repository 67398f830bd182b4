package tools

import (
	"regexp"
	"strings"
)

// Names of the matchers the edit tool tries, in order. The first is the
// only one that needs no note in the result.
const (
	matchExact         = "exact"
	matchTrimmedEnds   = "trimmed-line-ends"
	matchIndentFlex    = "indentation-flexible"
	matchWhitespace    = "whitespace-normalised"
	matchEscapes       = "escape-normalised"
	matchBlockAnchor   = "block-anchor"
	blockAnchorMinSim  = 0.7
	blockAnchorMinLine = 3
	// blockAnchorMaxCells bounds one character-level Levenshtein table;
	// larger blocks are compared line by line instead.
	blockAnchorMaxCells = 4 << 20
)

// editCandidate is one place old_string was found: the byte span [start, end)
// of the content and the text that replaces it there.
type editCandidate struct {
	start, end int
	repl       string
}

// editFallback is one lenient way to find old in content when the exact text
// is not there. It returns every non-overlapping candidate.
type editFallback struct {
	name string
	find func(content, old, repl string) []editCandidate
}

// editFallbacks are tried in order, from the least to the most lenient, as
// OpenCode's edit does: each only runs when the ones before found nothing
// usable, so a lenient matcher never overrides a precise one.
var editFallbacks = []editFallback{
	{matchTrimmedEnds, func(c, o, r string) []editCandidate {
		return matchLines(c, o, r, func(s string) string { return strings.TrimRight(s, " \t") }, false)
	}},
	{matchIndentFlex, func(c, o, r string) []editCandidate {
		return matchLines(c, o, r, func(s string) string { return strings.Trim(s, " \t") }, true)
	}},
	{matchWhitespace, whitespaceMatch},
	{matchEscapes, escapeMatch},
	{matchBlockAnchor, blockAnchorMatch},
}

// editOutcome is what findEditMatches concluded.
type editOutcome struct {
	matcher    string
	cands      []editCandidate
	ambiguous  string // the first matcher that found several candidates
	ambigCount int
	refused    int // candidates dropped for an unbalanced span
}

// findEditMatches looks for old in content: exactly first, then with each
// fallback. Without all, a matcher must find exactly one candidate (after
// dropping those whose span is under half or over twice len(old)); with
// all, every candidate of the first matcher that finds any is used. An
// empty cands means no usable match, and so does an empty old: it would
// match between every two characters (and, with all, loop forever at
// offset 0); editContent handles the empty old_string itself.
func findEditMatches(content, old, repl string, all bool) editOutcome {
	var out editOutcome
	if old == "" {
		return out
	}
	if n := strings.Count(content, old); n > 0 {
		out.matcher = matchExact
		if n > 1 && !all {
			out.ambiguous, out.ambigCount = matchExact, n
			return out
		}
		for i := 0; ; {
			j := strings.Index(content[i:], old)
			if j < 0 {
				break
			}
			out.cands = append(out.cands, editCandidate{i + j, i + j + len(old), repl})
			i += j + len(old)
			if !all {
				break
			}
		}
		return out
	}
	for _, f := range editFallbacks {
		var kept []editCandidate
		for _, c := range f.find(content, old, repl) {
			if n := c.end - c.start; 2*n < len(old) || n > 2*len(old) {
				out.refused++
				continue
			}
			kept = append(kept, c)
		}
		switch {
		case len(kept) == 0:
			continue
		case len(kept) > 1 && !all:
			if out.ambiguous == "" {
				out.ambiguous, out.ambigCount = f.name, len(kept)
			}
			continue
		}
		out.matcher, out.cands = f.name, kept
		return out
	}
	return out
}

// applyEditCandidates replaces each candidate span (sorted, non-overlapping).
func applyEditCandidates(content string, cands []editCandidate) string {
	var b strings.Builder
	prev := 0
	for _, c := range cands {
		b.WriteString(content[prev:c.start])
		b.WriteString(c.repl)
		prev = c.end
	}
	b.WriteString(content[prev:])
	return b.String()
}

// editLine is one line of the content without its newline, at [start, end).
type editLine struct {
	text       string
	start, end int
}

func editSplitLines(s string) []editLine {
	var out []editLine
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, editLine{s[start:i], start, i})
			start = i + 1
		}
	}
	out = append(out, editLine{s[start:], start, len(s)})
	return out
}

// matchLines finds runs of whole lines equal to old's lines under key. A
// trailing newline in old is matched as the newline after the run. With
// reindent, repl is shifted by the indentation the found block has over
// old's.
func matchLines(content, old, repl string, key func(string) string, reindent bool) []editCandidate {
	oldBody, nl := strings.CutSuffix(old, "\n")
	want := strings.Split(oldBody, "\n")
	keys := make([]string, len(want))
	blank := true
	for i, w := range want {
		keys[i] = key(w)
		blank = blank && keys[i] == ""
	}
	if blank {
		return nil // old is only whitespace: leniency would match anywhere
	}
	lines := editSplitLines(content)
	var out []editCandidate
	for i := 0; i+len(want) <= len(lines); i++ {
		ok := true
		for k := range want {
			if key(lines[i+k].text) != keys[k] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		last := lines[i+len(want)-1]
		end := last.end
		if nl {
			if end == len(content) {
				continue // old ends in a newline the file does not have here
			}
			end++
		}
		r := repl
		if reindent {
			r = reindentBlock(repl, editIndent(editFirstNonBlank(want)), editIndent(editFirstNonBlank(editTexts(lines[i:i+len(want)]))))
		}
		out = append(out, editCandidate{lines[i].start, end, r})
		i += len(want) - 1
	}
	return out
}

func editTexts(ls []editLine) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.text
	}
	return out
}

func editFirstNonBlank(lines []string) string {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return ""
}

func editIndent(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

// reindentBlock moves every non-blank line of s from indentation from to
// indentation to: it adds what to has beyond from, removes what from has
// beyond to, or swaps the prefix when they differ in kind (tabs, spaces).
func reindentBlock(s, from, to string) string {
	if from == to {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		switch {
		case strings.HasPrefix(to, from):
			lines[i] = to[len(from):] + l
		case strings.HasPrefix(from, to):
			extra := from[len(to):]
			if strings.HasPrefix(l, extra) {
				lines[i] = l[len(extra):]
			} else {
				lines[i] = strings.TrimLeft(l, " \t")
			}
		case strings.HasPrefix(l, from):
			lines[i] = to + l[len(from):]
		}
	}
	return strings.Join(lines, "\n")
}

// whitespaceMatch treats every run of spaces and tabs in old as "one or
// more", and a line break with the blanks around it as one line break
// amid any blanks, ignoring old's leading and trailing whitespace.
func whitespaceMatch(content, old, repl string) []editCandidate {
	trimmed := strings.TrimSpace(old)
	if trimmed == "" {
		return nil
	}
	var b strings.Builder
	for i := 0; i < len(trimmed); {
		c := trimmed[i]
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			j := i
			for j < len(trimmed) && !strings.ContainsRune(" \t\n\r", rune(trimmed[j])) {
				j++
			}
			b.WriteString(regexp.QuoteMeta(trimmed[i:j]))
			i = j
			continue
		}
		j := i
		newlines := 0
		for j < len(trimmed) && strings.ContainsRune(" \t\n\r", rune(trimmed[j])) {
			if trimmed[j] == '\n' {
				newlines++
			}
			j++
		}
		if newlines == 0 {
			b.WriteString(`[ \t]+`)
		} else {
			b.WriteString(`[ \t\r]*`)
			b.WriteString(strings.Repeat(`\n[ \t\r]*`, newlines))
		}
		i = j
	}
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil // too large for the regexp engine: no match
	}
	var out []editCandidate
	for _, loc := range re.FindAllStringIndex(content, -1) {
		out = append(out, editCandidate{loc[0], loc[1], repl})
	}
	return out
}

// escapeReplacer undoes the escaping a model sometimes applies twice when
// it writes code inside a JSON string.
var escapeReplacer = strings.NewReplacer(
	`\\`, `\`, `\n`, "\n", `\t`, "\t", `\r`, "\r",
	`\"`, `"`, `\'`, `'`, "\\`", "`", `\$`, `$`,
)

// escapeMatch looks for old with its literal escape sequences unescaped.
func escapeMatch(content, old, repl string) []editCandidate {
	un := escapeReplacer.Replace(old)
	if un == old || un == "" {
		return nil
	}
	var out []editCandidate
	for i := 0; ; {
		j := strings.Index(content[i:], un)
		if j < 0 {
			return out
		}
		out = append(out, editCandidate{i + j, i + j + len(un), repl})
		i += j + len(un)
	}
}

// blockAnchorMatch finds blocks whose first and last lines equal old's
// (ignoring surrounding blanks) and whose middle is at least 70% similar
// by Levenshtein ratio. For each first-line anchor the nearest last-line
// anchor closes the block.
func blockAnchorMatch(content, old, repl string) []editCandidate {
	oldBody, nl := strings.CutSuffix(old, "\n")
	want := strings.Split(oldBody, "\n")
	if len(want) < blockAnchorMinLine {
		return nil
	}
	first, last := strings.TrimSpace(want[0]), strings.TrimSpace(want[len(want)-1])
	if first == "" || last == "" {
		return nil
	}
	wantMid := editTrimJoin(want[1 : len(want)-1])
	lines := editSplitLines(content)
	var out []editCandidate
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i].text) != first {
			continue
		}
		j := i + 2
		for j < len(lines) && strings.TrimSpace(lines[j].text) != last {
			j++
		}
		if j >= len(lines) {
			break // no closing anchor after this or any later first line
		}
		var mid []string
		for _, l := range lines[i+1 : j] {
			mid = append(mid, l.text)
		}
		if blockSimilarity(editTrimJoin(mid), wantMid) < blockAnchorMinSim {
			continue
		}
		end := lines[j].end
		if nl && end < len(content) {
			end++
		}
		out = append(out, editCandidate{lines[i].start, end, repl})
		i = j
	}
	return out
}

func editTrimJoin(lines []string) string {
	t := make([]string, len(lines))
	for i, l := range lines {
		t[i] = strings.TrimSpace(l)
	}
	return strings.Join(t, "\n")
}

// blockSimilarity is the Levenshtein ratio 1 - distance/max(len) of two texts,
// by bytes, or by lines when a byte table would be too large.
func blockSimilarity(a, b string) float64 {
	if a == b {
		return 1
	}
	if len(a)*len(b) <= blockAnchorMaxCells {
		return 1 - float64(editDistance([]byte(a), []byte(b)))/float64(max(len(a), len(b)))
	}
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(la)*len(lb) > blockAnchorMaxCells {
		return 0
	}
	return 1 - float64(editDistance(la, lb))/float64(max(len(la), len(lb)))
}

// editDistance is the Levenshtein distance between two sequences.
func editDistance[T comparable](a, b []T) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
