package tools

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEditUnifiedDiff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, before, after, want string
	}{
		{name: "equal", before: "a\n", after: "a\n", want: ""},
		{name: "one line changed", before: "a\nb\nc\n", after: "a\nB\nc\n",
			want: "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{name: "create", before: "", after: "x\ny\n",
			want: "--- a/f\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{name: "delete all", before: "x\n", after: "",
			want: "--- a/f\n+++ b/f\n@@ -1 +0,0 @@\n-x\n"},
		{name: "no newline at end", before: "a\nb", after: "a\nc",
			want: "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{name: "newline added at end", before: "a", after: "a\n",
			want: "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"},
		{name: "insert in middle", before: "1\n2\n3\n4\n5\n6\n7\n8\n", after: "1\n2\n3\n4\nnew\n5\n6\n7\n8\n",
			want: "--- a/f\n+++ b/f\n@@ -2,6 +2,7 @@\n 2\n 3\n 4\n+new\n 5\n 6\n 7\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, UnifiedDiff("f", tt.before, tt.after))
		})
	}
}

func TestEditUnifiedDiffHunks(t *testing.T) {
	t.Parallel()
	var before, after strings.Builder
	for i := range 40 {
		line := strings.Repeat("x", i%7) + "\n"
		before.WriteString(line)
		if i == 5 || i == 30 {
			line = "changed\n"
		}
		after.WriteString(line)
	}
	d := UnifiedDiff("f", before.String(), after.String())
	require.Equal(t, 2, strings.Count(d, "\n@@ "), d)
	require.Contains(t, d, "@@ -3,7 +3,7 @@\n")
	require.Contains(t, d, "@@ -28,7 +28,7 @@\n")
	// Changes 7 kept lines apart still make two hunks; 6 apart make one.
	require.Equal(t, 1, strings.Count(UnifiedDiff("f", "a\n1\n2\n3\n4\n5\n6\nb\n", "A\n1\n2\n3\n4\n5\n6\nB\n"), "@@ -"))
	require.Equal(t, 2, strings.Count(UnifiedDiff("f", "a\n1\n2\n3\n4\n5\n6\n7\nb\n", "A\n1\n2\n3\n4\n5\n6\n7\nB\n"), "@@ -"))
}

// applyUnified applies a diff made by UnifiedDiff to before, to check that
// the hunks say what they should.
func applyUnified(t *testing.T, before, diff string) string {
	t.Helper()
	old := udLines(before)
	var out []string
	pos := 0
	lines := strings.SplitAfter(diff, "\n")
	for i := 2; i < len(lines) && lines[i] != ""; i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "@@ "):
			var os, oc, ns, nc int
			hdr := strings.TrimSuffix(strings.TrimPrefix(l, "@@ "), " @@\n")
			parts := strings.Fields(hdr)
			os, oc = parseRange(t, parts[0][1:])
			ns, nc = parseRange(t, parts[1][1:])
			_, _ = ns, nc
			start := os - 1
			if oc == 0 {
				start = os
			}
			out = append(out, old[pos:start]...)
			pos = start
		case strings.HasPrefix(l, `\`):
			last := len(out) - 1
			if last >= 0 && lines[i-1][0] != '-' {
				out[last] = strings.TrimSuffix(out[last], "\n")
			}
		case l[0] == ' ':
			out = append(out, old[pos])
			pos++
		case l[0] == '-':
			pos++
		case l[0] == '+':
			out = append(out, l[1:])
		}
	}
	out = append(out, old[pos:]...)
	return strings.Join(out, "")
}

func parseRange(t *testing.T, s string) (int, int) {
	t.Helper()
	start, count := 0, 1
	a, b, ok := strings.Cut(s, ",")
	for _, c := range a {
		start = start*10 + int(c-'0')
	}
	if ok {
		count = 0
		for _, c := range b {
			count = count*10 + int(c-'0')
		}
	}
	return start, count
}

func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\n")
	f.Add("", "x")
	f.Add("x", "")
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\nx\n4\n5\n6\n7\n8\ny\n")
	f.Fuzz(func(t *testing.T, before, after string) {
		d := UnifiedDiff("f", before, after)
		if before == after {
			if d != "" {
				t.Fatalf("diff of equal texts: %q", d)
			}
			return
		}
		if got := applyUnified(t, before, d); got != after {
			t.Fatalf("applying the diff gives %q, want %q\n%s", got, after, d)
		}
	})
}
