package activities

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/longrun/longrun/activities/contract"
	"github.com/longrun/longrun/tools"
)

// InstructionsFile is the project's instructions to agents, the AGENTS.md
// convention Codex, OpenCode and others read.
const InstructionsFile = "AGENTS.md"

// MaxInstructionsBytes caps the instructions placed in the system prompt:
// they are sent with every request, so a huge file would crowd out the
// conversation.
const MaxInstructionsBytes = 32 << 10

// instructionsCutMarker ends instructions that were cut, so the model knows
// it did not see the whole file.
const instructionsCutMarker = "[AGENTS.md cut at 32 KiB]"

// Instructions is the AGENTS.md a session follows: see package contract.
type Instructions = contract.Instructions

// loadInstructions finds the AGENTS.md nearest to the working directory
// ws, looking in it and then in each parent up to the workspace root: the
// file closest to the code being worked on is the most specific. Every
// candidate is opened through the workspace, beneath its root, so a
// symlink leading out of the workspace is skipped (with a note saying so)
// and the search goes on upward. The notes are for the person reading the history.
func (a *Activities) loadInstructions(ws *tools.Workspace) (*Instructions, []string, error) {
	dir, err := filepath.Rel(a.cfg.Workspace.Root(), ws.Root())
	if err != nil {
		return nil, nil, fmt.Errorf("working directory %s: %w", ws.Root(), err)
	}
	var notes []string
	for {
		rel := filepath.Join(dir, InstructionsFile)
		ins, note, err := a.readInstructions(rel)
		if err != nil {
			return nil, nil, err
		}
		if note != "" {
			notes = append(notes, note)
		}
		if ins != nil {
			return ins, notes, nil
		}
		if dir == "." {
			return nil, notes, nil
		}
		dir = filepath.Dir(dir)
	}
}

// readInstructions reads rel (relative to the workspace root) if it is a
// usable AGENTS.md. A file that is absent or a directory is no
// instructions; one that leads out of the workspace or cannot be read is
// no instructions and a note. Only an unexpected I/O failure is an error,
// for Temporal to retry.
func (a *Activities) readInstructions(rel string) (*Instructions, string, error) {
	shown := filepath.ToSlash(rel)
	f, err := a.cfg.Workspace.Open(rel)
	var missing *fs.PathError
	switch {
	case errors.As(err, &missing) && errors.Is(err, fs.ErrNotExist) && missing.Path == shown:
		return nil, "", nil // absent
	case errors.As(err, &missing) && errors.Is(err, fs.ErrNotExist): // a dangling symlink
		return nil, fmt.Sprintf("%s ignored: it links to %s, which does not exist", shown, missing.Path), nil
	case errors.Is(err, fs.ErrPermission), errors.Is(err, tools.ErrOutsideWorkspace), errors.Is(err, tools.ErrSpecialFile):
		return nil, fmt.Sprintf("%s ignored: %v", shown, err), nil
	case err != nil:
		return nil, "", fmt.Errorf("open %s: %w", shown, err)
	}
	path := filepath.Join(a.cfg.Workspace.Root(), rel)
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, "", fmt.Errorf("stat %s: %w", path, err)
	} else if fi.IsDir() {
		return nil, "", nil
	}
	raw, err := io.ReadAll(io.LimitReader(f, MaxInstructionsBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", path, err)
	}
	content, cut := capInstructions(raw)
	return &Instructions{Path: shown, Content: content, Truncated: cut}, "", nil
}

// capInstructions cuts raw to MaxInstructionsBytes at the last line break
// within it (or, for one enormous line, at a character boundary) and marks
// the cut. Invalid UTF-8 is replaced, so the text survives the JSON of a
// history payload unchanged.
func capInstructions(raw []byte) (string, bool) {
	if len(raw) <= MaxInstructionsBytes {
		return strings.ToValidUTF8(string(raw), "\uFFFD"), false
	}
	body := raw[:MaxInstructionsBytes]
	if i := bytes.LastIndexByte(body, '\n'); i >= 0 {
		body = body[:i+1]
	} else {
		for len(body) > 0 && !utf8.RuneStart(raw[len(body)]) {
			body = body[:len(body)-1]
		}
		body = append(body[:len(body):len(body)], '\n')
	}
	return strings.ToValidUTF8(string(body), "\uFFFD") + instructionsCutMarker, true
}
