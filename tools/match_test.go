package tools

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMatchChain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		content     string
		old, new    string
		all         bool
		matcher     string // "" means no usable match
		want        string
		ambiguous   string
		refusedSome bool
	}{
		{name: "exact unique", content: "a\nb\nc\n", old: "b\n", new: "B\n", matcher: matchExact, want: "a\nB\nc\n"},
		{name: "exact ambiguous", content: "x\nx\n", old: "x", new: "y", ambiguous: matchExact},
		{name: "exact replace all", content: "x\nx\n", old: "x", new: "y", all: true, matcher: matchExact, want: "y\ny\n"},
		{name: "missing", content: "a\nb\n", old: "zzz", new: "y"},
		{name: "empty old matches nothing", content: "", old: "", new: "6", all: true},
		{name: "empty old in content matches nothing", content: "a\n", old: "", new: "6", all: true},
		{name: "trimmed line ends", content: "if x {   \n\treturn\t\n}\n", old: "if x {\n\treturn\n}", new: "if y {\n\treturn\n}",
			matcher: matchTrimmedEnds, want: "if y {\n\treturn\n}\n"},
		{name: "indentation flexible adds indent", content: "func f() {\n\t\tif x {\n\t\t\tg()\n\t\t}\n}\n",
			old: "if x {\n\tg()\n}", new: "if y {\n\tg()\n\th()\n}", matcher: matchIndentFlex,
			want: "func f() {\n\t\tif y {\n\t\t\tg()\n\t\t\th()\n\t\t}\n}\n"},
		{name: "indentation flexible removes indent", content: "if x {\n  g()\n}\n",
			old: "    if x {\n      g()\n    }", new: "    if z {\n      g()\n    }", matcher: matchIndentFlex,
			want: "if z {\n  g()\n}\n"},
		{name: "indentation flexible swaps tabs for spaces", content: "\tif x {\n\t\tg()\n\t}\n",
			old: "    if x {\n        g()\n    }", new: "    if x {\n        h()\n    }", matcher: matchIndentFlex,
			want: "\tif x {\n\t    h()\n\t}\n"},
		{name: "indentation ambiguous", content: "\tx := 1\n  x := 1\n", old: "x := 1", new: "x := 2", ambiguous: matchExact},
		{name: "whitespace normalised inside a line", content: "a :=  f(x,   y)\n", old: "a := f(x, y)", new: "a := g(x, y)",
			matcher: matchWhitespace, want: "a := g(x, y)\n"},
		{name: "whitespace normalised across lines", content: "foo(a,\n      b)\n", old: "foo(a,\n b)", new: "foo(a, b)",
			matcher: matchIndentFlex, want: "foo(a, b)\n"},
		{name: "whitespace ambiguous", content: "x  = 1\nx   = 1\n", old: "x = 1", new: "x = 2", ambiguous: matchWhitespace},
		{name: "escape normalised", content: "print(\"hi\")\nnext\n", old: `print(\"hi\")\nnext`, new: "print(\"bye\")\nnext",
			matcher: matchEscapes, want: "print(\"bye\")\nnext\n"},
		{name: "block anchor", content: "func f() {\n\ta := 1\n\tb := 2\n\treturn a + b\n}\n",
			old: "func f() {\n\ta := 1\n\tb := 3\n\treturn a + b\n}", new: "func f() int {\n\treturn 3\n}",
			matcher: matchBlockAnchor, want: "func f() int {\n\treturn 3\n}\n"},
		{name: "block anchor middle too different", content: "func f() {\n\tcompletely other code here\n}\n",
			old: "func f() {\n\tx := 1\n}", new: "func f() {}"},
		{name: "block anchor needs three lines", content: "{\nfoo\n", old: "{\nbar", new: "x"},
		{name: "span refused when far longer", content: "{\n" + strings.Repeat(" ", 30) + "x\n}\n",
			old: "{\nx\n}", new: "y", refusedSome: true},
		{name: "span refused when far shorter", content: "a b\n", old: "a" + strings.Repeat(" ", 20) + "b", new: "ab", refusedSome: true},
		{name: "whitespace-only old never matches leniently", content: "a\n\n\nb\n", old: " \n \n", new: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := findEditMatches(tt.content, tt.old, tt.new, tt.all)
			if tt.ambiguous != "" {
				require.Empty(t, out.cands)
				require.Equal(t, tt.ambiguous, out.ambiguous)
				return
			}
			if tt.matcher == "" {
				require.Empty(t, out.cands, "matched with %s", out.matcher)
				if tt.refusedSome {
					require.Positive(t, out.refused)
				}
				return
			}
			require.NotEmpty(t, out.cands)
			require.Equal(t, tt.matcher, out.matcher)
			require.Equal(t, tt.want, applyEditCandidates(tt.content, out.cands))
		})
	}
}

func TestMatchReindentBlock(t *testing.T) {
	t.Parallel()
	require.Equal(t, "\t\ta\n\n\t\t\tb", reindentBlock("a\n\n\tb", "", "\t\t"))
	require.Equal(t, "a\n  b\nc", reindentBlock("    a\n      b\n  c", "    ", ""))
	require.Equal(t, "same", reindentBlock("same", "\t", "\t"))
}

func TestMatchSimilarity(t *testing.T) {
	t.Parallel()
	require.InDelta(t, 1.0, blockSimilarity("abc", "abc"), 1e-9)
	require.InDelta(t, 2.0/3, blockSimilarity("abc", "abd"), 1e-9)
	require.InDelta(t, 0.0, blockSimilarity("", "abc"), 1e-9)
	require.Equal(t, 3, editDistance([]byte("kitten"), []byte("sitting")))
}
