package tools

import (
	"bufio"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// ReadName is the name the model calls the read tool by.
const ReadName = "read"

// Read limits. They keep one read within a model turn's budget; the model
// pages through longer files with offset.
const (
	readDefaultLimit = 2000
	readMaxLineBytes = 2000
	readMaxOutput    = 50 * 1024
	// readSniffBytes is how much of a file decides whether it is text.
	readSniffBytes = 8 * 1024
)

//go:embed read.md
var readDescription string

// ReadParams are the read tool's arguments.
type ReadParams struct {
	Path   string `json:"path" jsonschema:"File to read, relative to the workspace root."`
	Offset int    `json:"offset,omitempty" jsonschema:"1-based line number to start at. Default 1."`
	Limit  int    `json:"limit,omitempty" jsonschema:"Maximum number of lines to return. Default 2000."`
}

// Read returns a window of a text file with line numbers. It is read-only,
// so it runs without approval and may be retried.
type Read struct{}

// NewRead returns the read tool.
func NewRead() *Read { return &Read{} }

// Spec describes the read tool.
func (*Read) Spec() Spec {
	return Spec{
		Name:        ReadName,
		Description: readDescription,
		Parameters: paramsSchema[ReadParams](func(p paramProps) {
			atLeast(p["offset"], 1)
			atLeast(p["limit"], 1)
		}),
		ReadOnly:       true,
		TimeoutSeconds: 60,
		Meta:           MetaVersion, Concurrency: ConcurrencyShared, LocalOK: true,
		SubjectArg: "path", SubjectKind: SubjectPath, Paths: PathsArg, SummaryArg: "path", SummaryLines: true,
	}
}

// Run reads the file.
func (*Read) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	if env.Workspace == nil {
		return Result{}, errors.New("tool read: no workspace")
	}
	var p ReadParams
	if err := unmarshalArgs(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	if p.Offset <= 0 {
		p.Offset = 1
	}
	if p.Limit <= 0 {
		p.Limit = readDefaultLimit
	}
	return retrySwapped(p.Path, func() (Result, error) { return readOnce(ctx, env.Workspace, p) })
}

// readOnce locates and reads the file once.
func readOnce(ctx context.Context, ws *Workspace, p ReadParams) (Result, error) {
	e, err := ws.locate(p.Path)
	if err != nil {
		return Errorf("%v", err), nil
	}
	defer e.Close()
	if e.info == nil {
		return notFound(p.Path, e), nil
	}
	if e.info.IsDir() {
		out, err := listTree(ctx, ws, e, 1, listDefaultLimit)
		if err != nil {
			return Result{}, err
		}
		return Result{Content: p.Path + " is a directory; its entries:\n" + out}, nil
	}
	f, err := e.open()
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return Errorf("permission denied: %s", p.Path), nil
		}
		if errors.Is(err, errSwapped) {
			return Result{}, err
		}
		return Result{}, fmt.Errorf("open file %s: %w", e.real, err)
	}
	defer f.Close()
	// The whole file goes through the hash, the window through readLines:
	// the stale-write guard needs the version of the file the model saw,
	// from the same pass, not a second read that may see a later one.
	h := sha256.New()
	tee := io.TeeReader(f, h)
	res, err := readLines(ctx, tee, p, e.info.Size())
	if err != nil {
		return res, err
	}
	if _, err := io.Copy(io.Discard, tee); err == nil {
		res.Files = []FileVersion{{Path: ws.display(e.real), SHA256: hex.EncodeToString(h.Sum(nil))}}
	}
	return res, nil
}

// readLines streams the file line by line, so a huge file costs only the
// window that is returned.
func readLines(ctx context.Context, f io.Reader, p ReadParams, size int64) (Result, error) {
	br := bufio.NewReaderSize(f, 64*1024)
	head, err := br.Peek(readSniffBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return Result{}, fmt.Errorf("read file %s: %w", p.Path, err)
	}
	if len(head) == 0 {
		return Result{Content: "(empty file)"}, nil
	}
	if isBinary(head) {
		return Errorf("cannot read %s: binary file (%s, %d bytes)", p.Path, http.DetectContentType(head), size), nil
	}
	var b strings.Builder
	line := 0
	last := p.Offset + p.Limit - 1
	var buf []byte
	for {
		if line%1000 == 0 {
			if err := ctx.Err(); err != nil {
				return Result{}, err
			}
		}
		text, dropped, err := nextLine(br, &buf, line+1 >= p.Offset)
		if errors.Is(err, io.EOF) && text == nil {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return Result{}, fmt.Errorf("read file %s: %w", p.Path, err)
		}
		line++
		if line < p.Offset {
			continue
		}
		entry := fmt.Sprintf("%6d: %s", line, text)
		if dropped > 0 {
			entry += fmt.Sprintf("... (line truncated, %d more bytes)", dropped)
		}
		if b.Len()+len(entry)+1 > readMaxOutput {
			fmt.Fprintf(&b, "(output capped at %d KB; continue with offset=%d)\n", readMaxOutput/1024, line)
			return Result{Content: b.String()}, nil
		}
		b.WriteString(entry)
		b.WriteByte('\n')
		if line == last {
			if _, err := br.Peek(1); err == nil {
				fmt.Fprintf(&b, "(file has more lines; continue with offset=%d)\n", line+1)
			}
			return Result{Content: b.String()}, nil
		}
	}
	if line < p.Offset {
		return Errorf("offset %d is past the end of %s, which has %d lines", p.Offset, p.Path, line), nil
	}
	return Result{Content: b.String()}, nil
}

