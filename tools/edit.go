package tools

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/longrun/longrun/toolspec"
	"io/fs"
	"strings"
	"sync"
)

// EditName is the name the model calls the edit tool by.
const EditName = toolspec.EditName

// editMaxFileSize bounds the file an edit loads whole.
const editMaxFileSize = 10 << 20

const editBOM = "\ufeff"

//go:embed edit.md
var editDescription string

// EditParams are the edit tool's arguments.
type EditParams struct {
	Path       string `json:"path" jsonschema:"File to edit, relative to the workspace root."`
	OldString  string `json:"old_string" jsonschema:"The exact text to replace; empty only to create a new file."`
	NewString  string `json:"new_string" jsonschema:"The text to put in its place."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence instead of requiring exactly one. Default false."`
}

// Edit replaces text in one file. It mutates the workspace, so it needs
// approval and runs at most once.
type Edit struct{}

// NewEdit returns the edit tool.
func NewEdit() *Edit { return &Edit{} }

// Spec describes the edit tool.
func (*Edit) Spec() Spec {
	return Spec{
		Name:        EditName,
		Description: editDescription,
		Parameters: paramsSchema[EditParams](func(p paramProps) {
			nonEmpty(p["path"])
		}),
		ReadOnly:       false,
		TimeoutSeconds: 60,
		EditsFiles:     true,
		Meta:           MetaVersion, Concurrency: ConcurrencyExclusive,
		SubjectArg: "path", SubjectKind: SubjectPath, Paths: PathsArg, SummaryArg: "path",
	}
}

// editLocks serialises edits of one file (by resolved path), so two edits
// running in parallel never read the same old content and lose one change.
var editLocks struct {
	sync.Mutex
	m map[string]*editLock
}

type editLock struct {
	sync.Mutex
	users int
}

// LockFile locks the file at path (the absolute real path of a located file)
// against other edits and returns its unlock. Tools that rewrite files take
// it so an edit and a write of the same file never interleave. Entries are
// removed when no one holds or waits for them, so the map stays as small
// as the edits in flight.
func LockFile(path string) func() {
	editLocks.Lock()
	if editLocks.m == nil {
		editLocks.m = make(map[string]*editLock)
	}
	l := editLocks.m[path]
	if l == nil {
		l = &editLock{}
		editLocks.m[path] = l
	}
	l.users++
	editLocks.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		editLocks.Lock()
		l.users--
		if l.users == 0 {
			delete(editLocks.m, path)
		}
		editLocks.Unlock()
	}
}

// Run applies the edit.
func (*Edit) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	if env.Workspace == nil {
		return Result{}, errors.New("tool edit: no workspace")
	}
	var p EditParams
	if err := unmarshalArgs(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	if p.Path == "" {
		return Errorf("path is empty; name the file to edit"), nil
	}
	if p.OldString == p.NewString {
		return Errorf("old_string and new_string are identical: there is nothing to change"), nil
	}
	if _, err := env.Workspace.Resolve(p.Path); err != nil {
		return Errorf("%v", err), nil
	}
	return retrySwapped(p.Path, func() (Result, error) { return editOnce(ctx, env, p) })
}

// editOnce locates the file and edits it once.
func editOnce(ctx context.Context, env Env, p EditParams) (Result, error) {
	e, err := env.Workspace.locateChange(env, p.Path)
	if err != nil {
		return Errorf("%v", err), nil
	}
	defer e.Close()
	unlock := LockFile(env.Workspace.lockKey(e))
	defer unlock()
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	switch {
	case e.info == nil && e.fileInWay == "" && p.OldString == "":
		res, err := editCreate(p, e)
		if err == nil && !res.IsError {
			res.Files = []FileVersion{env.Workspace.version(e.real, []byte(p.NewString))}
		}
		return res, err
	case e.info == nil:
		return notFound(p.Path, e), nil
	case e.info.IsDir():
		return Errorf("%s is a directory; give a file path", p.Path), nil
	case e.info.Size() > editMaxFileSize:
		return Errorf("%s is %d bytes, over the %d MB edit limit; use shell tools for it", p.Path, e.info.Size(), editMaxFileSize>>20), nil
	}
	raw, err := e.readAll()
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return Errorf("permission denied: %s", p.Path), nil
		}
		if errors.Is(err, errSwapped) {
			return Result{}, err
		}
		return Result{}, fmt.Errorf("read file %s: %w", e.real, err)
	}
	if bytes.IndexByte(raw[:min(len(raw), readSniffBytes)], 0) >= 0 {
		return Errorf("cannot edit %s: binary file", p.Path), nil
	}
	if msg := env.staleCheck(p.Path, e.real, raw); msg != "" {
		return Errorf("%s", msg), nil
	}
	res, after, ok := editContent(string(raw), p)
	if !ok {
		return res, nil
	}
	if err := e.writeAtomic([]byte(after), e.info.Mode().Perm()); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return Errorf("permission denied: %s", p.Path), nil
		}
		return Result{}, err
	}
	res.Files = []FileVersion{env.Workspace.version(e.real, []byte(after))}
	return res, nil
}

