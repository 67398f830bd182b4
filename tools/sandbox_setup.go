package tools

import (
	"path/filepath"
	"strings"
)

// A repository's setup command (longrun-worker --setup) fills a layer: a
// directory under the state directory holding what it downloaded, for
// now Go's module cache (go-mod/). The layer is keyed by the hash of the
// repository's lockfiles, made once and then only read: every sandboxed
// command of a session whose checkout is linked to it sees it read-only
// as its GOMODCACHE, so a later session of the same base reuses it and a
// command cannot plant module source the next session trusts.
const (
	setupDir       = "setup"
	setupLayers    = "layers"
	setupCheckouts = "checkouts"
	// SetupModCache is the module cache's directory inside a layer.
	SetupModCache = "go-mod"
)

// SetupLayerDir is the directory of the setup layer key under the state
// directory.
func SetupLayerDir(stateDir, key string) string {
	return filepath.Join(stateDir, setupDir, setupLayers, key)
}

// SetupLinkPath is the file naming the layer a checkout (by its name)
// uses: it holds the layer's key.
func SetupLinkPath(stateDir, checkoutName string) string {
	return filepath.Join(stateDir, setupDir, setupCheckouts, checkoutName)
}

// setupModCacheFor is the read-only module cache of the setup layer the
// checkout holding root is linked to, or "" when it has none. The link
// is the worker's own file, outside every sandbox; a key that is not a
// plain name, or a layer that is not there, counts as none.
func setupModCacheFor(stateDir, root string) string {
	state := realDir(stateDir)
	if state == "" || root == "" {
		return ""
	}
	rel, err := filepath.Rel(filepath.Join(state, checkoutsDir), root)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	name := strings.Split(rel, string(filepath.Separator))[0]
	b, err := readBounded(SetupLinkPath(state, name), 256)
	if err != nil {
		return ""
	}
	key := strings.TrimSpace(string(b))
	if key == "" || strings.ContainsAny(key, `/\`) || strings.HasPrefix(key, ".") {
		return ""
	}
	return realDir(filepath.Join(SetupLayerDir(state, key), SetupModCache))
}
