package tools

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// utf8BOM is kept on an updated file that had it; hunks never see it.
const utf8BOM = "\ufeff"

// patchDoc is a text file split for patching. Untouched runs of lines are
// copied from the original bytes, so they keep their own line endings (a
// mixed-ending file stays byte-for-byte outside the hunks); new lines get
// the file's dominant ending.
type patchDoc struct {
	bom     bool
	text    string   // the content without its BOM
	lines   []string // without line endings
	starts  []int    // byte offset of each line in text, then len(text)
	finalNL bool     // the file ends with a line ending (or is empty)
	eol     string   // dominant ending
}

func splitDoc(data []byte) *patchDoc {
	s := string(data)
	d := &patchDoc{finalNL: len(s) == 0 || s[len(s)-1] == '\n'}
	if rest, ok := strings.CutPrefix(s, utf8BOM); ok {
		d.bom, s = true, rest
	}
	d.text = s
	n := strings.Count(s, "\n") + 1
	d.lines = make([]string, 0, n)
	d.starts = make([]int, 0, n+1)
	crlf, off := 0, 0
	for off < len(s) {
		d.starts = append(d.starts, off)
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			d.lines = append(d.lines, s[off:])
			break
		}
		line := s[off : off+i]
		if i > 0 && line[i-1] == '\r' {
			line = line[:i-1]
			crlf++
		}
		d.lines = append(d.lines, line)
		off += i + 1
	}
	d.starts = append(d.starts, len(s))
	d.eol = "\n"
	if crlf*2 > len(d.lines) {
		d.eol = "\r\n"
	}
	return d
}

// lineEOL is the ending line i has in the original, "" for none.
func (d *patchDoc) lineEOL(i int) string {
	return d.text[d.starts[i]+len(d.lines[i]) : d.starts[i+1]]
}

// replacement swaps lines[start:start+n] for repl. eols, when set, holds
// each new line's ending ("" for the file's dominant one).
type replacement struct {
	start, n int
	repl     []string
	eols     []string
}

// render writes the document with the replacements (sorted, disjoint)
// applied.
func (d *patchDoc) render(reps []replacement) []byte {
	grow := len(utf8BOM) + len(d.text)
	for _, r := range reps {
		for _, l := range r.repl {
			grow += len(l) + 2
		}
	}
	var b bytes.Buffer
	b.Grow(grow)
	if d.bom {
		b.WriteString(utf8BOM)
	}
	// pending: the last line written has no ending yet; lastEOL: the length
	// of the ending written last, dropped at the end if the file had none.
	pending, lastEOL := false, 0
	copyRun := func(from, to int) {
		if from >= to {
			return
		}
		if pending {
			b.WriteString(d.eol)
		}
		b.WriteString(d.text[d.starts[from]:d.starts[to]])
		lastEOL = len(d.lineEOL(to - 1))
		pending = lastEOL == 0
	}
	prev := 0
	for _, r := range reps {
		copyRun(prev, r.start)
		for k, l := range r.repl {
			if pending {
				b.WriteString(d.eol)
			}
			eol := d.eol
			if r.eols != nil && r.eols[k] != "" {
				eol = r.eols[k]
			}
			b.WriteString(l)
			b.WriteString(eol)
			pending, lastEOL = false, len(eol)
		}
		prev = r.start + r.n
	}
	copyRun(prev, len(d.lines))
	out := b.Bytes()
	if !d.finalNL && !pending && lastEOL > 0 {
		out = out[:len(out)-lastEOL]
	}
	if d.finalNL && pending {
		out = append(out, d.eol...)
	}
	return out
}

