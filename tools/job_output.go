package tools

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// JobOutputName is the name the model calls the job_output tool by.
const JobOutputName = "job_output"

// jobToolTimeout bounds one call of a job tool: reading a log or killing a
// group (grace period and drain included) takes seconds.
const jobToolTimeout = 30

//go:embed job_output.md
var jobOutputDescription string

// JobOutputParams are the job_output tool's arguments.
type JobOutputParams struct {
	ID   string `json:"id" jsonschema:"The job's id, as shell returned it (e.g. job-1)."`
	Tail int    `json:"tail,omitempty" jsonschema:"Show the last this many lines of the whole log instead of the output since the previous job_output call."`
}

// JobOutput shows what a background job wrote. It changes nothing but the
// job's read position, so it is read-only and needs no approval.
type JobOutput struct {
	jobs  *Jobs
	limit int
}

// NewJobOutput returns the job_output tool over jobs; outputLimit bounds
// one answer like shell's (zero takes shell's default).
func NewJobOutput(jobs *Jobs, outputLimit int) *JobOutput {
	if outputLimit <= 0 {
		outputLimit = DefaultShellConfig().OutputLimit
	}
	return &JobOutput{jobs: jobs, limit: outputLimit}
}

// Spec describes the job_output tool.
func (*JobOutput) Spec() Spec {
	return Spec{
		Name:        JobOutputName,
		Description: jobOutputDescription,
		Parameters: paramsSchema[JobOutputParams](func(p paramProps) {
			nonEmpty(p["id"])
			atLeast(p["tail"], 1)
		}),
		ReadOnly: true,
		// Only needed once a background job exists: the session sends it
		// from then on (or when tool_search finds it).
		Exposure:       ExposureDeferred,
		TimeoutSeconds: jobToolTimeout,
		Meta:           MetaVersion, Concurrency: ConcurrencyShared,
		NoDoomLoop: true, SummaryArg: "id", Job: JobOne,
	}
}

// Run returns the job's new output (or its last lines) and its status.
func (t *JobOutput) Run(_ context.Context, env Env, args json.RawMessage) (Result, error) {
	var p JobOutputParams
	if err := unmarshalArgs(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	jb, missing := t.jobs.lookup(env.Session, p.ID)
	if missing != nil {
		return *missing, nil
	}
	// The status is taken before the log is read: a job that has ended
	// then has all of its output in the file.
	ended := !jb.running()
	status := jb.status()
	var text string
	var err error
	if p.Tail > 0 {
		text, err = jb.readTail(p.Tail, t.limit)
	} else {
		text, err = jb.readNew(t.limit, ended)
	}
	switch {
	case err != nil:
		text = fmt.Sprintf("[cannot read the log: %v]\n", err)
	case text == "" && p.Tail > 0:
		text = "(no output)\n"
	case text == "":
		text = "(no new output)\n"
	case !strings.HasSuffix(text, "\n"):
		text += "\n"
	}
	return Result{Content: fmt.Sprintf("%s[%s %s]", text, jb.id, status)}, nil
}

// readNew returns what the log gained since the previous job_output call
// and moves the read position to the end. Past limit bytes the head and
// the tail are kept with a marker naming the log. While the job runs, a
// character cut in half at the end is left for the next call.
func (jb *job) readNew(limit int, ended bool) (string, error) {
	jb.mu.Lock()
	defer jb.mu.Unlock()
	f, size, err := openLog(jb.log)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if size < jb.readOff {
		jb.readOff = 0 // the command truncated its own log
	}
	off := jb.readOff
	half := int64(max(1, limit/2))
	if size-off <= int64(limit) {
		b, err := readAt(f, off, size)
		if err != nil {
			return "", err
		}
		if !ended {
			b = b[:completeUTF8(b)]
		}
		jb.readOff = off + int64(len(b))
		return strings.ToValidUTF8(string(b), "\uFFFD"), nil
	}
	head, err := readAt(f, off, off+half)
	if err != nil {
		return "", err
	}
	head = head[:completeUTF8(head)]
	tail, err := readAt(f, size-half, size)
	if err != nil {
		return "", err
	}
	skip := 0
	for skip < len(tail) && skip < utf8.UTFMax && !utf8.RuneStart(tail[skip]) {
		skip++
	}
	tail = tail[skip:]
	if !ended {
		tail = tail[:completeUTF8(tail)]
	}
	end := size - half + int64(skip) + int64(len(tail))
	dropped := end - off - int64(len(head)) - int64(len(tail))
	jb.readOff = end
	return strings.ToValidUTF8(string(head), "\uFFFD") +
		fmt.Sprintf("\n... [%d characters dropped; the whole log is kept outside the workspace for a person, where tools cannot read it] ...\n", dropped) +
		strings.ToValidUTF8(string(tail), "\uFFFD"), nil
}

// readTail returns the last n lines of the log, at most limit bytes of
// them, and moves the read position to the end, so the next call without
// tail shows only what comes after.
func (jb *job) readTail(n, limit int) (string, error) {
	jb.mu.Lock()
	defer jb.mu.Unlock()
	f, size, err := openLog(jb.log)
	if err != nil {
		return "", err
	}
	defer f.Close()
	from := max(0, size-int64(limit))
	b, err := readAt(f, from, size)
	if err != nil {
		return "", err
	}
	jb.readOff = size
	cut := false
	if from > 0 {
		// The first line is only partly here.
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
		cut = true
	}
	lines := strings.SplitAfter(strings.ToValidUTF8(string(b), "\uFFFD"), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines, cut = lines[len(lines)-n:], false
	}
	text := strings.Join(lines, "")
	if cut && len(lines) < n {
		text = fmt.Sprintf("[only the last %d lines fit]\n", len(lines)) + text
	}
	return text, nil
}

// openLog opens a job's log, beneath the state directory and never
// through a symlink, and returns its current size.
func openLog(log stateFile) (*os.File, int64, error) {
	f, err := log.open()
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// readAt reads the bytes [from, to) of f, fewer if the file is shorter.
func readAt(f *os.File, from, to int64) ([]byte, error) {
	b := make([]byte, max(0, to-from))
	n, err := f.ReadAt(b, from)
	if err == io.EOF {
		err = nil
	}
	return b[:n], err
}

// completeUTF8 returns the length of b without a UTF-8 sequence cut off at
// its end, so a character split across two reads is shown whole once.
func completeUTF8(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}
