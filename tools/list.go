package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
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
	Path  string `json:"path,omitempty" jsonschema:"Directory to list, relative to the workspace root. Default: the root."`
	Depth int    `json:"depth,omitempty" jsonschema:"How many levels to descend. Default 3."`
	Limit int    `json:"limit,omitempty" jsonschema:"Maximum number of entries to show. Default 500."`
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
		Parameters: paramsSchema[ListParams](func(p paramProps) {
			between(p["depth"], 1, 20)
			between(p["limit"], 1, 5000)
		}),
		ReadOnly:       true,
		TimeoutSeconds: 60,
		Meta:           MetaVersion, Concurrency: ConcurrencyShared, LocalOK: true,
		SubjectArg: "path", SubjectKind: SubjectPath, Paths: PathsArgOrRoot, SummaryArg: "path",
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
	return retrySwapped(p.Path, func() (Result, error) {
		e, err := env.Workspace.locateDir(p.Path, "use read to see its contents")
		if err != nil {
			return Errorf("%v", err), nil
		}
		defer e.Close()
		out, err := listTree(ctx, env.Workspace, e, p.Depth, p.Limit)
		if err != nil {
			return Result{}, err
		}
		return Result{Content: out}, nil
	})
}

// lister walks a tree, writing the first limit entries and counting the
// rest.
type lister struct {
	ignore *Gitignore
	limit  int
	shown  int
	more   int
	b      strings.Builder
}

// listTree renders the located directory e to the given depth, with the
// workspace root's .gitignore applied. The read tool reuses it for
// directories.
func listTree(ctx context.Context, ws *Workspace, e *entry, depth, limit int) (string, error) {
	dir, err := e.openDir()
	if err != nil {
		return "", err
	}
	defer dir.Close()
	l := &lister{ignore: ws.gitignore(e.top), limit: limit}
	rel := ws.display(e.real)
	l.b.WriteString(rel + "/\n")
	if err := l.walk(ctx, dir, rel, 1, depth); err != nil {
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

// walk lists dir, whose path relative to the workspace root is rel. Each
// subdirectory is opened beneath dir (see openDirAt), so the listing
// never leaves the tree it started in.
func (l *lister) walk(ctx context.Context, dir *os.Root, rel string, level, depth int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := readDirSorted(dir, ".")
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
		name := e.Name()
		full := path.Join(rel, name)
		isDir := e.IsDir()
		if name == ".git" || l.ignore.Ignored(full, isDir) {
			continue
		}
		if l.shown < l.limit {
			l.b.WriteString(strings.Repeat("  ", level))
			l.b.WriteString(entryLabel(dir, e))
			l.b.WriteByte('\n')
			l.shown++
		} else {
			l.more++
		}
		if isDir && level < depth {
			if err := l.walkSub(ctx, dir, e, full, level+1, depth); err != nil {
				return err
			}
		}
	}
	return nil
}

// walkSub opens the subdirectory e of dir and lists it; one swapped for
// something else since it was listed is left out.
func (l *lister) walkSub(ctx context.Context, dir *os.Root, e fs.DirEntry, rel string, level, depth int) error {
	fi, err := e.Info() // made with lstatat on dir's descriptor
	if err != nil || !fi.IsDir() {
		return nil
	}
	sub, err := openDirAt(dir, e.Name(), fi)
	if err != nil {
		return nil
	}
	defer sub.Close()
	return l.walk(ctx, sub, rel, level, depth)
}

// entryLabel is how one entry appears: directories end in "/", symlinks
// show their target because they are not followed.
func entryLabel(dir *os.Root, e fs.DirEntry) string {
	switch {
	case e.IsDir():
		return e.Name() + "/"
	case e.Type()&fs.ModeSymlink != 0:
		target, err := dir.Readlink(e.Name())
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