// applyHunks returns data with f's hunks applied, or a *PatchError naming
// the hunk that cannot be located and the lines that come closest.
func applyHunks(data []byte, f *FilePatch) ([]byte, error) {
	doc := splitDoc(data)
	pl := &patchLines{lines: doc.lines}
	reps := make([]replacement, 0, len(f.Hunks))
	cursor := 0
	for hi := range f.Hunks {
		h := &f.Hunks[hi]
		for _, a := range h.Anchors {
			pos, _ := pl.seek([]string{a}, cursor, false)
			if pos < 0 {
				return nil, hunkError(pl, f, hi, cursor, []string{a}, "cannot find the '@@' context line")
			}
			cursor = pos + 1
		}
		if len(h.Old) == 0 {
			// Pure insertion: after the anchor, or at the end of the file.
			// An insertion at the end leaves the search position where it
			// was, as Codex does: models write a hunk appending to the file
			// and then hunks editing lines above, and Codex accepts that.
			if len(h.Anchors) > 0 && !h.EOF {
				reps = append(reps, replacement{start: cursor, repl: h.New})
			} else {
				reps = append(reps, replacement{start: len(doc.lines), repl: h.New})
			}
			continue
		}
		old, nw := h.Old, h.New
		pos, _ := pl.seek(old, cursor, h.EOF)
		// Codex's retry: a trailing blank context line is often the blank
		// line the model left before the next section, not the file's.
		for pos < 0 && len(old) > 1 && old[len(old)-1] == "" && len(nw) > 0 && nw[len(nw)-1] == "" {
			old, nw = old[:len(old)-1], nw[:len(nw)-1]
			pos, _ = pl.seek(old, cursor, h.EOF)
		}
		if pos < 0 {
			return nil, hunkError(pl, f, hi, cursor, h.Old, "cannot find the hunk's context and '-' lines")
		}
		reps = append(reps, keepContext(doc, h, pos, len(old), nw))
		cursor = pos + len(old)
	}
	// An insertion at the end may come before hunks above it; render wants
	// file order. Stable, so insertions at one place keep patch order.
	slices.SortStableFunc(reps, func(a, b replacement) int { return a.start - b.start })
	return doc.render(reps), nil
}

// keepContext builds the replacement of lines[pos:pos+n] by nw, taking
// each context line from the file rather than from the patch: after a loose
// match they differ in whitespace or punctuation, and a context line is a
// promise not to change the line.
func keepContext(doc *patchDoc, h *Hunk, pos, n int, nw []string) replacement {
	repl := make([]string, len(nw))
	eols := make([]string, len(nw))
	for k, l := range nw {
		repl[k] = l
		if k < len(h.Context) {
			if j := h.Context[k]; j >= 0 && j < n {
				repl[k], eols[k] = doc.lines[pos+j], doc.lineEOL(pos+j)
			}
		}
	}
	return replacement{start: pos, n: n, repl: repl, eols: eols}
}

// hunkError explains a hunk that cannot be located: what was sought, where
// the file comes closest, and whether the lines exist before the search
// start (hunks out of file order).
func hunkError(pl *patchLines, f *FilePatch, hi, cursor int, want []string, what string) error {
	h := &f.Hunks[hi]
	var b strings.Builder
	fmt.Fprintf(&b, "%s", what)
	if h.EOF {
		b.WriteString(" at the end of the file ('*** End of File')")
	}
	if cursor > 0 {
		fmt.Fprintf(&b, " after line %d", cursor)
	}
	b.WriteString(":\n")
	for _, l := range want {
		fmt.Fprintf(&b, "    %s\n", clip(l))
	}
	if cursor > 0 {
		if pos, _ := pl.seek(want, 0, false); pos >= 0 && pos < cursor {
			fmt.Fprintf(&b, "These lines are at line %d, before the previous hunk: hunks must be in file order.\n", pos+1)
			return &PatchError{Line: h.Line, Path: f.Path, Hunk: hi + 1, Msg: strings.TrimSuffix(b.String(), "\n")}
		}
	}
	pos, score := pl.nearestLines(want)
	if pos < 0 {
		b.WriteString("The file has no similar lines.")
	} else {
		fmt.Fprintf(&b, "Closest lines in %s (%.0f%% similar), starting at line %d:\n", f.Path, score*100, pos+1)
		for i := pos; i < min(pos+max(len(want), 1), len(pl.lines), pos+8); i++ {
			fmt.Fprintf(&b, "    %d: %s\n", i+1, clip(pl.lines[i]))
		}
		b.WriteString("Copy context lines exactly from the file, or re-read it.")
	}
	return &PatchError{Line: h.Line, Path: f.Path, Hunk: hi + 1, Msg: b.String()}
}

