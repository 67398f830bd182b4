package workflows

// How a change to the commands a session issues ships (README, "Changing
// the workflow"). Until the first release there is one behaviour: a
// deliberate change re-records the replay corpus (make record-histories),
// since no session of ours runs anywhere but in tests. From the first
// release on, every such change is asked with
//
//	workflow.GetVersion(ctx, id, workflow.DefaultVersion, 1) >= 1
//
// where id is a constant appended to changeIDs, and the histories recorded
// before it stay in testdata/ beside new ones. Worker Deployment
// Versioning (longrun-worker --deployment/--build-id) is the other way,
// for deployments that run it: a run is pinned to the build that began
// it and the session moves to the current build at the next turn
// boundary (wantUpgrade), so only unversioned workers need the branch. It
// stays optional because a session idle for days ("forever") in one run
// pins its build until a person writes again, and because its upgrade at
// continue-as-new is experimental in the SDK we use.

// changeIDs are the GetVersion change ids, oldest first. Append only:
// testdata/versions.golden freezes the released ones (TestVersionsFrozen).
var changeIDs = []string{}

// baselines map a baseline id (one marker standing for several changes,
// asked once at the start of a run) to the change ids it covers. What a
// released baseline covers never changes: a session recorded under it
// must replay the same (TestVersionsFrozen).
var baselines = map[string][]string{}
