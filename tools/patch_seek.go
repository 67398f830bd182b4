package tools

import (
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// The rungs of the matching ladder, tried in order over the whole search
// range before the next is tried, as Codex's seek_sequence does: a looser
// rung never wins over a stricter match further on.
const (
	rungExact = iota
	rungTrimEnd
	rungTrim
	rungUnicode
	// rungNFC compares the lines in Unicode normalisation form C after the
	// punctuation rung's mapping: text written on macOS often reaches a
	// file decomposed (NFD: "й" as "и" plus a combining breve) while the
	// model writes it composed, and the two look identical. It comes
	// last, so an exact or punctuation-only match always wins over it.
	rungNFC
	rungCount
)

// patchLines is a file's lines (without line endings) with the looser
// rungs' views of them computed on first use: most hunks match exactly, so
// a large file is transformed only when a hunk needs it.
type patchLines struct {
	lines []string
	views [rungCount][]string
	grams [][]uint32 // bigram sets for nearestLines, on first failure
}

func (d *patchLines) view(rung int) []string {
	if rung == rungExact {
		return d.lines
	}
	if d.views[rung] == nil {
		v := make([]string, len(d.lines))
		for i, l := range d.lines {
			v[i] = rungForm(l, rung)
		}
		d.views[rung] = v
	}
	return d.views[rung]
}

// rungForm is how a line compares at a rung.
func rungForm(s string, rung int) string {
	switch rung {
	case rungTrimEnd:
		return strings.TrimRightFunc(s, unicode.IsSpace)
	case rungTrim:
		return strings.TrimSpace(s)
	case rungUnicode:
		return normalisePunct(strings.TrimSpace(s))
	case rungNFC:
		return nfc(normalisePunct(strings.TrimSpace(s)))
	}
	return s
}

// normalisePunct maps the Unicode punctuation models and word processors
// substitute for ASCII back to it: the set Codex normalises.
func normalisePunct(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
			return '-'
		case '\u2018', '\u2019', '\u201A', '\u201B':
			return '\''
		case '\u201C', '\u201D', '\u201E', '\u201F':
			return '"'
		case '\u00A0', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007',
			'\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
			return ' '
		}
		return r
	}, s)
}

// nfc returns s in Unicode normalisation form C; ASCII and text already
// in that form come back unchanged without a copy. golang.org/x/text's
// norm holds the Unicode composition tables, which are not worth
// hand-writing.
func nfc(s string) string {
	if norm.NFC.IsNormalString(s) {
		return s
	}
	return norm.NFC.String(s)
}

// seek finds pat in the lines at or after start and returns its index and
// the rung that matched, or -1. With eof the match must end the file. An
// empty pattern matches at start.
func (d *patchLines) seek(pat []string, start int, eof bool) (int, int) {
	n, m := len(d.lines), len(pat)
	if m == 0 {
		return start, rungExact
	}
	if m > n || start > n-m {
		return -1, -1
	}
	from, to := start, n-m
	if eof {
		from = n - m
	}
	for rung := range rungCount {
		lines := d.view(rung)
		p := pat
		if rung != rungExact {
			p = make([]string, m)
			for i, l := range pat {
				p[i] = rungForm(l, rung)
			}
		}
		first := p[0]
		for i := from; i <= to; i++ {
			if lines[i] == first && slices.Equal(lines[i+1:i+m], p[1:]) {
				return i, rung
			}
		}
	}
	return -1, -1
}

// nearestLines finds where in the file pat fits best, for the error that
// tells the model what the file really holds: every position is scored by
// the mean bigram similarity of the pattern's non-blank lines to the lines
// they would face. It returns the 0-based position and the score in [0,1],
// or -1 when the file or pattern has nothing to compare.
func (d *patchLines) nearestLines(pat []string) (int, float64) {
	type probe struct {
		off   int
		grams []uint32
		text  string
	}
	var probes []probe
	for i, l := range pat {
		if t := rungForm(l, rungNFC); t != "" {
			probes = append(probes, probe{off: i, grams: bigrams(t), text: t})
		}
	}
	n := len(d.lines)
	if len(probes) == 0 || n == 0 {
		return -1, 0
	}
	// Bound the work on a huge file: this runs only on failure, but must
	// still answer in well under a second.
	if limit := max(1, 4_000_000/n); len(probes) > limit {
		probes = probes[:limit]
	}
	if d.grams == nil {
		d.grams = make([][]uint32, n)
		for i, l := range d.view(rungNFC) {
			d.grams[i] = bigrams(l)
		}
	}
	loose := d.view(rungNFC)
	best, bestScore := -1, -1.0
	for pos := 0; pos < n; pos++ {
		score := 0.0
		for _, pr := range probes {
			j := pos + pr.off
			if j >= n {
				continue
			}
			if loose[j] == pr.text {
				score++
				continue
			}
			score += dice(pr.grams, d.grams[j])
		}
		if score > bestScore {
			best, bestScore = pos, score
		}
	}
	return best, bestScore / float64(len(probes))
}

// bigrams returns the sorted, deduplicated byte bigrams of s; a one-byte
// string is its own gram.
func bigrams(s string) []uint32 {
	if len(s) < 2 {
		if s == "" {
			return nil
		}
		return []uint32{uint32(s[0]) << 16}
	}
	g := make([]uint32, 0, len(s)-1)
	for i := 0; i+1 < len(s); i++ {
		g = append(g, uint32(s[i])<<8|uint32(s[i+1]))
	}
	slices.Sort(g)
	return slices.Compact(g)
}

// dice is the Sørensen–Dice coefficient of two sorted gram sets.
func dice(a, b []uint32) float64 {
	if len(a)+len(b) == 0 {
		return 1
	}
	common := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			common++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return 2 * float64(common) / float64(len(a)+len(b))
}
