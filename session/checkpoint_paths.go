package session

import (
	"slices"

	"github.com/longrun/longrun/toolspec"
)

// maxCheckpointPaths bounds the paths kept for the next checkpoint (they
// live in workflow state); past it the checkpoint looks at every file.
const maxCheckpointPaths = 200

// NoteChange records a call that may have changed the checkout's files
// for the next checkpoint: byPath when it is a tool that changes files by
// path and answered with the files it wrote or deleted (files), so the
// checkpoint may look at those only; any other call (a command, a job, a
// sub-agent, a failed or lost call) means a look at every file until the
// next checkpoint.
func (c *Checkout) NoteChange(byPath bool, files []toolspec.FileVersion) {
	first := !c.Due
	c.Due = true
	if !byPath || (!first && !c.ByPath) {
		c.ByPath, c.Paths = false, nil
		return
	}
	c.ByPath = true
	for _, f := range files {
		if !slices.Contains(c.Paths, f.Path) {
			c.Paths = append(c.Paths, f.Path)
		}
	}
	if len(c.Paths) > maxCheckpointPaths {
		c.ByPath, c.Paths = false, nil
	}
}

// CheckpointPaths are the paths the next checkpoint may look at alone, or
// nil for every file: background jobs may change files at any time.
func (c *Checkout) CheckpointPaths(jobs int) []string {
	if !c.ByPath || jobs > 0 {
		return nil
	}
	if c.Paths == nil {
		return []string{}
	}
	return c.Paths
}

// Checkpointed clears what the next checkpoint was to look at.
func (c *Checkout) Checkpointed(commit string) {
	c.Due, c.Lost, c.Checkpoint, c.ByPath, c.Paths = false, nil, commit, false, nil
}

// CheckpointBundled records where a new checkpoint's bundle is: bundle,
// its reference in the transcript store, or none (note says why when it
// was not stored). The previous bundle holds an older checkpoint, so it
// is dropped either way; an unchanged checkpoint keeps it.
func (c *Checkout) CheckpointBundled(changed bool, bundle, note string) {
	if changed {
		c.Bundle, c.BundleNote = bundle, note
	}
}
