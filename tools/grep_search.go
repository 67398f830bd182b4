package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"regexp/syntax"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// Search limits.
const (
	grepDefaultLimit = 100
	// grepMaxLineBytes is how much of one matching line is kept: a
	// minified file must not fill the model's turn with one line.
	grepMaxLineBytes = 500
	// grepMaxFileSize skips files too large to be source code worth
	// reading whole (bundles, data dumps).
	grepMaxFileSize = 10 << 20
	// grepSniffBytes is how much of a file decides whether it is binary.
	grepSniffBytes = 8 * 1024
)

// ErrBadPattern marks a pattern or include glob that does not compile; the
// tool turns it into a result the model can fix.
var ErrBadPattern = errors.New("bad pattern")

// GrepOptions configure one Search.
type GrepOptions struct {
	// Pattern is a Go regular expression (RE2 syntax), matched per line.
	Pattern string
	// Path is the file or directory to search, absolute or relative to the
	// root. Empty means the root.
	Path string
	// Include, when set, keeps only files whose name (for a pattern
	// without "/") or path relative to Path matches this doublestar glob.
	Include string
	// IgnoreCase matches letters case-insensitively.
	IgnoreCase bool
	// FilesOnly reports each matching file once instead of its lines.
	FilesOnly bool
	// Limit bounds Matches (or Files); 0 means 100. Totals count everything.
	Limit int
}

// GrepMatch is one matching line.
type GrepMatch struct {
	Path string // slash path relative to the root
	Line int    // 1-based
	Text string // the line without its ending, cut to 500 bytes
	Cut  bool   // Text was cut
}

// GrepResult is what a Search found, in path then line order.
type GrepResult struct {
	Matches      []GrepMatch // at most Limit, content mode only
	Files        []string    // at most Limit files with a match
	TotalMatches int         // matching lines in all files (content mode)
	TotalFiles   int         // files with a match
	Skipped      int         // files skipped as binary or over the size cap
}

// fileHits is what one file contributed.
type fileHits struct {
	rel   string
	lines []GrepMatch // at most limit
	count int
}

// grepMatcher decides which lines of a file buffer match. It is built once per
// search and shared by the workers: *regexp.Regexp is safe for concurrent
// use and the rest is read-only.
type grepMatcher struct {
	lit  []byte         // a literal every match contains (lower-case when fold), or nil
	find literalFinder  // finds lit
	fold bool           // lit is compared against an ASCII-lower-cased buffer
	pure bool           // lit alone decides: the pattern is exactly this literal
	line *regexp.Regexp // confirms one editCandidate line
	all  *regexp.Regexp // (?m) form, scans a whole buffer when there is no lit
}

// Search walks root/opts.Path in parallel and returns the matching lines.
// root is the workspace root: its .gitignore applies, and printed paths are
// relative to it. A bad pattern is an error wrapping ErrBadPattern.
func Search(ctx context.Context, root string, opts GrepOptions) (GrepResult, error) {
	ws, err := NewWorkspace(root)
	if err != nil {
		return GrepResult{}, err
	}
	e, err := ws.locate(opts.Path)
	if err != nil {
		return GrepResult{}, err
	}
	defer e.Close()
	if e.info == nil {
		return GrepResult{}, fmt.Errorf("stat %s: %w", opts.Path, fs.ErrNotExist)
	}
	return ws.search(ctx, e, opts)
}

