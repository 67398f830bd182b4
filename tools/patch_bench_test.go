package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// patchBenchFixture is the benchmark's file and patch: benchLines lines and
// hunks changes, each replacing one line with two under three lines of
// context either side. testdata/patch/bench.sh generates the same shape
// for the comparison with git apply.
func patchBenchFixture(lines, hunks int) (base, patch, want string) {
	line := func(i int) string {
		return fmt.Sprintf("\tvalue%d := compute(%d, \"payload-%d\") // line %d", i, i, i, i)
	}
	step := lines / hunks
	changed := map[int]bool{}
	for k := range hunks {
		changed[step/2+k*step] = true
	}
	var b, p, w strings.Builder
	p.WriteString("*** Begin Patch\n*** Update File: big.txt\n")
	for i := 1; i <= lines; i++ {
		fmt.Fprintln(&b, line(i))
		if !changed[i] {
			fmt.Fprintln(&w, line(i))
			continue
		}
		fmt.Fprintf(&w, "\tchanged%d := compute(%d, \"new\")\n\tadded%d := changed%d + 1\n", i, i, i, i)
		p.WriteString("@@\n")
		for c := i - 3; c < i; c++ {
			fmt.Fprintf(&p, " %s\n", line(c))
		}
		fmt.Fprintf(&p, "-%s\n+\tchanged%d := compute(%d, \"new\")\n+\tadded%d := changed%d + 1\n", line(i), i, i, i, i)
		for c := i + 1; c <= i+3; c++ {
			fmt.Fprintf(&p, " %s\n", line(c))
		}
	}
	p.WriteString("*** End Patch\n")
	return b.String(), p.String(), w.String()
}

func TestPatchBenchFixture(t *testing.T) {
	t.Parallel()
	base, patch, want := patchBenchFixture(2000, 10)
	ws := testWorkspace(t, map[string]string{"big.txt": base})
	res := runTool(t, context.Background(), NewApplyPatch(), Env{Workspace: ws}, PatchParams{Patch: patch})
	require.False(t, res.IsError, res.Content)
	got, err := os.ReadFile(filepath.Join(ws.Root(), "big.txt"))
	require.NoError(t, err)
	require.Equal(t, want, string(got))
}

// BenchmarkApplyPatch100Hunks measures one whole apply_patch call: parse,
// read, locate 100 hunks in a 50,000-line file, write through a temp file
// (with fsync) and rename. Restoring the file between runs is not timed.
func BenchmarkApplyPatch100Hunks(b *testing.B) {
	base, patch, _ := patchBenchFixture(50_000, 100)
	dir := b.TempDir()
	ws, err := NewWorkspace(dir)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "big.txt")
	b.SetBytes(int64(len(base)))
	for b.Loop() {
		b.StopTimer()
		if err := os.WriteFile(path, []byte(base), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		p, err := ParsePatch(patch)
		if err != nil {
			b.Fatal(err)
		}
		plan, err := PlanPatch(p, ws)
		if err != nil {
			b.Fatal(err)
		}
		if err := plan.Apply(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanPatch100Hunks is the same without the writes: parse, read
// and locate only.
func BenchmarkPlanPatch100Hunks(b *testing.B) {
	base, patch, _ := patchBenchFixture(50_000, 100)
	dir := b.TempDir()
	ws, err := NewWorkspace(dir)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(base), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		p, err := ParsePatch(patch)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := PlanPatch(p, ws); err != nil {
			b.Fatal(err)
		}
	}
}
