package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// hashBytes is the digest FileVersion records.
func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// version is the FileVersion of content at real, a located path relative
// to the project root.
func (w *Workspace) version(real string, content []byte) FileVersion {
	return FileVersion{Path: w.display(real), SHA256: hashBytes(content)}
}

// staleCheck is the stale-write guard, as OpenCode and Crush have it: a
// tool may change an existing file only if this session read it (or wrote
// it) and it has not changed on disk since. Without it a model overwrites
// a person's edit, or a formatter's, with its own older picture of the
// file. It returns the message for the model, or "" when the change may go
// ahead. current is the file's content now; display is the path as the
// model named it, real the located path relative to the project root.
func (env Env) staleCheck(display, real string, current []byte) string {
	if !env.GuardWrites {
		return ""
	}
	key := env.Workspace.display(real)
	seen, ok := env.Seen[key]
	switch {
	case !ok:
		return fmt.Sprintf("%s has not been read in this session: read it first (the read tool), so the change is made to what the file holds now. Nothing was written.", display)
	case seen != hashBytes(current):
		return fmt.Sprintf("%s has changed on disk since this session last read it (a command, another tool or a person changed it): read it again and redo the change on its current content. Nothing was written.", display)
	}
	return ""
}
