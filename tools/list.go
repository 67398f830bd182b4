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

// ListName is the name the model calls the list tool by.
const ListName = "list"

// List defaults, chosen so one listing of a typical repository fits in a
// model turn without hiding its shape.
const (
	listDefaultDepth = 3
	listDefaultLimit = 500
	// listCountCap bounds the walk that only counts entries past the limit,
	// so listing a huge tree stays cheap.
	listCountCap = 50000
)

//go:embed list.md
var listDescription string

// ListParams are the list tool's arguments.
type ListParams struct {
	Path  string `json:"path,omitempty"`
	Depth int    `json:"depth,omitempty"`
	Limit int    `json:"limit,omitempty"`
}

// List shows a directory tree. It is read-only, so it runs without approval.
type List struct{}

// NewList returns the list tool.
func NewList() *List { return &List{} }

// Spec describes the list tool.
func (*List) Spec() Spec {
	return Spec{
		Name:        ListName,
		Description: listDescription,
		Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory to list, relative to the workspace root. Default: the root."},
    "depth": {"type": "integer", "minimum": 1, "maximum": 20, "description": "How many levels to descend. Default 3."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 5000, "description": "Maximum number of entries to show. Default 500."}
  },
  "required": [],
  "additionalProperties": false
}`),
		ReadOnly:       true,
		TimeoutSeconds: 60,
	}
}

// Run lists the directory.
func (*List) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	if env.Workspace == nil {
		return Result{}, errors.New("tool list: no workspace")
	}
	var p ListParams
	if err := unmarshalArgs(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	if p.Path == "" {
		p.Path = "."
	}
	if p.Depth <= 0 {
		p.Depth = listDefaultDepth
	}
	if p.Limit <= 0 {
		p.Limit = listDefaultLimit
	}
	abs, err := env.Workspace.Resolve(p.Path)
	if err != nil {
		return Errorf("%v", err), nil
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return Errorf("directory not found: %s", p.Path), nil
	}
	if err != nil {
		return Result{}, fmt.Errorf("stat %s: %w", abs, err)
	}
	if !fi.IsDir() {
		return Errorf("%s is a file, not a directory; use read to see its contents", p.Path), nil
	}
	out, err := listTree(ctx, env.Workspace, abs, p.Depth, p.Limit)
	if err != nil {
		return Result{}, err
	}
	return Result{Content: out}, nil
}

// lister walks a tree, writing the first limit entries and counting the
// rest.
type lister struct {
	ws     *Workspace
	ignore *Gitignore
	limit  int
	shown  int
	more   int
	b      strings.Builder
}

// listTree renders the directory abs (inside ws) to the given depth, with
// the root's .gitignore applied. The read tool reuses it for directories.
func listTree(ctx context.Context, ws *Workspace, abs string, depth, limit int) (string, error) {
	ig, err := LoadGitignore(ws.Root())
	if err != nil {
		return "", err
	}
	l := &lister{ws: ws, ignore: ig, limit: limit}
	l.b.WriteString(ws.rel(abs) + "/\n")
	if err := l.walk(ctx, abs, 1, depth); err != nil {
		return "", err
	}
	if l.shown == 0 && l.more == 0 {
		l.b.WriteString("(empty directory)\n")
	}
	if l.more > 0 {
		more := fmt.Sprint(l.more)
		if l.more >= listCountCap {
			more = "at least " + more
		}
		fmt.Fprintf(&l.b, "(%s more entries not shown; list a subdirectory or raise limit)\n", more)
	}
	return l.b.String(), nil
}

func (l *lister) walk(ctx context.Context, dir string, level, depth int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if l.shown < l.limit {
			fmt.Fprintf(&l.b, "%s(cannot read: %v)\n", strings.Repeat("  ", level), err)
		}
		return nil
	}
	for _, e := range entries {
		if l.more >= listCountCap {
			return nil
		}
		full := filepath.Join(dir, e.Name())
		rel := l.ws.rel(full)
		isDir := e.IsDir()
		if e.Name() == ".git" || l.ignore.Ignored(rel, isDir) {
			continue
		}
		if l.shown < l.limit {
			l.b.WriteString(strings.Repeat("  ", level))
			l.b.WriteString(entryLabel(full, e))
			l.b.WriteByte('\n')
			l.shown++
		} else {
			l.more++
		}
		if isDir && level < depth {
			if err := l.walk(ctx, full, level+1, depth); err != nil {
				return err
			}
		}
	}
	return nil
}

// entryLabel is how one entry appears: directories end in "/", symlinks
// show their target because they are not followed.
func entryLabel(full string, e fs.DirEntry) string {
	switch {
	case e.IsDir():
		return e.Name() + "/"
	case e.Type()&fs.ModeSymlink != 0:
		target, err := os.Readlink(full)
		if err != nil {
			return e.Name() + " -> ?"
		}
		return e.Name() + " -> " + target
	}
	return e.Name()
}

// unmarshalArgs decodes already-validated arguments, still defensively: an
// empty payload is an empty object and a decoding failure is reported to the
// model rather than crashing the tool.
func unmarshalArgs(args json.RawMessage, v any) error {
	if len(strings.TrimSpace(string(args))) == 0 {
		return nil
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("arguments do not decode: %v", err)
	}
	return nil
}