// countLines counts the lines of a file's content as a diff would.
func countLines(data []byte) int {
	if len(data) == 0 {
		return 0
	}
	n := bytes.Count(data, []byte{'\n'})
	if data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// fileState is what one path holds: nothing, or a file's bytes and mode.
type fileState struct {
	exists bool
	dir    bool // a directory: no operation may touch it
	data   []byte
	mode   fs.FileMode
}

// planTarget is one path a plan touches: how it was when planned and how
// the patch leaves it.
type planTarget struct {
	real    string // located path relative to the project root (see entry)
	display string
	orig    fileState
	final   fileState
	// fileInWay names a file where a parent directory of the path
	// should be (see entry).
	fileInWay string
}

func (t *planTarget) changed() bool {
	if t.orig.exists != t.final.exists {
		return true
	}
	return t.final.exists && (!bytes.Equal(t.orig.data, t.final.data) || t.orig.mode != t.final.mode)
}

// PatchChange is one line of a plan's summary: a file section's effect.
type PatchChange struct {
	Op      PatchOp
	Path    string
	MoveTo  string // set when an Update renames the file
	Added   int
	Removed int
}

// PatchPlan is a patch located in a workspace: every hunk found, every new
// file content computed, nothing written yet. Apply writes it.
type PatchPlan struct {
	ws      *Workspace
	changes []PatchChange
	targets []*planTarget
	byReal  map[string]*planTarget
	// writeHook, set by tests, runs before each path is written or removed;
	// its error counts as that write failing, so the rollback is tested
	// without relying on permissions (the tests may run as root).
	writeHook func(abs string) error
}

// PlanPatch reads every file the patch touches, locates every hunk and computes
// the new contents, writing nothing. Sections apply in order to the result
// of the sections before them, so a patch may, say, update a file and then
// move it. Problems the model can fix are a *PatchError; a path outside ws
// is one of them.
func PlanPatch(p *Patch, ws *Workspace) (*PatchPlan, error) {
	pl := &PatchPlan{ws: ws, byReal: make(map[string]*planTarget)}
	for i := range p.Files {
		f := &p.Files[i]
		t, err := pl.target(ws, f.Path, f.Line)
		if err != nil {
			return nil, err
		}
		refuse := func(format string, a ...any) error {
			return &PatchError{Line: f.Line, Path: f.Path, Msg: fmt.Sprintf(format, a...)}
		}
		if t.final.dir {
			return nil, refuse("is a directory; patches change files")
		}
		change := PatchChange{Op: f.Op, Path: f.Path}
		switch f.Op {
		case PatchAdd:
			if t.final.exists {
				return nil, refuse("already exists; use '*** Update File:' to change it, or delete it first")
			}
			if err := t.checkParents(); err != nil {
				return nil, refuse("%v", err)
			}
			content := ""
			if len(f.Lines) > 0 {
				content = strings.Join(f.Lines, "\n") + "\n"
			}
			t.final = fileState{exists: true, data: []byte(content), mode: writeDefaultMode}
			change.Added = len(f.Lines)
		case PatchDelete:
			if !t.final.exists {
				return nil, refuse("does not exist, so it cannot be deleted")
			}
			change.Removed = countLines(t.final.data)
			t.final = fileState{}
		case PatchUpdate:
			if !t.final.exists {
				return nil, refuse("does not exist; use '*** Add File:' to create it")
			}
			data, err := applyHunks(t.final.data, f)
			if err != nil {
				return nil, err
			}
			for _, h := range f.Hunks {
				change.Added += h.Added
				change.Removed += h.Removed
			}
			dst := t
			if f.MoveTo != "" {
				dst, err = pl.target(ws, f.MoveTo, f.Line+1)
				if err != nil {
					return nil, err
				}
				if dst != t {
					change.MoveTo = f.MoveTo
					if dst.final.dir {
						return nil, refuse("cannot move to %s: it is a directory", f.MoveTo)
					}
					if dst.final.exists {
						return nil, refuse("cannot move to %s: it already exists", f.MoveTo)
					}
					if err := dst.checkParents(); err != nil {
						return nil, refuse("cannot move to %s: %v", f.MoveTo, err)
					}
				}
			}
			mode := t.final.mode
			if dst != t {
				t.final = fileState{}
			}
			dst.final = fileState{exists: true, data: data, mode: mode}
		default:
			return nil, refuse("unknown operation %d", f.Op)
		}
		pl.changes = append(pl.changes, change)
	}
	return pl, nil
}

// target returns the plan's entry for a path, reading the file the first
// time the path is named.
func (pl *PatchPlan) target(ws *Workspace, path string, line int) (*planTarget, error) {
	for range maxLocateTries {
		t, err := pl.targetOnce(ws, path, line)
		if !errors.Is(err, errSwapped) {
			return t, err
		}
	}
	return nil, &PatchError{Line: line, Path: path, Msg: fmt.Sprintf("%v %d times; try again", errSwapped, maxLocateTries)}
}

func (pl *PatchPlan) targetOnce(ws *Workspace, path string, line int) (*planTarget, error) {
	e, err := ws.locate(path)
	if err != nil {
		return nil, &PatchError{Line: line, Path: path, Msg: err.Error()}
	}
	defer e.Close()
	if t, ok := pl.byReal[e.real]; ok {
		return t, nil
	}
	st, err := readState(e)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, &PatchError{Line: line, Path: path, Msg: "permission denied"}
		}
		return nil, err
	}
	t := &planTarget{real: e.real, display: path, orig: st, final: st, fileInWay: e.fileInWay}
	pl.byReal[e.real] = t
	pl.targets = append(pl.targets, t)
	return t, nil
}

