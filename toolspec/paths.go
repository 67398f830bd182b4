package toolspec

import (
	"encoding/json"
	"path"
	"strings"
)

// CallPaths returns the paths a call of the tool reads or changes, as the
// model wrote them, cleaned and slash-separated; a directory stands for
// everything under it. Where they are is the tool's declaration (Paths).
// ok is false when the arguments alone do not say (shell, a tool that
// declares no paths, arguments that do not parse): the batch planner then
// treats the call as touching everything. It is a pure function of the
// spec and the arguments, so the workflow may call it.
func (s Spec) CallPaths(args json.RawMessage) (paths []string, ok bool) {
	if s.Paths == "" {
		return nil, false
	}
	var p struct {
		Path  string `json:"path"`
		Patch string `json:"patch"`
	}
	if err := json.Unmarshal(args, &p); err != nil {
		return nil, false
	}
	switch s.Paths {
	case PathsArg:
		if p.Path == "" {
			return nil, false
		}
		return []string{cleanCallPath(p.Path)}, true
	case PathsArgOrRoot:
		return []string{cleanCallPath(p.Path)}, true
	case PathsPatch:
		patch, err := ParsePatch(p.Patch)
		if err != nil || len(patch.Files) == 0 {
			return nil, false
		}
		for _, f := range patch.Files {
			paths = append(paths, cleanCallPath(f.Path))
			if f.MoveTo != "" {
				paths = append(paths, cleanCallPath(f.MoveTo))
			}
		}
		return paths, true
	}
	return nil, false
}

// cleanCallPath makes "./a//b.go" and "a/b.go" the same key; "" is the
// working directory, ".".
func cleanCallPath(p string) string {
	return path.Clean(strings.ReplaceAll(p, `\`, "/"))
}

// PathsOverlap reports whether two cleaned call paths may name the same
// file: equal, or one a directory holding the other. A relative and an
// absolute path cannot be compared without the file system, so they are
// taken to overlap; so does anything that climbs out with "..".
func PathsOverlap(a, b string) bool {
	if a == b || a == "." || b == "." {
		return true
	}
	if path.IsAbs(a) != path.IsAbs(b) || strings.HasPrefix(a, "..") || strings.HasPrefix(b, "..") {
		return true
	}
	return strings.HasPrefix(b, a+"/") || strings.HasPrefix(a, b+"/")
}
