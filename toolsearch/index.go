// Package toolsearch ranks tools for a free-text query with BM25, as Codex's
// tool_search does: when the catalog is large, most tools are deferred (not
// sent to the model), and the model finds the ones it needs by describing
// them. Each tool's document is its name split into words, its
// description, and its parameters' names and descriptions. The package is
// pure and deterministic: the workflow runs the search itself, so the same
// catalog and query must rank the same on every replay.
package toolsearch

import (
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/longrun/longrun/toolspec"
)

// BM25's usual constants: k1 bounds how much repeating a word helps, b how
// much a long description is discounted.
const (
	k1 = 1.2
	b  = 0.75
)

// Index is a BM25 index over a fixed list of tool specs. Build it once per
// catalog with New; it is safe for concurrent searches.
type Index struct {
	specs []toolspec.Spec
	docs  []doc
	df    map[string]int // documents holding each term
	avgdl float64
}

type doc struct {
	tf  map[string]int
	len int
}

// New indexes specs. The index keeps its own copy of the list, so later
// changes to the slice do not move results.
func New(specs []toolspec.Spec) *Index {
	ix := &Index{specs: append([]toolspec.Spec(nil), specs...), df: map[string]int{}}
	total := 0
	for _, s := range ix.specs {
		terms := specTerms(s)
		d := doc{tf: map[string]int{}, len: len(terms)}
		for _, t := range terms {
			if d.tf[t] == 0 {
				ix.df[t]++
			}
			d.tf[t]++
		}
		ix.docs = append(ix.docs, d)
		total += len(terms)
	}
	if len(ix.docs) > 0 {
		ix.avgdl = float64(total) / float64(len(ix.docs))
	}
	return ix
}

// Search returns at most k specs matching query, best first; specs with
// equal scores are ordered by name so the answer is stable. A query with no
// searchable words, or k < 1, returns none.
func (ix *Index) Search(query string, k int) []toolspec.Spec {
	if k < 1 {
		return nil
	}
	q := queryTerms(query)
	if len(q) == 0 {
		return nil
	}
	type hit struct {
		i     int
		score float64
	}
	var hits []hit
	n := float64(len(ix.docs))
	for i, d := range ix.docs {
		score := 0.0
		for _, t := range q { // in query order, so the float sum is reproducible
			f := float64(d.tf[t])
			if f == 0 {
				continue
			}
			df := float64(ix.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			score += idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(d.len)/ix.avgdl))
		}
		if score > 0 {
			hits = append(hits, hit{i, score})
		}
	}
	sort.SliceStable(hits, func(a, c int) bool {
		if hits[a].score != hits[c].score {
			return hits[a].score > hits[c].score
		}
		return ix.specs[hits[a].i].Name < ix.specs[hits[c].i].Name
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	out := make([]toolspec.Spec, len(hits))
	for j, h := range hits {
		out[j] = ix.specs[h.i]
	}
	return out
}

// specTerms is a tool's document. The name counts twice, once whole and
// once as words, since a tool's name is the densest statement of what it
// does.
func specTerms(s toolspec.Spec) []string {
	var terms []string
	if name := strings.ToLower(s.Name); name != "" {
		terms = append(terms, name)
	}
	name := words(s.Name)
	terms = append(terms, name...)
	terms = append(terms, name...)
	terms = append(terms, words(s.Description)...)
	for _, p := range schemaText(s.Parameters) {
		terms = append(terms, words(p)...)
	}
	return terms
}

// queryTerms are the query's words, each once, plus each whitespace-separated
// field as a whole, so a query naming a tool exactly ("github_create_issue")
// matches its whole-name term.
func queryTerms(q string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, w := range words(q) {
		add(w)
	}
	for _, f := range strings.Fields(q) {
		f = strings.ToLower(strings.Trim(f, ".,;:!?\"'()[]{}`"))
		if strings.ContainsAny(f, "_-.") {
			add(f)
		}
	}
	return out
}

// words splits text into lowercase, lightly stemmed words: on anything
// that is not a letter or digit, and inside a word on camelCase humps
// ("getCalendarEvents", "HTTPServer"), so identifiers and prose meet.
// Stop words are dropped: they are in every description and only add
// noise to short queries.
func words(s string) []string {
	var out []string
	emit := func(w string) {
		if w = strings.ToLower(w); !stopWords[w] {
			out = append(out, stem(w))
		}
	}
	rs := []rune(s)
	start := -1
	for i := 0; i <= len(rs); i++ {
		if i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i])) {
			if start < 0 {
				start = i
			} else if hump(rs, i) {
				emit(string(rs[start:i]))
				start = i
			}
			continue
		}
		if start >= 0 {
			emit(string(rs[start:i]))
			start = -1
		}
	}
	return out
}

// hump reports whether a new camelCase word starts at rs[i]: lower to
// upper ("getCalendar"), or the last capital of an acronym before a lower
// letter ("HTTPServer").
func hump(rs []rune, i int) bool {
	prev, cur := rs[i-1], rs[i]
	if unicode.IsLower(prev) && unicode.IsUpper(cur) {
		return true
	}
	return unicode.IsUpper(prev) && unicode.IsUpper(cur) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
}

// stem folds the plural and verb endings that separate a query from a
// description ("lists files" / "list file", "creating" / "creates"). It is
// deliberately crude: both sides go through it, so only consistency
// matters.
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		w = w[:len(w)-3] + "y"
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		w = w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		w = w[:len(w)-2]
	case len(w) > 4 && strings.HasSuffix(w, "es") && strings.ContainsAny(w[len(w)-3:len(w)-2], "sxz"):
		w = w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		w = w[:len(w)-1]
	}
	// A final e comes and goes with the ending (create, created, creating).
	if len(w) > 4 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

// stopWords are in nearly every description and query and say nothing
// about which tool is meant.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("a an the of to in on for and or is are be by with from this that it its as at into " +
		"i me my you your we our can do does how what which when where who will would should could please want need " +
		"has have some any all there here then than so if not no but") {
		m[w] = true
	}
	return m
}()
