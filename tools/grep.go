package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// GrepName is the name the model calls the grep tool by.
const GrepName = "grep"

// Output modes of the grep tool.
const (
	GrepOutputContent = "content"
	GrepOutputFiles   = "files_with_matches"
)

//go:embed grep.md
var grepDescription string

// GrepParams are the grep tool's arguments.
type GrepParams struct {
	Pattern    string `json:"pattern" jsonschema:"Go (RE2) regular expression, matched per line."`
	Path       string `json:"path,omitempty" jsonschema:"Directory or file to search, relative to the workspace root. Default: the root."`
	Include    string `json:"include,omitempty" jsonschema:"Only search files matching this glob, e.g. *.go or **/*.{ts,tsx}."`
	IgnoreCase bool   `json:"ignore_case,omitempty" jsonschema:"Match case-insensitively. Default false."`
	Output     string `json:"output,omitempty" jsonschema:"content (default): matching lines; files_with_matches: one path per matching file."`
	Limit      int    `json:"limit,omitempty" jsonschema:"Maximum lines (or files) to show. Default 100."`
}

// Grep searches file contents. It is read-only, so it runs without
// approval and may be retried.
type Grep struct{}

// NewGrep returns the grep tool.
func NewGrep() *Grep { return &Grep{} }

// Spec describes the grep tool.
func (*Grep) Spec() Spec {
	return Spec{
		Name:        GrepName,
		Description: grepDescription,
		Parameters: paramsSchema[GrepParams](func(p paramProps) {
			nonEmpty(p["pattern"])
			oneOf(p["output"], "content", "files_with_matches")
			between(p["limit"], 1, 2000)
		}),
		ReadOnly:       true,
		TimeoutSeconds: 60,
		Meta:           MetaVersion, Concurrency: ConcurrencyShared, LocalOK: true,
		SubjectArg: "path", SubjectKind: SubjectPath, Paths: PathsArgOrRoot, SummaryArg: "pattern",
	}
}

// Run searches.
func (*Grep) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	if env.Workspace == nil {
		return Result{}, errors.New("tool grep: no workspace")
	}
	var p GrepParams
	if err := unmarshalArgs(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	if p.Pattern == "" {
		return Errorf("pattern is empty; give a regular expression"), nil
	}
	return retrySwapped(p.Path, func() (Result, error) {
		e, err := env.Workspace.locate(p.Path)
		if err != nil {
			return Errorf("%v", err), nil
		}
		defer e.Close()
		if e.info == nil {
			return Errorf("path not found: %s", p.Path), nil
		}
		filesOnly := p.Output == GrepOutputFiles
		res, err := env.Workspace.search(ctx, e, GrepOptions{
			Pattern:    p.Pattern,
			Include:    p.Include,
			IgnoreCase: p.IgnoreCase,
			FilesOnly:  filesOnly,
			Limit:      p.Limit,
		})
		if errors.Is(err, ErrBadPattern) {
			return Errorf("%v", err), nil
		}
		if err != nil {
			return Result{}, err
		}
		return Result{Content: formatGrep(res, filesOnly)}, nil
	})
}

// formatGrep renders a result for the model.
func formatGrep(res GrepResult, filesOnly bool) string {
	if res.TotalFiles == 0 {
		return "No matches found"
	}
	var b strings.Builder
	if filesOnly {
		for _, f := range res.Files {
			b.WriteString(f)
			b.WriteByte('\n')
		}
		if more := res.TotalFiles - len(res.Files); more > 0 {
			fmt.Fprintf(&b, "(%d more files not shown; narrow path or include, or raise limit)\n", more)
		}
		return b.String()
	}
	for _, m := range res.Matches {
		fmt.Fprintf(&b, "%s:%d: %s", m.Path, m.Line, m.Text)
		if m.Cut {
			b.WriteString(" ... (line cut)")
		}
		b.WriteByte('\n')
	}
	if more := res.TotalMatches - len(res.Matches); more > 0 {
		fmt.Fprintf(&b, "(%d more matches not shown; narrow pattern, path or include, or raise limit)\n", more)
	}
	return b.String()
}
