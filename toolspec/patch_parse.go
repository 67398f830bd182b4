package toolspec

import (
	"fmt"
	"regexp"
	"strings"
)

// Markers of the Codex patch format. Marker lines are compared after
// trimming surrounding whitespace, as Codex's parser does; change lines
// (" ", "-", "+") are not, because their indentation is content.
const (
	patchBegin     = "*** Begin Patch"
	patchEnd       = "*** End Patch"
	patchAddFile   = "*** Add File:"
	patchDelFile   = "*** Delete File:"
	patchUpdFile   = "*** Update File:"
	patchMoveTo    = "*** Move to:"
	patchEndOfFile = "*** End of File"
)

// PatchOp is what one file section of a patch does.
type PatchOp int

// The file operations of a patch.
const (
	PatchAdd PatchOp = iota + 1
	PatchDelete
	PatchUpdate
)

// Patch is a parsed apply_patch patch: its file sections in patch order.
type Patch struct {
	Files []FilePatch
}

// FilePatch is one "*** Add File:", "*** Delete File:" or "*** Update
// File:" section.
type FilePatch struct {
	Op     PatchOp
	Path   string
	MoveTo string   // Update only: the new name, "" when the file keeps its name
	Lines  []string // Add only: the new file's lines, without their "+"
	Hunks  []Hunk   // Update only
	Line   int      // 1-based patch line of the section header
}

// Hunk is one "@@" chunk of an Update section. It is located by its
// content, never by line numbers.
type Hunk struct {
	// Anchors are the "@@ text" lines before the chunk; each is found after
	// the previous one and the chunk is searched for after the last.
	Anchors []string
	Old     []string // context and "-" lines: what the file must hold
	New     []string // context and "+" lines: what replaces Old
	Added   int      // number of "+" lines
	Removed int      // number of "-" lines
	EOF     bool     // "*** End of File": Old must end the file
	Line    int      // 1-based patch line where the hunk starts
	// Context maps each line of New to the index of the same context
	// line in Old, or -1 for a "+" line: a context line matched loosely
	// keeps the file's text, not the patch's (the patch engine, package
	// tools, reads it).
	Context []int
}

// PatchError is a patch that cannot apply for a reason the model can fix:
// a syntax error, a hunk whose lines are not in the file, a path that is
// refused or exists when it must not. Any other error from ParsePatch,
// Plan or Apply means the system is broken.
type PatchError struct {
	Line int    // 1-based line of the patch text, 0 when not tied to one
	Path string // file the problem is in, "" when none
	Hunk int    // 1-based hunk number within the file's section, 0 when none
	Msg  string
}

func (e *PatchError) Error() string {
	var loc []string
	if e.Path != "" {
		loc = append(loc, e.Path)
	}
	if e.Hunk > 0 {
		loc = append(loc, fmt.Sprintf("hunk %d", e.Hunk))
	}
	if e.Line > 0 {
		loc = append(loc, fmt.Sprintf("patch line %d", e.Line))
	}
	if len(loc) == 0 {
		return e.Msg
	}
	return strings.Join(loc, ", ") + ": " + e.Msg
}

// heredocStart matches the first line of a patch wrapped as a shell
// heredoc, as models write it for Codex's shell form (`apply_patch
// <<'EOF'`, `cat <<'EOF' | apply_patch`, or a bare `cat <<'EOF'`, which
// Codex accepts too); group 2 is the delimiter.
var heredocStart = regexp.MustCompile(`^(?:(?:apply_patch|cat)\s+)?<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)(['"]?)(?:\s*\|\s*apply_patch)?$`)

// unifiedRange matches what follows "@@" in a unified-diff hunk header
// ("-12,7 +12,8 @@ func f()"): models trained on diffs write it, and its
// line numbers are ignored because hunks are found by content.
var unifiedRange = regexp.MustCompile(`^\s*-\d+(?:,\d+)? \+\d+(?:,\d+)? @@`)

