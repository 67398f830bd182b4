package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/longrun/longrun/toolspec"
	"io/fs"
	"strings"
)

// WriteName is the name the model calls the write tool by.
const WriteName = toolspec.WriteName

// writeDefaultMode is the mode of a new file, the usual umask-applied
// default for source files.
const writeDefaultMode fs.FileMode = 0o644

//go:embed write.md
var writeDescription string

// WriteParams are the write tool's arguments.
type WriteParams struct {
	Path    string `json:"path" jsonschema:"File to write, relative to the workspace root. Parent directories are created."`
	Content string `json:"content" jsonschema:"The complete content of the file."`
}

// Write creates or replaces a whole file. It mutates the workspace, so it
// needs approval and runs at most once.
type Write struct{}

// NewWrite returns the write tool.
func NewWrite() *Write { return &Write{} }

// Spec describes the write tool.
func (*Write) Spec() Spec {
	return Spec{
		Name:        WriteName,
		Description: writeDescription,
		Parameters: paramsSchema[WriteParams](func(p paramProps) {
			nonEmpty(p["path"])
		}),
		ReadOnly:       false,
		TimeoutSeconds: 60,
		EditsFiles:     true,
		Meta:           MetaVersion, Concurrency: ConcurrencyExclusive,
		SubjectArg: "path", SubjectKind: SubjectPath, Paths: PathsArg, SummaryArg: "path",
	}
}

// Run writes the file.
func (*Write) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	if env.Workspace == nil {
		return Result{}, errors.New("tool write: no workspace")
	}
	var p WriteParams
	if err := unmarshalArgs(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	if p.Path == "" {
		return Errorf("path is empty; name the file to write"), nil
	}
	if _, err := env.Workspace.Resolve(p.Path); err != nil {
		return Errorf("%v", err), nil
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	return retrySwapped(p.Path, func() (Result, error) { return writeOnce(env, p) })
}

// writeOnce locates the file and writes it once.
func writeOnce(env Env, p WriteParams) (Result, error) {
	e, err := env.Workspace.locateChange(env, p.Path)
	if err != nil {
		return Errorf("%v", err), nil
	}
	defer e.Close()
	// One lock per file: a write never interleaves with an edit or patch.
	defer LockFile(env.Workspace.lockKey(e))()
	mode := writeDefaultMode
	created := e.info == nil
	switch {
	case e.fileInWay != "":
		return Errorf("cannot create directory for %s: a parent is a file, not a directory", p.Path), nil
	case !created && e.info.IsDir():
		return Errorf("%s is a directory; give a file path", p.Path), nil
	case !created:
		mode = e.info.Mode().Perm()
	}
	if created && strings.Contains(e.name, "/") {
		if err := e.mkdirParents(nil, false); err != nil {
			if errors.Is(err, errSwapped) {
				return Result{}, err
			}
			return Errorf("cannot create directory for %s: %v", p.Path, err), nil
		}
	}
	before := ""
	if !created {
		raw, err := e.readAll()
		if err != nil {
			if errors.Is(err, errSwapped) {
				return Result{}, err
			}
			return Result{}, fmt.Errorf("read file %s: %w", e.real, err)
		}
		if msg := env.staleCheck(p.Path, e.real, raw); msg != "" {
			return Errorf("%s", msg), nil
		}
		before = string(raw)
	}
	content := keepFileConventions(before, p.Content)
	if err := e.writeAtomic([]byte(content), mode); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return Errorf("permission denied: %s", p.Path), nil
		}
		return Result{}, err
	}
	verb := "overwrote"
	if created {
		verb = "created"
	}
	msg := fmt.Sprintf("wrote %d bytes to %s (%s)", len(content), p.Path, verb)
	if !created {
		diff := UnifiedDiff(p.Path, normalizeEndings(before), normalizeEndings(content))
		if diff == "" {
			msg += "; the content is unchanged"
		} else {
			msg += "\n" + diff
		}
	}
	return Result{Content: msg, Files: []FileVersion{env.Workspace.version(e.real, []byte(content))}}, nil
}

// keepFileConventions gives new content the line endings and BOM of the
// file it replaces, so a model that writes LF does not flip a CRLF file.
func keepFileConventions(before, content string) string {
	if before == "" {
		return content
	}
	bom := strings.HasPrefix(before, editBOM)
	content = strings.TrimPrefix(content, editBOM)
	if editUsesCRLF(strings.TrimPrefix(before, editBOM)) {
		content = strings.ReplaceAll(strings.ReplaceAll(content, "\r\n", "\n"), "\n", "\r\n")
	}
	if bom {
		content = editBOM + content
	}
	return content
}

// normalizeEndings strips a BOM and turns CRLF into LF, for diffs.
func normalizeEndings(s string) string {
	return strings.ReplaceAll(strings.TrimPrefix(s, editBOM), "\r\n", "\n")
}