// search searches the located file or directory e. Files are opened
// beneath their directory's handle, never by name from the root.
func (ws *Workspace) search(ctx context.Context, e *entry, opts GrepOptions) (GrepResult, error) {
	m, err := newGrepMatcher(opts.Pattern, opts.IgnoreCase)
	if err != nil {
		return GrepResult{}, err
	}
	include := strings.TrimPrefix(opts.Include, "./")
	if include != "" && !doublestar.ValidatePattern(include) {
		return GrepResult{}, fmt.Errorf("include %q is not a valid glob: %w", opts.Include, ErrBadPattern)
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = grepDefaultLimit
	}
	base := ws.display(e.real)
	if !e.info.IsDir() {
		// A file named explicitly is searched even if ignored, as rg does.
		var res GrepResult
		s := &fileSearcher{m: m, limit: limit, filesOnly: opts.FilesOnly}
		data, ok := readEntry(e, grepMaxFileSize)
		h := fileHits{rel: base}
		if ok {
			h, ok = s.scan(data, base)
		}
		if !ok {
			res.Skipped++
		}
		return collectHits([][]fileHits{{h}}, res, limit, opts.FilesOnly), nil
	}
	dir, err := e.openDir()
	if err != nil {
		return GrepResult{}, fmt.Errorf("open %s: %w", base, err)
	}

	type job struct {
		dir       *walkDir
		name, rel string
	}
	jobs := make(chan job, 256)
	workers := runtime.NumCPU()
	results := make([][]fileHits, workers)
	skipped := make([]int, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &fileSearcher{m: m, limit: limit, filesOnly: opts.FilesOnly}
			for j := range jobs {
				if ctx.Err() != nil {
					j.dir.release()
					continue // drain so the walker never blocks
				}
				h, ok := s.search(j.dir, j.name, j.rel)
				j.dir.release()
				if !ok {
					skipped[i]++
				}
				if h.count > 0 {
					results[i] = append(results[i], h)
				}
			}
		}()
	}

	w := &treeWalker{ignore: ws.gitignore(e.top)}
	walkErr := w.walk(ctx, dir, base, func(d *walkDir, name, rel string) error {
		if include != "" {
			match := name
			if strings.Contains(include, "/") {
				match = relBelow(base, rel)
			}
			if !doublestar.MatchUnvalidated(include, match) {
				d.release()
				return nil
			}
		}
		jobs <- job{d, name, rel}
		return nil
	})
	close(jobs)
	wg.Wait()
	if walkErr != nil {
		return GrepResult{}, walkErr
	}
	if err := ctx.Err(); err != nil {
		return GrepResult{}, err
	}
	var res GrepResult
	for i := range skipped {
		res.Skipped += skipped[i]
	}
	return collectHits(results, res, limit, opts.FilesOnly), nil
}

// collectHits merges the workers' hits in path order into res.
func collectHits(results [][]fileHits, res GrepResult, limit int, filesOnly bool) GrepResult {
	var all []fileHits
	for i := range results {
		for _, h := range results[i] {
			if h.count > 0 {
				all = append(all, h)
			}
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].rel < all[j].rel })
	res.TotalFiles = len(all)
	for _, h := range all {
		if len(res.Files) < limit {
			res.Files = append(res.Files, h.rel)
		}
		if filesOnly {
			continue
		}
		res.TotalMatches += h.count
		for _, l := range h.lines {
			if len(res.Matches) == limit {
				break
			}
			res.Matches = append(res.Matches, l)
		}
	}
	return res
}

// newGrepMatcher compiles the pattern and picks the cheapest way to find
// editCandidate lines: a required literal found with bytes.Index over the whole
// buffer, so most files are rejected without splitting them into lines.
func newGrepMatcher(pattern string, ignoreCase bool) (*grepMatcher, error) {
	src := pattern
	if ignoreCase {
		src = "(?i)" + pattern
	}
	line, err := regexp.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %v: %w", pattern, err, ErrBadPattern)
	}
	all, err := regexp.Compile("(?m)" + src)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %v: %w", pattern, err, ErrBadPattern)
	}
	m := &grepMatcher{line: line, all: all}
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return m, nil // compiled above, so this cannot happen; scan without a literal
	}
	lit, fold, ok := requiredLiteral(re)
	if !ok || strings.Contains(lit, "\n") {
		return m, nil
	}
	whole := re.Op == syntax.OpLiteral
	if fold {
		var safe string
		safe, whole = foldSafe(lit, whole)
		lit = safe
	}
	if len(lit) == 0 || (len(lit) < 2 && !whole) {
		return m, nil
	}
	m.lit, m.fold, m.pure = []byte(lit), fold, whole
	m.find = newLiteralFinder(m.lit)
	return m, nil
}

// requiredLiteral returns the longest literal that every match of re
// contains, and whether it is compared case-insensitively.
func requiredLiteral(re *syntax.Regexp) (string, bool, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return string(re.Rune), re.Flags&syntax.FoldCase != 0, true
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best, bestFold, found := "", false, false
		for _, sub := range re.Sub {
			if l, f, ok := requiredLiteral(sub); ok && len(l) > len(best) {
				best, bestFold, found = l, f, true
			}
		}
		return best, bestFold, found
	}
	return "", false, false
}

