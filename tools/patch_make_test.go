package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzMakePatch: whatever two contents a language server hands over,
// PatchFor's patch turns the first into exactly the second, or PatchFor
// says it cannot (never a patch that applies to something else).
func FuzzMakePatch(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("a\nb\nc\nx\nd\ne\nf\na\nb\nc\nx\nd\ne\nf\n", "a\nb\nc\nx\nd\ne\nf\na\nb\nc\ny\nd\ne\nf\n")
	f.Add("no newline", "no newline at all")
	f.Add("l1\r\nl2\r\n", "l1\r\nL2\r\n")
	f.Add("x\n", "x\ny")
	f.Fuzz(func(t *testing.T, before, after string) {
		if before == "" || before == after || strings.ContainsRune(before+after, 0) ||
			strings.ContainsRune(before+after, '\r') != strings.Contains(before, "\r\n") {
			t.Skip()
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(before), 0o644); err != nil {
			t.Fatal(err)
		}
		ws, err := NewWorkspace(dir)
		if err != nil {
			t.Fatal(err)
		}
		patch, err := PatchFor(ws, []FileChange{{Path: "f.txt", Before: before, After: after}})
		if err != nil {
			return // refused, and said so
		}
		p, err := ParsePatch(patch)
		if err != nil {
			t.Fatalf("PatchFor made a patch that does not parse: %v\n%s", err, patch)
		}
		plan, err := PlanPatch(p, ws)
		if err != nil {
			t.Fatalf("PatchFor made a patch that does not plan: %v\n%s", err, patch)
		}
		for _, tg := range plan.targets {
			if string(tg.final.data) != after {
				t.Fatalf("the patch gives %q, want %q\n%s", tg.final.data, after, patch)
			}
		}
	})
}
