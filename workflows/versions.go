package workflows

import "go.temporal.io/sdk/workflow"

// versionBaseline is one marker standing for every change made before it.
// Each GetVersion of a new change id records a marker and upserts the
// TemporalChangeVersion search attribute, so a session asking for all ten
// at the start of every run paid ten history events and eight visibility
// writes before its first model call. A session started since records
// only this one; sessions recorded before it carry the individual markers
// and replay through them.
const versionBaseline = "baseline-2026-12-v1"

// baselineCovers are the change ids versionBaseline implies. A change made
// after it gets its own GetVersion and is not added here: a session
// started under the baseline must not take it for granted on replay.
var baselineCovers = map[string]bool{
	versionVisibility:         true,
	versionBatchPlan:          true,
	versionStaleWrite:         true,
	versionTranscript:         true,
	versionVisibilityThrottle: true,
	versionPermissions:        true,
	versionLocalSetup:         true,
	versionLocalSetupAll:      true,
	versionIdleForever:        true,
	versionCarryAll:           true,
}

// has reports whether the session runs with the change changeID, each of
// whose GetVersion asks (DefaultVersion, 1): always for a session started
// under the baseline when the baseline covers it, else as the history
// recorded (or, the first time, yes).
func (s *session) has(ctx workflow.Context, changeID string) bool {
	if s.baseline && baselineCovers[changeID] {
		return true
	}
	return workflow.GetVersion(ctx, changeID, workflow.DefaultVersion, 1) >= 1
}
