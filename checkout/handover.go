package checkout

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A worker that stops (a deploy drains it) hands its checkouts over: the
// last checkpoint of each, the one its session's history names, goes to
// the checkpoint remote, so whichever worker restores the session finds
// it there even when the checkpoint's own push had failed and was
// waiting for a retry on the queue of the worker now leaving. No new
// checkpoint is made: the session restores the commit its conversation
// matches (Restore), so a newer commit in the remote would not be used.

// Held is a checkout in a worker's state directory: its name (the
// sanitised session id, the directory's name) and directory.
type Held struct {
	Name string
	Dir  string
}

// HeldCheckouts lists the checkouts under stateDir, by name: directories
// holding a repository (their .git), not the half-made ones createOwn
// builds beside their place (a leading '.', which Sanitize never gives).
func HeldCheckouts(stateDir string) ([]Held, error) {
	root := filepath.Join(stateDir, Dir)
	ents, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list checkouts: %w", err)
	}
	var out []Held
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err != nil {
			continue
		}
		out = append(out, Held{Name: e.Name(), Dir: dir})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// HandOver pushes the last checkpoint of the checkout h (its
// CheckpointRef, as the last Checkpoint left it) to remote, as
// PushCheckpoint does: forced, no hook, through the host git door
// (gitRemote: the repository's programs neutralised). It returns the
// commit ("" when the checkout has no checkpoint yet: nothing to hand
// over, and no error) and whether the remote lacked it (false: the
// checkpoint's own push had put it there already).
func HandOver(ctx context.Context, h Held, remote string) (commit string, sent bool, err error) {
	ref := CheckpointRef(h.Name)
	out, code, err := gitCode(ctx, h.Dir, nil, "", "rev-parse", "--verify", "--quiet", ref)
	switch {
	case code == 1 && strings.TrimSpace(out) == "":
		return "", false, nil // no checkpoint made yet
	case err != nil:
		return "", false, fmt.Errorf("hand over %s: %w", h.Name, err)
	}
	commit = strings.TrimSpace(out)
	// --porcelain says per ref what the push did: "=" is up to date.
	out, err = gitRemote(ctx, h.Dir, "push", "--porcelain", "--force", "--no-verify", remote, ref+":"+ref)
	if err != nil {
		return commit, false, fmt.Errorf("hand over checkpoint %s of %s to %s: %w", commit, h.Name, remote, err)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "=\t") {
			return commit, false, nil
		}
	}
	return commit, true, nil
}