// readState reads what a located path holds now.
func readState(e *entry) (fileState, error) {
	switch {
	case e.info == nil:
		return fileState{}, nil
	case e.info.IsDir():
		return fileState{exists: true, dir: true}, nil
	}
	data, err := e.readAll()
	if err != nil {
		if errors.Is(err, errSwapped) {
			return fileState{}, err
		}
		return fileState{}, fmt.Errorf("read file %s: %w", e.real, err)
	}
	return fileState{exists: true, data: data, mode: e.info.Mode().Perm()}, nil
}

// checkParents fails when a parent of a file to create is a file.
func (t *planTarget) checkParents() error {
	if t.fileInWay == "" {
		return nil
	}
	return fmt.Errorf("its parent %s is a file, not a directory", path.Base(t.fileInWay))
}

// Changes returns the plan's effect, one entry per file section.
func (pl *PatchPlan) Changes() []PatchChange { return pl.changes }

// Summary is what the model reads after a successful apply: one line per
// file section, A added, M updated, R moved, D deleted, with line counts.
func (pl *PatchPlan) Summary() string {
	var b strings.Builder
	b.WriteString("Success. Updated the following files:")
	for _, c := range pl.changes {
		switch {
		case c.MoveTo != "":
			fmt.Fprintf(&b, "\nR %s -> %s", c.Path, c.MoveTo)
		case c.Op == PatchAdd:
			fmt.Fprintf(&b, "\nA %s", c.Path)
		case c.Op == PatchDelete:
			fmt.Fprintf(&b, "\nD %s", c.Path)
		default:
			fmt.Fprintf(&b, "\nM %s", c.Path)
		}
		fmt.Fprintf(&b, " (+%d -%d)", c.Added, c.Removed)
	}
	return b.String()
}

// clip shortens a line quoted in an error message, as the patch parser
// quotes them (toolspec).
func clip(s string) string {
	const max = 120
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