// ParsePatch parses a patch in the Codex apply_patch format. It is as
// lenient as Codex: surrounding blank lines and a heredoc wrapper are
// stripped, marker lines may carry stray whitespace, the first hunk of a
// file may omit its "@@" line, and blank lines between hunks are skipped.
// It also accepts a patch that omits "*** Begin Patch" but starts with a
// file header, and unified-diff "@@ -a,b +c,d @@" headers (their numbers
// are ignored). "*** End Patch" is required, so a cut-off patch is refused.
// Errors are *PatchError with the line number in text.
func ParsePatch(text string) (*Patch, error) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	lo, hi := trimBlank(lines, 0, len(lines))
	if lo == hi {
		return nil, &PatchError{Msg: "the patch is empty; send '*** Begin Patch', file sections, '*** End Patch'"}
	}
	if m := heredocStart.FindStringSubmatch(strings.TrimSpace(lines[lo])); m != nil && m[1] == m[3] &&
		hi-lo >= 2 && strings.TrimSpace(lines[hi-1]) == m[2] {
		lo, hi = trimBlank(lines, lo+1, hi-1)
		if lo == hi {
			return nil, &PatchError{Line: lo, Msg: "the heredoc holds no patch"}
		}
	}
	first := strings.TrimSpace(lines[lo])
	switch {
	case first == patchBegin:
		lo++
	case isFileHeader(first):
		// Tolerated: the model forgot the opening marker but the body is
		// unambiguous.
	default:
		return nil, &PatchError{Line: lo + 1, Msg: fmt.Sprintf("the first line of the patch must be %q, got %q", patchBegin, clip(lines[lo]))}
	}
	if lo >= hi || strings.TrimSpace(lines[hi-1]) != patchEnd {
		return nil, &PatchError{Line: hi, Msg: fmt.Sprintf("the last line of the patch must be %q; the patch may be cut off", patchEnd)}
	}
	p := &patchParser{lines: lines, i: lo, end: hi - 1}
	return p.parse()
}

// trimBlank narrows lines[lo:hi] to exclude whitespace-only lines at both
// ends.
func trimBlank(lines []string, lo, hi int) (int, int) {
	for lo < hi && strings.TrimSpace(lines[lo]) == "" {
		lo++
	}
	for hi > lo && strings.TrimSpace(lines[hi-1]) == "" {
		hi--
	}
	return lo, hi
}

func isFileHeader(t string) bool {
	return strings.HasPrefix(t, patchAddFile) || strings.HasPrefix(t, patchDelFile) || strings.HasPrefix(t, patchUpdFile)
}

