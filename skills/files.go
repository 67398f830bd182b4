package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"unicode/utf8"
)

// Bounds on what the skill tool returns of a skill's folder.
const (
	// MaxFileBytes is the most of one file returned; the rest is cut
	// with a note.
	MaxFileBytes = 64 << 10
	// MaxFiles is the most of a folder's files listed after the body.
	MaxFiles = 50
)

// ReadFile reads the file rel (slash-separated, relative to the skill's
// folder) beneath root, the folder Open returned: nothing outside the
// folder can be named, through ".." or a symlink. Text only, cut at
// MaxFileBytes. The error says what the model can do instead.
func ReadFile(root *os.Root, rel string) (string, error) {
	clean := path.Clean(strings.ReplaceAll(rel, "\\", "/"))
	switch {
	case rel == "" || clean == ".":
		return "", errors.New("name a file of the skill's folder, e.g. references/guide.md")
	case path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../"):
		return "", fmt.Errorf("file %q is outside the skill's folder: give a path relative to it, e.g. references/guide.md", rel)
	}
	f, err := root.Open(clean)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("the skill has no file %s", clean)
		}
		return "", fmt.Errorf("file %s: %w", clean, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("stat %s: %w", clean, err)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%s is a directory: name one of its files", clean)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", clean)
	}
	raw, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", clean, err)
	}
	if hasNUL(raw) {
		return "", fmt.Errorf("%s is binary (%d bytes): only text files are returned", clean, fi.Size())
	}
	return Cut(string(raw), fi.Size()), nil
}

// Cut returns text whole when it is at most MaxFileBytes, else its first
// MaxFileBytes (at a character boundary) and a line saying it was cut,
// of size bytes in all. Invalid UTF-8 is replaced.
func Cut(text string, size int64) string {
	if len(text) <= MaxFileBytes {
		return strings.ToValidUTF8(text, "\uFFFD")
	}
	n := MaxFileBytes
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return strings.ToValidUTF8(text[:n], "\uFFFD") + fmt.Sprintf("\n[cut at %d KiB of %d bytes]", MaxFileBytes>>10, size)
}

// Files lists the files of the skill's folder besides SKILL.md, sorted,
// at most MaxFiles of them (more says how many were left out). Symlinks
// are listed as they are; ReadFile decides whether one can be read.
func Files(root *os.Root) (files []string, more int, err error) {
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable subdirectory is left out
		}
		if d.IsDir() {
			if p != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if p == FileName || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		if len(files) == MaxFiles {
			more++
			return nil
		}
		files = append(files, p)
		return nil
	})
	return files, more, err
}