// foldSafe returns the longest lower-cased piece of a case-insensitive
// literal that ASCII lower-casing finds exactly. Only ASCII qualifies, and
// not k or s: Unicode folds the Kelvin sign to k and the long s to s, which
// a byte-wise lower-casing would miss. whole stays true only if the piece
// is the entire literal.
func foldSafe(lit string, whole bool) (string, bool) {
	lower := strings.ToLower(lit)
	best, start := "", 0
	for i := 0; i <= len(lower); i++ {
		if i == len(lower) || lower[i] >= utf8.RuneSelf || lower[i] == 'k' || lower[i] == 's' {
			if i-start > len(best) {
				best = lower[start:i]
			}
			start = i + 1
		}
	}
	return best, whole && len(best) == len(lit)
}

// fileSearcher searches files one at a time for one worker, reusing its
// buffers across files.
type fileSearcher struct {
	m         *grepMatcher
	limit     int
	filesOnly bool
	buf       []byte
	lower     []byte
}

// search returns the hits of the file name in d; ok is false when it was
// skipped as binary, too large or unreadable.
func (s *fileSearcher) search(d *walkDir, name, rel string) (fileHits, bool) {
	data, buf, ok := readWhole(s.buf, d, name, grepMaxFileSize)
	s.buf = buf
	if !ok {
		return fileHits{rel: rel}, false
	}
	return s.scan(data, rel)
}

// scan returns the hits in a file's content; ok is false when it was
// skipped as binary.
func (s *fileSearcher) scan(data []byte, rel string) (fileHits, bool) {
	h := fileHits{rel: rel}
	if len(data) == 0 {
		return h, true
	}
	if bytes.IndexByte(data[:min(len(data), grepSniffBytes)], 0) >= 0 {
		return h, false
	}
	hay := data
	if s.m.fold && s.m.lit != nil {
		s.lower = asciiLower(s.lower, data)
		hay = s.lower
	}
	lineNo, counted := 1, 0
	record := func(ls, le int) bool {
		lineNo += bytes.Count(data[counted:ls], []byte{'\n'})
		counted = ls
		h.count++
		if len(h.lines) < s.limit && !s.filesOnly {
			h.lines = append(h.lines, grepLine(rel, lineNo, data[ls:le]))
		}
		return !s.filesOnly // one hit is enough to list the file
	}
	pos := 0
	for pos < len(data) {
		var ls, le int
		if s.m.lit != nil {
			i := s.m.find.index(hay[pos:])
			if i < 0 {
				break
			}
			i += pos
			ls = pos + bytes.LastIndexByte(hay[pos:i], '\n') + 1
			le = grepLineEnd(data, i)
			if !s.m.pure && !s.m.line.Match(data[ls:le]) {
				pos = le + 1
				continue
			}
		} else {
			loc := s.m.all.FindIndex(data[pos:])
			if loc == nil {
				break
			}
			start, end := pos+loc[0], pos+loc[1]
			ls = pos + bytes.LastIndexByte(data[pos:start], '\n') + 1
			if ls == len(data) {
				break // the empty "line" after a final newline
			}
			le = grepLineEnd(data, start)
			// A match that runs past the line's end is only a editCandidate:
			// lines are matched one at a time.
			if end > le && !s.m.line.Match(data[ls:le]) {
				pos = le + 1
				continue
			}
		}
		if !record(ls, le) {
			break
		}
		pos = le + 1
	}
	return h, true
}

// readEntry reads a located regular file whole, or reports false for a
// special or oversized one.
func readEntry(e *entry, maxSize int64) ([]byte, bool) {
	if !e.info.Mode().IsRegular() || e.info.Size() > maxSize {
		return nil, false
	}
	f, err := e.open()
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSize+1))
	if err != nil || int64(len(data)) > maxSize {
		return nil, false
	}
	return data, true
}

// grepLineEnd is the index of the newline ending the line that holds i, or
// len(data).
func grepLineEnd(data []byte, i int) int {
	if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(data)
}

// grepLine copies a line out of the reusable buffer, without its CR and
// cut to grepMaxLineBytes on a character boundary.
func grepLine(rel string, n int, line []byte) GrepMatch {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	m := GrepMatch{Path: rel, Line: n}
	if len(line) > grepMaxLineBytes {
		cut := grepMaxLineBytes
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		line, m.Cut = line[:cut], true
	}
	m.Text = string(line)
	return m
}
