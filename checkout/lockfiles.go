package checkout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strings"
)

// LockfileNames are the files, at any depth of a repository, whose
// content decides what a setup command (longrun-worker --setup)
// downloads: package managers' lockfiles and manifests.
var LockfileNames = []string{
	"go.mod", "go.sum", "go.work", "go.work.sum",
	"package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb",
	"Cargo.toml", "Cargo.lock",
	"pyproject.toml", "poetry.lock", "uv.lock", "Pipfile.lock", "requirements.txt",
	"Gemfile.lock", "composer.lock", "mix.lock", "pubspec.lock",
}

// LockfileKey hashes what a setup command's work depends on: the command
// itself, and the path and blob id of every lockfile (LockfileNames) in
// the tree of commit in the repository at dir. Blob ids are hashes of
// the content, so one `git ls-tree` gives the key with no file read. Two
// bases whose lockfiles are the same get the same key.
func LockfileKey(ctx context.Context, dir, commit, command string) (string, error) {
	out, err := gitRaw(ctx, dir, nil, "ls-tree", "-r", "-z", "--full-tree", commit)
	if err != nil {
		return "", fmt.Errorf("list the lockfiles of %s: %w", commit, err)
	}
	var entries []string
	for _, e := range strings.Split(out, "\x00") {
		// "<mode> blob <oid>\t<path>"
		meta, p, ok := strings.Cut(e, "\t")
		if !ok || !slices.Contains(LockfileNames, path.Base(p)) {
			continue
		}
		if f := strings.Fields(meta); len(f) == 3 && f[1] == "blob" {
			entries = append(entries, f[2]+" "+p)
		}
	}
	slices.Sort(entries)
	h := sha256.New()
	fmt.Fprintf(h, "setup\x00%s\x00", command)
	for _, e := range entries {
		fmt.Fprintf(h, "%s\x00", e)
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}
