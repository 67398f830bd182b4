package workflows

import "github.com/longrun/longrun/activities"

// a names the worker's activities in tests (env.OnActivity(a.CallModel,
// ...)), so a mock stands for the worker's own method and its signature.
// The workflow itself schedules them by their names in package
// activities/contract, which are these methods' names.
var a *activities.Activities
