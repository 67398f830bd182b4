package checkout

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// errLookupName marks a name lookObjects cannot ask git about: git
// cat-file --batch-check reads one name a line.
var errLookupName = errors.New("a name with a line break")

// object is what a name resolves to: its id and type, both "" for none.
type object struct{ id, typ string }

// lookObjects resolves names in the repository at dir (refs, HEAD,
// rev^{commit}, rev:path: what git rev-parse --verify takes), by one git
// cat-file --batch-check where each was one git rev-parse or cat-file -t:
// a name that resolves to no object is the zero object. A name holding a
// line break is errLookupName: the caller asks git about it its own way.
func lookObjects(ctx context.Context, dir string, names ...string) ([]object, error) {
	var in strings.Builder
	for _, n := range names {
		if strings.ContainsAny(n, "\r\n") {
			return nil, fmt.Errorf("look up %q: %w", n, errLookupName)
		}
		in.WriteString(n + "\n")
	}
	out, err := run(ctx, dir, nil, in.String(), "cat-file", "--batch-check=%(objectname) %(objecttype)")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(names) {
		return nil, fmt.Errorf("git cat-file --batch-check: %d lines for %d names", len(lines), len(names))
	}
	objs := make([]object, len(names))
	for i, l := range lines {
		// "<id> <type>", or "<name> missing" (or "ambiguous"): a
		// name may hold spaces, an id or a type never does, and a name
		// may look like an id.
		f := strings.Split(l, " ")
		if len(f) == 2 && isObjectID(f[0]) && objectTypes[f[1]] {
			objs[i] = object{f[0], f[1]}
		}
	}
	return objs, nil
}

// objectTypes are the types git cat-file names.
var objectTypes = map[string]bool{"commit": true, "tree": true, "blob": true, "tag": true}

// isObjectID reports whether s is a full object id, SHA-1 or SHA-256.
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
