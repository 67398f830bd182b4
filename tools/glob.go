package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// GlobName is the name the model calls the glob tool by.
const GlobName = "glob"

// globLimit is how many paths one glob shows.
const globLimit = 100

//go:embed glob.md
var globDescription string

// GlobParams are the glob tool's arguments.
type GlobParams struct {
	Pattern string `json:"pattern" jsonschema:"Glob pattern such as **/*.go, matched against paths relative to path."`
	Path    string `json:"path,omitempty" jsonschema:"Directory to search, relative to the workspace root. Default: the root."`
}

// Glob finds files by a doublestar pattern. It is read-only, so it runs
// without approval.
type Glob struct{}

// NewGlob returns the glob tool.
func NewGlob() *Glob { return &Glob{} }

// Spec describes the glob tool.
func (*Glob) Spec() Spec {
	return Spec{
		Name:        GlobName,
		Description: globDescription,
		Parameters: paramsSchema[GlobParams](func(p paramProps) {
			nonEmpty(p["pattern"])
		}),
		ReadOnly:       true,
		TimeoutSeconds: 60,
		Meta:           MetaVersion, Concurrency: ConcurrencyShared, LocalOK: true,
		SubjectArg: "path", SubjectKind: SubjectPath, Paths: PathsArgOrRoot, SummaryArg: "pattern",
	}
}

type globHit struct {
	rel   string
	mtime time.Time
}

// Run finds the files.
func (*Glob) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	if env.Workspace == nil {
		return Result{}, errors.New("tool glob: no workspace")
	}
	var p GlobParams
	if err := unmarshalArgs(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	pattern := strings.TrimPrefix(p.Pattern, "./")
	if pattern == "" {
		return Errorf("pattern is empty; give a glob such as **/*.go"), nil
	}
	if strings.HasPrefix(pattern, "/") {
		return Errorf("pattern %q is absolute; give a pattern relative to path (set path for a subdirectory)", p.Pattern), nil
	}
	if !doublestar.ValidatePattern(pattern) {
		return Errorf("pattern %q is not a valid glob (check brackets and braces)", p.Pattern), nil
	}
	var hits []globHit
	res, err := retrySwapped(p.Path, func() (Result, error) {
		hits = hits[:0]
		return globOnce(ctx, env.Workspace, p, pattern, &hits)
	})
	if err != nil || res.IsError {
		return res, err
	}
	if len(hits) == 0 {
		return Result{Content: fmt.Sprintf("No files found matching %s", p.Pattern)}, nil
	}
	sort.Slice(hits, func(i, j int) bool {
		if !hits[i].mtime.Equal(hits[j].mtime) {
			return hits[i].mtime.After(hits[j].mtime)
		}
		return hits[i].rel < hits[j].rel
	})
	var b strings.Builder
	for i, h := range hits {
		if i == globLimit {
			fmt.Fprintf(&b, "(%d more not shown; use a more specific pattern or path)\n", len(hits)-globLimit)
			break
		}
		b.WriteString(h.rel)
		b.WriteByte('\n')
	}
	return Result{Content: b.String()}, nil
}

// globOnce locates the directory and collects the files below it that
// match pattern. A zero Result means it went well.
func globOnce(ctx context.Context, ws *Workspace, p GlobParams, pattern string, hits *[]globHit) (Result, error) {
	e, err := ws.locateDir(p.Path, "give a directory as path")
	if err != nil {
		return Errorf("%v", err), nil
	}
	defer e.Close()
	dir, err := e.openDir()
	if err != nil {
		return Result{}, err
	}
	base := ws.display(e.real)
	w := &treeWalker{ignore: ws.gitignore(e.top)}
	err = w.walk(ctx, dir, base, func(d *walkDir, name, rel string) error {
		defer d.release()
		if !doublestar.MatchUnvalidated(pattern, relBelow(base, rel)) {
			return nil
		}
		info, err := d.root.Lstat(name)
		if err != nil {
			return nil // removed during the walk
		}
		*hits = append(*hits, globHit{rel: rel, mtime: info.ModTime()})
		return nil
	})
	return Result{}, err
}
