package tools

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// FileChange is one file's content before and after a change made
// elsewhere (a language server's rename), to be written as a patch.
type FileChange struct {
	Path          string // relative to the workspace root, slash-separated
	Before, After string
}

// MakePatch writes changes as one apply_patch patch, files in path
// order, each hunk with context lines of unchanged context around it
// (context < 0: the whole file, which no other place can match).
func MakePatch(changes []FileChange, context int) string {
	sorted := append([]FileChange(nil), changes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	var out strings.Builder
	out.WriteString("*** Begin Patch\n")
	for _, c := range sorted {
		a, b := udLines(normalizeEndings(c.Before)), udLines(normalizeEndings(c.After))
		ops := udScript(a, b)
		fmt.Fprintf(&out, "*** Update File: %s\n", c.Path)
		ctx := context
		if ctx < 0 {
			ctx = len(ops)
		}
		for i := 0; i < len(ops); {
			if ops[i].kind == ' ' {
				i++
				continue
			}
			start, stop := udHunkRange(ops, i, ctx)
			out.WriteString("@@\n")
			for _, op := range ops[start:stop] {
				line := ""
				switch op.kind {
				case ' ', '-':
					line = a[op.old]
				case '+':
					line = b[op.new]
				}
				out.WriteByte(op.kind)
				out.WriteString(strings.TrimSuffix(line, "\n"))
				out.WriteByte('\n')
			}
			if stop == len(ops) && !strings.HasSuffix(normalizeEndings(c.After), "\n") {
				out.WriteString("*** End of File\n")
			}
			i = stop
		}
	}
	out.WriteString("*** End Patch\n")
	return out.String()
}

// PatchFor writes changes as a patch that ws applies to exactly the After
// contents: with 3 lines of context when that finds each hunk where it
// belongs, else with whole files as context. It fails when the files no
// longer hold the Before contents.
func PatchFor(ws *Workspace, changes []FileChange) (string, error) {
	var err error
	for _, context := range []int{udContext, -1} {
		patch := MakePatch(changes, context)
		if err = patchGives(ws, patch, changes); err == nil {
			return patch, nil
		}
	}
	return "", err
}

// patchGives plans patch on ws and checks it leaves every file as changes
// say.
func patchGives(ws *Workspace, patch string, changes []FileChange) error {
	p, err := ParsePatch(patch)
	if err != nil {
		return err
	}
	plan, err := PlanPatch(p, ws)
	if err != nil {
		return err
	}
	want := map[string]string{}
	for _, c := range changes {
		want[c.Path] = c.After
	}
	for _, t := range plan.targets {
		after, ok := want[t.display]
		if !ok || !bytes.Equal(t.final.data, []byte(after)) {
			return fmt.Errorf("the patch does not give %s as the server computed it", t.display)
		}
	}
	return nil
}
