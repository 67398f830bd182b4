package tools

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ToolOutputDir is where tools save output too long for the model, relative
// to the workspace; the model reads it back with `read`.
const ToolOutputDir = ".longrun/tool-output"

// openSpill creates the file that receives a command's full output. A
// failure is not fatal: the command still runs, the result says the full
// output could not be saved.
func openSpill(ws *Workspace) (*os.File, error) {
	dir, err := ws.DirPath(ToolOutputDir, true)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", ToolOutputDir, err)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := fmt.Sprintf("shell-%s-%s.log", time.Now().UTC().Format("20060102-150405"), hex.EncodeToString(b[:]))
	return os.Create(filepath.Join(dir, name))
}

// keepSpill closes the spill file and keeps it only when the output was
// cut, returning the note that names it (workspace-relative) for the model.
func keepSpill(ws *Workspace, f *os.File, spillErr error, truncated bool) string {
	if f == nil {
		if truncated && spillErr != nil {
			return fmt.Sprintf("[full output not saved: %v]\n", spillErr)
		}
		return ""
	}
	path := f.Name()
	closeErr := f.Close()
	if !truncated {
		_ = os.Remove(path)
		return ""
	}
	if spillErr == nil {
		spillErr = closeErr
	}
	if spillErr != nil {
		return fmt.Sprintf("[full output partly saved to %s: %v]\n", ws.rel(path), spillErr)
	}
	return fmt.Sprintf("[full output saved to %s; read it with offset/limit]\n", ws.rel(path))
}
