package main

import (
	"flag"
	"fmt"
	"log/slog"
	"strings"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// deploymentFlags are --deployment and --build-id: the Worker Deployment
// Version this worker is (Temporal's Worker Deployment Versioning). With
// them a session is pinned to the build that runs it, so a release that
// changes the commands a session issues never replays an older build's
// history; the session moves to the deployment's current build at its
// next continue-as-new (workflows.continueAsNew asks for AutoUpgrade),
// which it takes at the first turn boundary once the server says the
// current build changed (workflows.wantUpgrade). Without them the worker
// is unversioned, as it always was.
type deploymentFlags struct {
	name, buildID string
}

// bind reads LONGRUN_DEPLOYMENT and LONGRUN_BUILD_ID as the flags'
// defaults.
func (d *deploymentFlags) bind(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&d.name, "deployment", getenv("LONGRUN_DEPLOYMENT"), "Worker Deployment this worker is a version of (Temporal Worker Deployment Versioning): sessions are pinned to the build that runs them and move to the deployment's current build at their next turn once it changes; needs --build-id (env LONGRUN_DEPLOYMENT)")
	fs.StringVar(&d.buildID, "build-id", getenv("LONGRUN_BUILD_ID"), "this worker's build within --deployment, e.g. the release's commit; make it current with `temporal worker deployment set-current-version` (env LONGRUN_BUILD_ID)")
}

// parse checks both are given or neither, in the form the server takes,
// so a typo stops the worker here and not at its first poll.
func (d *deploymentFlags) parse() error {
	d.name, d.buildID = strings.TrimSpace(d.name), strings.TrimSpace(d.buildID)
	switch {
	case d.name == "" && d.buildID == "":
		return nil
	case d.name == "":
		return fmt.Errorf("--build-id %s without --deployment: name the Worker Deployment this build belongs to (or give neither for an unversioned worker)", d.buildID)
	case d.buildID == "":
		return fmt.Errorf("--deployment %s without --build-id: name this build (e.g. the release's commit), or give neither for an unversioned worker", d.name)
	case strings.ContainsAny(d.name, ".:"):
		return fmt.Errorf("--deployment %q: a deployment name cannot contain '.' or ':'", d.name)
	case strings.HasPrefix(d.name, "__"):
		return fmt.Errorf("--deployment %q: a deployment name cannot start with '__'", d.name)
	case strings.HasPrefix(d.buildID, "__"):
		return fmt.Errorf("--build-id %q: a build id cannot start with '__'", d.buildID)
	}
	return nil
}

// versioned reports whether the worker is a deployment version.
func (d deploymentFlags) versioned() bool { return d.name != "" }

// sessionOptions are the options of a Temporal worker that runs sessions
// (the shared queue and the root queues): base, versioned when the flags
// say so. Only these are versioned. The worker's own queue and its
// checkouts' queue run activities only, and are named after this process
// or its state directory: a session reaches them because its checkout or
// its job is there, whatever build the session runs on, so they stay
// unversioned (the server sends a pinned session's activity to a queue
// outside its version as it would without versioning). Versioned, they
// would also have to be polled by every later build before it could be
// made current, and a queue new at every start would fill the version.
func (d deploymentFlags) sessionOptions(base worker.Options) worker.Options {
	if !d.versioned() {
		return base
	}
	base.DeploymentOptions = worker.DeploymentOptions{
		UseVersioning: true,
		Version:       worker.WorkerDeploymentVersion{DeploymentName: d.name, BuildID: d.buildID},
	}
	return base
}

// registerOptions are how a session workflow is registered: pinned to
// the build when the worker is versioned (each run's workflow tasks go
// to this build only), nothing more otherwise (an unversioned worker may
// not name a behaviour).
func (d deploymentFlags) registerOptions(name string) workflow.RegisterOptions {
	o := workflow.RegisterOptions{Name: name}
	if d.versioned() {
		o.VersioningBehavior = workflow.VersioningBehaviorPinned
	}
	return o
}

// report says in the log which version the worker is and what makes it
// take new sessions: a new version gets none until it is made current.
func (d deploymentFlags) report(logger *slog.Logger) {
	if !d.versioned() {
		return
	}
	logger.Info("worker deployment version: sessions are pinned to this build; new sessions come here once it is current",
		"deployment", d.name, "build_id", d.buildID,
		"make_current", fmt.Sprintf("temporal worker deployment set-current-version --deployment-name %s --build-id %s", d.name, d.buildID))
}
