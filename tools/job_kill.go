package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
)

// JobKillName is the name the model calls the job_kill tool by.
const JobKillName = "job_kill"

//go:embed job_kill.md
var jobKillDescription string

// JobKillParams are the job_kill tool's arguments.
type JobKillParams struct {
	ID string `json:"id" jsonschema:"The job's id, as shell returned it (e.g. job-1)."`
}

// JobKill stops a background job. Its spec says ReadOnly although it ends
// a process: it only touches a job this session started, the session's
// own approved command, and it is idempotent (killing an ended job says
// so), so a retry after a worker crash is safe and asking a person for
// approval would only delay the cleanup the model asked for.
type JobKill struct{ jobs *Jobs }

// NewJobKill returns the job_kill tool over jobs.
func NewJobKill(jobs *Jobs) *JobKill { return &JobKill{jobs: jobs} }

// Spec describes the job_kill tool.
func (*JobKill) Spec() Spec {
	return Spec{
		Name:        JobKillName,
		Description: jobKillDescription,
		Parameters: paramsSchema[JobKillParams](func(p paramProps) {
			nonEmpty(p["id"])
		}),
		ReadOnly: true,
		// Only needed once a background job exists: the session sends it
		// from then on (or when tool_search finds it).
		Exposure:       ExposureDeferred,
		TimeoutSeconds: jobToolTimeout,
		Meta:           MetaVersion, Concurrency: ConcurrencyShared,
		SummaryArg: "id", Job: JobOne,
	}
}

// Run stops the job's process group and says how the job ended.
func (t *JobKill) Run(_ context.Context, env Env, args json.RawMessage) (Result, error) {
	var p JobKillParams
	if err := unmarshalArgs(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	jb, missing := t.jobs.lookup(env.Session, p.ID)
	if missing != nil {
		return *missing, nil
	}
	var what string
	switch {
	case !jb.kill(killByTool):
		what = fmt.Sprintf("background job %s had already ended: %s; nothing to kill", jb.id, jb.status())
	case jb.running():
		what = fmt.Sprintf("background job %s: SIGTERM and SIGKILL sent, but it has not ended yet (%s)", jb.id, jb.status())
	default:
		what = fmt.Sprintf("background job %s stopped: %s", jb.id, jb.status())
	}
	return Result{Content: fmt.Sprintf("%s\nits log is kept; what you have not read yet: job_output {\"id\": %q}", what, jb.id)}, nil
}
