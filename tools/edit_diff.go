package tools

import (
	"fmt"
	"strings"
)

// udContext is how many unchanged lines surround each hunk.
const udContext = 3

// udMaxCells bounds the LCS table. Past it the changed middle (what is
// left after the common head and tail) is shown as removed then added:
// still a correct diff, only not a minimal one.
const udMaxCells = 4 << 20

// udOp is one line of an edit script: ' ' kept, '-' removed, '+' added,
// with the line's index in before (for ' ' and '-') or after (for '+').
type udOp struct {
	kind     byte
	old, new int // 0-based line indexes; the side a line lacks holds the position it sits at
}

// UnifiedDiff returns the unified diff (3 lines of context) that turns
// before into after, labelled a/path and b/path, or "" when they are equal.
// A last line without a newline is marked as git and patch expect.
func UnifiedDiff(path, before, after string) string {
	if before == after {
		return ""
	}
	a, b := udLines(before), udLines(after)
	ops := udScript(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", path, path)
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start, stop := udHunkRange(ops, i, udContext)
		udHunk(&out, ops[start:stop], a, b)
		i = stop
	}
	return out.String()
}

// udHunkRange is the hunk that starts at the change ops[i]: from context
// kept lines before it to context lines after the last change that is at
// most 2*context kept lines from the previous one (what UnifiedDiff and
// MakePatch both cut), as ops[start:stop].
func udHunkRange(ops []udOp, i, context int) (start, stop int) {
	end := i
	for j := i; j < len(ops); j++ {
		if ops[j].kind != ' ' {
			end = j
			continue
		}
		if j-end > 2*context {
			break
		}
	}
	return max(0, i-context), min(len(ops), end+context+1)
}

func udHunk(out *strings.Builder, ops []udOp, a, b []string) {
	oldStart, newStart := ops[0].old, ops[0].new
	oldCount, newCount := 0, 0
	for _, op := range ops {
		switch op.kind {
		case ' ':
			oldCount++
			newCount++
		case '-':
			oldCount++
		case '+':
			newCount++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", udRange(oldStart, oldCount), udRange(newStart, newCount))
	for _, op := range ops {
		line := ""
		switch op.kind {
		case ' ', '-':
			line = a[op.old]
		case '+':
			line = b[op.new]
		}
		out.WriteByte(op.kind)
		if text, ok := strings.CutSuffix(line, "\n"); ok {
			out.WriteString(text)
			out.WriteByte('\n')
		} else {
			out.WriteString(line)
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// udRange formats a 0-based start and a count as a hunk header range:
// 1-based, the count omitted when it is one, and an empty range named by
// the line before it.
func udRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// udLines splits s into lines that keep their newline, so a missing final
// newline is a difference.
func udLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// udScript returns the edit script from a to b: the common head and tail
// are kept, the middle is aligned by a longest common subsequence.
func udScript(a, b []string) []udOp {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	ops := make([]udOp, 0, len(a)+len(b))
	for i := range head {
		ops = append(ops, udOp{' ', i, i})
	}
	ma, mb := a[head:len(a)-tail], b[head:len(b)-tail]
	ops = append(ops, udLCS(ma, mb, head)...)
	for k := range tail {
		ops = append(ops, udOp{' ', len(a) - tail + k, len(b) - tail + k})
	}
	return ops
}

// udLCS aligns a and b (both starting at line off) with an LCS table.
// Removals come before additions within a changed run, as in git.
func udLCS(a, b []string, off int) []udOp {
	n, m := len(a), len(b)
	var ops []udOp
	if n*m > udMaxCells || n == 0 || m == 0 {
		for i := range n {
			ops = append(ops, udOp{'-', off + i, off})
		}
		for j := range m {
			ops = append(ops, udOp{'+', off + n, off + j})
		}
		return ops
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, udOp{' ', off + i, off + j})
			i++
			j++
		case j == m || (i < n && lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, udOp{'-', off + i, off + j})
			i++
		default:
			ops = append(ops, udOp{'+', off + i, off + j})
			j++
		}
	}
	return ops
}
