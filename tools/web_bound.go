package tools

import (
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Bounds on what web_fetch hands the HTML-to-Markdown conversion. The
// library's work grows with its output, and some markup multiplies the
// output far past the page: a cell's colspan/rowspan expands into a grid
// (a 177-byte page made 16 MB), aligned tables pad every cell to its
// column's widest (a 2 MB page made 200 MB), and each nested list or quote
// prefixes every line inside it again. boundHTML rewrites the parsed page
// so that none of these multiply, and cuts it where its estimated
// Markdown passes the budget, so the conversion costs at most a constant
// times (page + budget) bytes. The parser itself refuses elements nested
// more than 512 deep.
const (
	// maxBlockNesting is how many lists and block quotes may nest; deeper
	// ones are shown flat, as plain blocks.
	maxBlockNesting = 6
	// maxTableCells bounds the grid cells (rows times the widest row) of
	// all tables of a page together; a table past it is shown as text.
	maxTableCells = 50_000
	// blockPrefix is what one level of list or quote nesting puts before
	// a line ("> ", "  ", "1. ").
	blockPrefix = 4
)

// boundReport says what boundHTML changed, for the note in the result.
type boundReport struct {
	spans     int  // cells whose colspan/rowspan was ignored
	tables    int  // tables shown as text: nested in a table, or too many cells
	flattened int  // lists and quotes nested too deep, shown flat
	cut       bool // the page was cut where its Markdown would pass the budget
	budget    int
}

// notes renders the report as the lines the result carries.
func (r boundReport) notes() []string {
	var out []string
	if r.cut {
		out = append(out, fmt.Sprintf("The page was cut: its Markdown would pass %d bytes (four times the worker's --web-max-bytes), so only the part before that was converted.", r.budget))
	}
	if r.spans > 0 {
		out = append(out, fmt.Sprintf("colspan/rowspan were ignored on %d table cells.", r.spans))
	}
	if r.tables > 0 {
		out = append(out, fmt.Sprintf("%d tables (nested in a table, or past %d cells in all) are shown as text.", r.tables, maxTableCells))
	}
	if r.flattened > 0 {
		out = append(out, fmt.Sprintf("%d lists or quotes nested more than %d deep are shown flat.", r.flattened, maxBlockNesting))
	}
	return out
}

// boundHTML rewrites doc in place within the bounds above and cuts it
// where the Markdown it estimates passes budget bytes. The estimate
// counts what the conversion adds: an escape for each punctuation byte,
// its blocks' prefixes on every line, every link's absolute URL, every
// table cell's separators, a few bytes of markup per element.
func boundHTML(doc *html.Node, base *url.URL, budget int) boundReport {
	b := &bounder{report: boundReport{budget: budget}, base: len(base.String())}
	b.walk(doc, 0, 0)
	if b.cutAt != nil {
		b.report.cut = true
		removeFrom(b.cutAt)
	}
	return b.report
}

type bounder struct {
	report boundReport
	base   int // bytes of the page's URL, which a relative link is resolved against
	used   int // estimated Markdown bytes so far
	cells  int // table grid cells so far
	cutAt  *html.Node
}

// walk visits n and its subtree in document order; blocks is how many
// lists and quotes enclose n, tables how many tables.
func (b *bounder) walk(n *html.Node, blocks, tables int) {
	if b.cutAt != nil {
		return
	}
	cost := 0
	switch n.Type {
	case html.TextNode:
		lines := strings.Count(n.Data, "\n") + 1
		cost = escaped(n.Data) + lines*blocks*blockPrefix
	case html.ElementNode:
		cost = 4 + blocks*blockPrefix
		for _, a := range n.Attr {
			switch a.Key {
			case "href", "src":
				cost += escaped(a.Val) + b.base
			case "title", "alt":
				cost += escaped(a.Val)
			}
		}
		switch n.DataAtom {
		case atom.Td, atom.Th:
			if dropSpans(n) {
				b.report.spans++
			}
		case atom.Ul, atom.Ol, atom.Dl, atom.Blockquote:
			if blocks >= maxBlockNesting {
				flatten(n)
				b.report.flattened++
			} else {
				blocks++
			}
		case atom.Li, atom.Dd, atom.Dt:
			if p := n.Parent; p == nil || (p.DataAtom != atom.Ul && p.DataAtom != atom.Ol && p.DataAtom != atom.Dl) {
				flatten(n) // its list was flattened: no marker, no indent
			}
		case atom.Table:
			cost += b.table(n, tables)
			tables++
		}
	}
	if b.used+cost > b.report.budget {
		b.cutAt = n
		return
	}
	b.used += cost
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.walk(c, blocks, tables)
	}
}

// table decides whether a table stays a Markdown table and returns what
// its grid adds to the estimate. A table inside a table, or one whose
// grid would pass maxTableCells, is marked role="presentation", which the
// conversion shows as text, row by row.
func (b *bounder) table(n *html.Node, enclosing int) int {
	rows, widest := 0, 0
	var count func(*html.Node)
	count = func(x *html.Node) {
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || c.DataAtom == atom.Table {
				continue
			}
			if c.DataAtom == atom.Tr {
				rows++
				w := 0
				for d := c.FirstChild; d != nil; d = d.NextSibling {
					if d.DataAtom == atom.Td || d.DataAtom == atom.Th {
						w++
					}
				}
				widest = max(widest, w)
				continue
			}
			count(c)
		}
	}
	count(n)
	grid := rows * max(widest, 1)
	if enclosing > 0 || b.cells+grid > maxTableCells {
		setAttr(n, "role", "presentation")
		b.report.tables++
		return 0
	}
	b.cells += grid
	return 4 * grid // "| " and " |" around every cell, and the separator row
}

// dropSpans removes a cell's colspan and rowspan; it reports whether one
// asked for more than one column or row.
func dropSpans(n *html.Node) bool {
	spanned := false
	kept := n.Attr[:0]
	for _, a := range n.Attr {
		if a.Key == "colspan" || a.Key == "rowspan" {
			spanned = spanned || strings.TrimSpace(a.Val) != "1"
			continue
		}
		kept = append(kept, a)
	}
	n.Attr = kept
	return spanned
}

// flatten makes a list, list item or quote a plain block.
func flatten(n *html.Node) {
	n.Data, n.DataAtom = "div", atom.Div
}

func setAttr(n *html.Node, key, val string) {
	for i := range n.Attr {
		if n.Attr[i].Key == key {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

// removeFrom removes n and everything after it in document order.
func removeFrom(n *html.Node) {
	for x := n; x.Parent != nil; x = x.Parent {
		for s := x.NextSibling; s != nil; {
			next := s.NextSibling
			x.Parent.RemoveChild(s)
			s = next
		}
	}
	n.Parent.RemoveChild(n)
}

// escaped is s's length once the conversion has escaped it: at most one
// backslash before each ASCII punctuation byte.
func escaped(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x80 && c > ' ' && !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			n++
		}
	}
	return n
}