// clip shortens a line quoted in an error message.
func clip(s string) string {
	const max = 120
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

// patchParser walks the lines between the begin and end markers; i is the
// next line (0-based), end the index of "*** End Patch".
type patchParser struct {
	lines []string
	i     int
	end   int
}

func (p *patchParser) errAt(i int, path string, format string, a ...any) error {
	return &PatchError{Line: i + 1, Path: path, Msg: fmt.Sprintf(format, a...)}
}

func (p *patchParser) parse() (*Patch, error) {
	var patch Patch
	for p.i < p.end {
		t := strings.TrimSpace(p.lines[p.i])
		var (
			f   FilePatch
			err error
		)
		switch {
		case t == "":
			p.i++
			continue
		case strings.HasPrefix(t, patchAddFile):
			f, err = p.header(PatchAdd, t, patchAddFile)
			if err == nil {
				p.addLines(&f)
			}
		case strings.HasPrefix(t, patchDelFile):
			f, err = p.header(PatchDelete, t, patchDelFile)
		case strings.HasPrefix(t, patchUpdFile):
			f, err = p.header(PatchUpdate, t, patchUpdFile)
			if err == nil {
				err = p.update(&f)
			}
		case t == patchEnd:
			return nil, p.errAt(p.i, "", "%q before the end of the patch; send one patch per call", patchEnd)
		case t == patchBegin:
			return nil, p.errAt(p.i, "", "a second %q; send one patch per call", patchBegin)
		default:
			return nil, p.errAt(p.i, "", "%q is not a file header; expected '*** Add File: <path>', '*** Delete File: <path>', '*** Update File: <path>' or '*** End Patch'", clip(p.lines[p.i]))
		}
		if err != nil {
			return nil, err
		}
		patch.Files = append(patch.Files, f)
	}
	if len(patch.Files) == 0 {
		return nil, p.errAt(p.end, "", "the patch changes no files")
	}
	return &patch, nil
}

// header reads a file header line and moves past it.
func (p *patchParser) header(op PatchOp, t, marker string) (FilePatch, error) {
	path := strings.TrimSpace(strings.TrimPrefix(t, marker))
	if path == "" {
		return FilePatch{}, p.errAt(p.i, "", "%q names no file", t)
	}
	f := FilePatch{Op: op, Path: path, Line: p.i + 1}
	p.i++
	return f, nil
}

// addLines reads the "+" lines of an Add File section. A bare empty line
// followed by more "+" lines is taken as an empty line of the file: models
// drop the "+" of blank lines.
func (p *patchParser) addLines(f *FilePatch) {
	for p.i < p.end {
		l := p.lines[p.i]
		if rest, ok := strings.CutPrefix(l, "+"); ok {
			f.Lines = append(f.Lines, rest)
			p.i++
			continue
		}
		if l == "" {
			j := p.i
			for j < p.end && p.lines[j] == "" {
				j++
			}
			if j < p.end && strings.HasPrefix(p.lines[j], "+") {
				for ; p.i < j; p.i++ {
					f.Lines = append(f.Lines, "")
				}
				continue
			}
		}
		return
	}
}

// update reads an Update File section: an optional Move to line, then
// hunks until the next file header or the end.
func (p *patchParser) update(f *FilePatch) error {
	if p.i < p.end {
		if t := strings.TrimSpace(p.lines[p.i]); strings.HasPrefix(t, patchMoveTo) {
			f.MoveTo = strings.TrimSpace(strings.TrimPrefix(t, patchMoveTo))
			if f.MoveTo == "" {
				return p.errAt(p.i, f.Path, "%q names no file", t)
			}
			p.i++
		}
	}
	for p.i < p.end {
		l := p.lines[p.i]
		t := strings.TrimSpace(l)
		if t == "" {
			p.i++
			continue
		}
		if isFileHeader(t) || t == patchEnd || t == patchBegin {
			break
		}
		if t == patchEndOfFile {
			return p.errAt(p.i, f.Path, "%q with no hunk before it", patchEndOfFile)
		}
		if strings.HasPrefix(t, patchMoveTo) {
			return p.errAt(p.i, f.Path, "%q must come right after '*** Update File: %s'", patchMoveTo, f.Path)
		}
		if !strings.HasPrefix(l, "@@") && (len(f.Hunks) > 0 || !strings.ContainsRune(" -+", rune(l[0]))) {
			return p.errAt(p.i, f.Path, "%q is not a valid patch line: every line of a hunk starts with ' ' (context), '-' (remove) or '+' (add), and a new hunk starts with '@@'", clip(l))
		}
		h, err := p.hunk(f.Path, len(f.Hunks)+1)
		if err != nil {
			return err
		}
		f.Hunks = append(f.Hunks, h)
	}
	if len(f.Hunks) == 0 && f.MoveTo == "" {
		return p.errAt(f.Line-1, f.Path, "the Update File section has no hunks; add '@@' hunks or a '*** Move to:' line")
	}
	return nil
}

// hunk reads one hunk: its "@@" lines, then change lines up to the next
// "@@", marker or non-change line.
func (p *patchParser) hunk(path string, n int) (Hunk, error) {
	h := Hunk{Line: p.i + 1}
	for p.i < p.end && strings.HasPrefix(p.lines[p.i], "@@") {
		rest := p.lines[p.i][2:]
		if !unifiedRange.MatchString(rest) && strings.TrimSpace(rest) != "" {
			h.Anchors = append(h.Anchors, strings.TrimPrefix(rest, " "))
		}
		p.i++
	}
	changes := 0
loop:
	for ; p.i < p.end; p.i++ {
		l := p.lines[p.i]
		if l == "" {
			// Codex: a bare empty line inside a hunk is an empty context line.
			h.Context = append(h.Context, len(h.Old))
			h.Old = append(h.Old, "")
			h.New = append(h.New, "")
			changes++
			continue
		}
		switch l[0] {
		case ' ':
			h.Context = append(h.Context, len(h.Old))
			h.Old = append(h.Old, l[1:])
			h.New = append(h.New, l[1:])
		case '-':
			h.Old = append(h.Old, l[1:])
			h.Removed++
		case '+':
			h.Context = append(h.Context, -1)
			h.New = append(h.New, l[1:])
			h.Added++
		default:
			if strings.TrimSpace(l) == patchEndOfFile {
				h.EOF = true
				p.i++
			}
			break loop
		}
		changes++
	}
	if changes == 0 {
		return Hunk{}, &PatchError{Line: h.Line, Path: path, Hunk: n, Msg: "the hunk has no lines; follow '@@' with ' ', '-' or '+' lines"}
	}
	return h, nil
}
