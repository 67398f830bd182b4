package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// WriteName is the name the model calls the write tool by.
const WriteName = "write"

// writeDefaultMode is the mode of a new file, the usual umask-applied
// default for source files.
const writeDefaultMode fs.FileMode = 0o644

//go:embed write.md
var writeDescription string

// WriteParams are the write tool's arguments.
type WriteParams struct {
	Path    string `json:"path"`
	Content string `json:"content"`
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
		Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "File to write, relative to the workspace root. Parent directories are created."},
    "content": {"type": "string", "description": "The complete content of the file."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`),
		ReadOnly:       false,
		TimeoutSeconds: 60,
		EditsFiles:     true,
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
	abs, err := env.Workspace.Resolve(p.Path)
	if err != nil {
		return Errorf("%v", err), nil
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	// One lock per file: a write never interleaves with an edit or patch.
	defer LockFile(abs)()
	mode := writeDefaultMode
	created := true
	fi, err := os.Stat(abs)
	switch {
	case err == nil && fi.IsDir():
		return Errorf("%s is a directory; give a file path", p.Path), nil
	case err == nil:
		mode = fi.Mode().Perm()
		created = false
	case errors.Is(err, syscall.ENOTDIR):
		return Errorf("cannot create directory for %s: a parent is a file, not a directory", p.Path), nil
	case !errors.Is(err, fs.ErrNotExist):
		return Result{}, fmt.Errorf("stat %s: %w", abs, err)
	}
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Errorf("cannot create directory for %s: %v", p.Path, err), nil
	}
	before := ""
	if !created {
		raw, err := os.ReadFile(abs)
		if err != nil {
			return Result{}, fmt.Errorf("read file %s: %w", abs, err)
		}
		if msg := env.staleCheck(p.Path, abs, raw); msg != "" {
			return Errorf("%s", msg), nil
		}
		before = string(raw)
	}
	content := keepFileConventions(before, p.Content)
	if err := writeAtomic(abs, []byte(content), mode); err != nil {
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
	return Result{Content: msg, Files: []FileVersion{env.Workspace.version(abs, []byte(content))}}, nil
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

// writeAtomic writes data to a temporary file in the target's directory and
// renames it over the target, so a crash or a concurrent reader never sees a
// half-written file.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temp file for %s: %w", path, err)
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write file %s: %w", name, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("chmod %s: %w", name, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", name, err)
	}
	if err := os.Rename(name, path); err != nil {
		return fmt.Errorf("rename %s to %s: %w", name, path, err)
	}
	ok = true
	return nil
}
