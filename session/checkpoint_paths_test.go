package session

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/tools"
)

// The next checkpoint looks at the files the file tools reported only
// while every call since the last one was such a tool and there are no
// background jobs; anything else means every file until the next one.
func TestCheckpointPathsOnlyWhileEveryCallReported(t *testing.T) {
	var c Checkout
	c.NoteChange(true, []tools.FileVersion{{Path: "a.go", SHA256: "1"}})
	c.NoteChange(true, []tools.FileVersion{{Path: "b.go"}, {Path: "a.go", SHA256: "2"}})
	require.Equal(t, []string{"a.go", "b.go"}, c.CheckpointPaths(0))
	require.Nil(t, c.CheckpointPaths(1), "a background job may change files")

	c.NoteChange(false, nil) // a shell command
	c.NoteChange(true, []tools.FileVersion{{Path: "c.go", SHA256: "3"}})
	require.True(t, c.Due)
	require.Nil(t, c.CheckpointPaths(0), "a command since the last checkpoint: every file")

	c.Checkpointed("abc")
	require.False(t, c.Due)
	require.Equal(t, "abc", c.Checkpoint)
	c.NoteChange(true, []tools.FileVersion{{Path: "d.go", SHA256: "4"}})
	require.Equal(t, []string{"d.go"}, c.CheckpointPaths(0), "a new start after a checkpoint")

	old := Checkout{Due: true} // state recorded before the paths existed
	old.NoteChange(true, []tools.FileVersion{{Path: "e.go", SHA256: "5"}})
	require.Nil(t, old.CheckpointPaths(0))
}
