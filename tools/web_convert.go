package tools

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// pieceNodes is the most HTML nodes one piece of a page holds when
// web_fetch converts it. The library (html-to-markdown v2.5.2) takes a
// context but never checks it: one ConvertNode call runs to the end,
// about 4µs a node (20 times that under -race), so a 2 MB page of
// 400,000 list items ran 34 s past a 30 s --web-timeout. Converting in
// pieces and checking the deadline between them bounds the overrun by
// one piece (tens of milliseconds) whatever the page.
const pieceNodes = 16_384

// conversion is what convertPieces made: the Markdown and, when the
// deadline stopped it, how far it got.
type conversion struct {
	text             string
	stopped          bool // the deadline passed before every piece was converted
	done, pieces     int  // pieces converted, pieces in all
	doneNodes, nodes int  // HTML nodes converted, nodes in all
	timeout          time.Duration
}

// stopNote is the result's line for a conversion the deadline stopped.
func (c conversion) stopNote() string {
	return fmt.Sprintf("The conversion to Markdown stopped at the worker's --web-timeout (%s) after %d of %d parts (%d of %d HTML nodes); the text below is only what was converted before it.",
		c.timeout, c.done, c.pieces, c.doneNodes, c.nodes)
}

// newMarkdownConverter is the one HTML-to-Markdown converter web_fetch
// uses.
func newMarkdownConverter() *converter.Converter {
	return converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(),
		// Minimal padding: aligned cells pad every cell to its column's
		// widest, output rows times the widest cell.
		table.NewTablePlugin(table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal))))
}

// convertPieces converts doc (already bounded by boundHTML) to Markdown
// in pieces of at most pieceNodes nodes, checking ctx before each, and
// stops adding pieces once the text passes budget. A piece is a copy of
// the path from the document to a group of consecutive siblings, so each
// converts as it would in the whole page; an ordered list split across
// pieces keeps its numbers (start=). A table or <pre> is never split: a
// table's cells are bounded by maxTableCells. The page's structure does
// not change below the limit: a page of fewer nodes is one piece.
// timeout only labels the note.
func convertPieces(ctx context.Context, doc *html.Node, domain string, budget int, timeout time.Duration) (conversion, error) {
	c := conversion{timeout: timeout}
	pieces := splitPieces(doc, pieceNodes)
	c.pieces = len(pieces)
	for _, p := range pieces {
		c.nodes += p.nodes
	}
	conv := newMarkdownConverter()
	var parts []string
	size := 0
	for _, p := range pieces {
		if ctx.Err() != nil {
			c.stopped = true
			break
		}
		if size > budget {
			break // toText cuts the text and says so
		}
		md, err := conv.ConvertNode(p.root, converter.WithContext(ctx), converter.WithDomain(domain))
		if err != nil {
			return c, fmt.Errorf("convert part %d of %d: %w", c.done+1, c.pieces, err)
		}
		c.done++
		c.doneNodes += p.nodes
		if s := strings.TrimSpace(string(md)); s != "" {
			parts = append(parts, s)
			size += len(s) + 2
		}
	}
	c.text = strings.Join(parts, "\n\n")
	return c, nil
}

// countNodes counts the nodes under n, n included; with limit >= 0 it
// stops once the count passes limit, so asking costs at most limit+1
// steps whatever the subtree.
func countNodes(n *html.Node, limit int) int {
	count := 1
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if limit >= 0 && count > limit {
			return count
		}
		rest := -1
		if limit >= 0 {
			rest = limit - count
		}
		count += countNodes(c, rest)
	}
	return count
}

// piece is one part of a page, converted on its own.
type piece struct {
	root  *html.Node
	nodes int // the page's nodes it holds (not the copied path above them)
}

// splitPieces moves doc's nodes into pieces of at most limit nodes each
// (a table or <pre> larger than that is one piece), in document order;
// doc is left empty.
func splitPieces(doc *html.Node, limit int) []piece {
	if n := countNodes(doc, limit); n <= limit {
		return []piece{{doc, n}}
	}
	var out []piece
	var split func(n *html.Node, path []*html.Node)
	split = func(n *html.Node, path []*html.Node) {
		path = append(path, n)
		items := 0 // <li> moved into earlier pieces, for an <ol>'s start=
		start := 1
		if n.DataAtom == atom.Ol {
			if v, err := strconv.Atoi(attr(n, "start")); err == nil {
				start = v
			}
		}
		var group []*html.Node
		used, exact := 0, 0
		flush := func() {
			if len(group) == 0 {
				return
			}
			root, leaf := copyPath(path)
			if n.DataAtom == atom.Ol && items > 0 {
				setAttr(leaf, "start", strconv.Itoa(start+items))
			}
			for _, g := range group {
				if g.DataAtom == atom.Li {
					items++
				}
				n.RemoveChild(g)
				leaf.AppendChild(g)
			}
			out = append(out, piece{root, exact})
			group, used, exact = nil, 0, 0
		}
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			size := countNodes(c, limit)
			whole := size
			switch {
			case size > limit && c.FirstChild != nil && c.DataAtom != atom.Table && c.DataAtom != atom.Pre:
				flush()
				split(c, path)
				if c.DataAtom == atom.Li {
					items++
				}
				c = next
				continue
			case size > limit:
				whole = countNodes(c, -1) // a table or <pre>, kept whole
			}
			switch {
			case used+size > limit:
				flush()
				group, used, exact = []*html.Node{c}, size, whole
			default:
				group, used, exact = append(group, c), used+size, exact+whole
			}
			c = next
		}
		flush()
	}
	split(doc, nil)
	return out
}

// copyPath copies the nodes of path without their children, each the
// only child of the one before; it returns the top and the last copy.
func copyPath(path []*html.Node) (root, leaf *html.Node) {
	for _, n := range path {
		c := &html.Node{Type: n.Type, DataAtom: n.DataAtom, Data: n.Data, Namespace: n.Namespace,
			Attr: append([]html.Attribute(nil), n.Attr...)}
		if leaf == nil {
			root = c
		} else {
			leaf.AppendChild(c)
		}
		leaf = c
	}
	return root, leaf
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// ctxReader ends a read once ctx is done, so parsing a page (which reads
// as it goes) stops at the deadline too.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p[:min(len(p), 64<<10)])
}
