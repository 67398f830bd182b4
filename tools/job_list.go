package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// JobListName is the name the model calls the job_list tool by.
const JobListName = "job_list"

//go:embed job_list.md
var jobListDescription string

// JobListParams are the job_list tool's arguments: there are none.
type JobListParams struct{}

// JobList lists the session's background jobs on this worker. It is
// read-only.
type JobList struct{ jobs *Jobs }

// NewJobList returns the job_list tool over jobs.
func NewJobList(jobs *Jobs) *JobList { return &JobList{jobs: jobs} }

// Spec describes the job_list tool.
func (*JobList) Spec() Spec {
	return Spec{
		Name:        JobListName,
		Description: jobListDescription,
		Parameters:  paramsSchema[JobListParams](nil),
		ReadOnly:    true,
		// Only needed once a background job exists: the session sends it
		// from then on (or when tool_search finds it).
		Exposure:       ExposureDeferred,
		TimeoutSeconds: jobToolTimeout,
		Meta:           MetaVersion, Concurrency: ConcurrencyShared,
		NoDoomLoop: true, Job: JobAll,
	}
}

// Run lists the jobs, one line each in start order: id, status, command. One line a job lets the session merge the lists of several workers.
func (t *JobList) Run(_ context.Context, env Env, _ json.RawMessage) (Result, error) {
	if env.Session == "" {
		return Errorf("background jobs need a session, and this call has none"), nil
	}
	jobs := t.jobs.list(env.Session)
	if len(jobs) == 0 {
		return Result{Content: "no background jobs in this session on this worker"}, nil
	}
	var b strings.Builder
	for _, jb := range jobs {
		fmt.Fprintf(&b, "%s  %s  %s\n", jb.id, jb.status(), oneLine(jb.command))
	}
	return Result{Content: strings.TrimRight(b.String(), "\n")}, nil
}