// editCreate makes a new file holding new_string, as an edit with an empty
// old_string asks.
func editCreate(p EditParams, e *entry) (Result, error) {
	if strings.Contains(e.name, "/") {
		if err := e.mkdirParents(nil, false); err != nil {
			if errors.Is(err, errSwapped) {
				return Result{}, err
			}
			return Errorf("cannot create directory for %s: %v", p.Path, err), nil
		}
	}
	if err := e.writeAtomic([]byte(p.NewString), writeDefaultMode); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return Errorf("permission denied: %s", p.Path), nil
		}
		return Result{}, err
	}
	return Result{Content: fmt.Sprintf("created %s (%d bytes)\n%s", p.Path, len(p.NewString), UnifiedDiff(p.Path, "", p.NewString))}, nil
}

// editContent applies the edit to a file's text. ok is false when the edit
// cannot apply; the result then says why. Matching works on the text with
// its BOM removed and CRLF line endings turned into LF, and old_string and
// new_string are normalised the same way, so the model never has to write
// a CR; the file's endings and BOM are put back afterwards.
func editContent(raw string, p EditParams) (res Result, after string, ok bool) {
	bom := strings.HasPrefix(raw, editBOM)
	text := strings.TrimPrefix(raw, editBOM)
	crlf := editUsesCRLF(text)
	if crlf {
		text = strings.ReplaceAll(text, "\r\n", "\n")
	}
	oldS := strings.TrimPrefix(strings.ReplaceAll(p.OldString, "\r\n", "\n"), editBOM)
	newS := strings.TrimPrefix(strings.ReplaceAll(p.NewString, "\r\n", "\n"), editBOM)
	if oldS == newS {
		return Errorf("old_string and new_string are identical once line endings are normalised: there is nothing to change"), "", false
	}
	var edited, how string
	switch {
	case oldS == "" && text == "":
		edited = newS
	case oldS == "":
		return Errorf("old_string is empty but %s already has content; give the text to replace, or use write to replace the whole file", p.Path), "", false
	default:
		out := findEditMatches(text, oldS, newS, p.ReplaceAll)
		if len(out.cands) == 0 {
			return editNoMatch(p, out), "", false
		}
		edited = applyEditCandidates(text, out.cands)
		how = out.matcher
		if len(out.cands) > 1 {
			how = fmt.Sprintf("%s, %d replacements", how, len(out.cands))
		}
	}
	diff := UnifiedDiff(p.Path, text, edited)
	if crlf {
		edited = strings.ReplaceAll(edited, "\n", "\r\n")
	}
	if bom {
		edited = editBOM + edited
	}
	var b strings.Builder
	fmt.Fprintf(&b, "edited %s", p.Path)
	switch {
	case how == "" || how == matchExact:
	case strings.HasPrefix(how, matchExact+","):
		fmt.Fprintf(&b, " (%s)", strings.TrimPrefix(how, matchExact+", "))
	default:
		fmt.Fprintf(&b, " (old_string did not match exactly; matched with %s: check the diff)", how)
	}
	b.WriteByte('\n')
	b.WriteString(diff)
	return Result{Content: b.String()}, edited, true
}

// editUsesCRLF reports whether most of text's line breaks are CRLF; a file
// with mixed endings is written back with CRLF throughout.
func editUsesCRLF(text string) bool {
	crlf := strings.Count(text, "\r\n")
	return crlf > 0 && 2*crlf >= strings.Count(text, "\n")
}

// editNoMatch tells the model why old_string did not apply and what to do.
func editNoMatch(p EditParams, out editOutcome) Result {
	if out.ambiguous != "" {
		how := ""
		if out.ambiguous != matchExact {
			how = fmt.Sprintf(" (with %s matching)", out.ambiguous)
		}
		return Errorf("old_string occurs %d times in %s%s. Add surrounding lines to old_string so it matches exactly one place, or set replace_all to true to change every occurrence", out.ambigCount, p.Path, how)
	}
	msg := fmt.Sprintf("old_string was not found in %s, not even ignoring whitespace and indentation differences", p.Path)
	if out.refused > 0 {
		msg += fmt.Sprintf(" (%d lenient candidates were refused because their length differed too much from old_string)", out.refused)
	}
	return Errorf("%s. Read the file again and copy the exact text, including indentation, without line-number prefixes", msg)
}