// nextLine returns the next line without its newline, at most
// readMaxLineBytes of it (cut on a character boundary), and how many bytes
// were dropped. When keep is false the line is only skipped. It returns
// io.EOF with a nil line at the end of the input.
func nextLine(br *bufio.Reader, buf *[]byte, keep bool) ([]byte, int, error) {
	*buf = (*buf)[:0]
	total := 0
	var before, last byte // the line's last two bytes, across fragments
	for {
		frag, err := br.ReadSlice('\n')
		total += len(frag)
		switch n := len(frag); {
		case n >= 2:
			before, last = frag[n-2], frag[n-1]
		case n == 1:
			before, last = last, frag[0]
		}
		if keep && len(*buf) < readMaxLineBytes+utf8.UTFMax {
			room := readMaxLineBytes + utf8.UTFMax - len(*buf)
			*buf = append(*buf, frag[:min(room, len(frag))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, err
		}
		if total == 0 {
			return nil, 0, io.EOF
		}
		full := total // the line's length without its line ending
		if last == '\n' {
			full--
			if full > 0 && before == '\r' {
				full--
			}
		}
		line := (*buf)[:min(len(*buf), full)]
		if line == nil {
			line = []byte{} // nil is reserved for the end of the input
		}
		if full <= readMaxLineBytes {
			return line, 0, err
		}
		cut := readMaxLineBytes
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		return line[:cut], full - cut, err
	}
}

// isBinary reports whether a file's first bytes look like anything but
// text: a NUL byte, or more than one in ten bytes not valid UTF-8.
func isBinary(head []byte) bool {
	invalid := 0
	for i := 0; i < len(head); {
		c := head[i]
		if c == 0 {
			return true
		}
		r, n := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && n == 1 {
			if len(head)-i < utf8.UTFMax && !utf8.FullRune(head[i:]) {
				break // a character cut by the sniff window
			}
			invalid++
		}
		i += n
	}
	return invalid*10 > len(head)
}

// notFound explains a missing file and suggests up to three similar names
// from its directory, since the usual cause is a typo or a wrong guess.
func notFound(path string, e *entry) Result {
	msg := "file not found: " + path
	if e.fileInWay != "" || strings.Contains(e.name, "/") {
		return Errorf("%s", msg) // its directory does not exist either
	}
	entries, err := readDirSorted(e.dir, ".")
	if err != nil {
		return Errorf("%s", msg)
	}
	want := strings.ToLower(e.name)
	type cand struct {
		name string
		dist int
	}
	var cands []cand
	for _, e := range entries {
		name := e.Name()
		lower := strings.ToLower(name)
		d := levenshtein(want, lower)
		stem := strings.TrimSuffix(want, filepath.Ext(want))
		similar := d <= max(2, len(want)/3) ||
			strings.Contains(lower, want) || strings.Contains(want, lower) ||
			(len(stem) >= 3 && strings.HasPrefix(lower, stem))
		if similar {
			if e.IsDir() {
				name += "/"
			}
			cands = append(cands, cand{name, d})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].name < cands[j].name
	})
	if len(cands) > 3 {
		cands = cands[:3]
	}
	if len(cands) > 0 {
		dir := filepath.ToSlash(filepath.Dir(path))
		names := make([]string, len(cands))
		for i, c := range cands {
			names[i] = c.name
			if dir != "." && dir != "" {
				names[i] = dir + "/" + c.name
			}
		}
		msg += "\ndid you mean: " + strings.Join(names, ", ")
	}
	return Errorf("%s", msg)
}

// levenshtein is the edit distance between two short names, by rune.
func levenshtein(a, b string) int { return editDistance([]rune(a), []rune(b)) }
