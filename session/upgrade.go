package session

// ShouldUpgrade reports whether a run pinned to its build (Worker
// Deployment Versioning) should continue as new at this turn boundary so
// the session moves to the deployment's current build: targetChanged is
// the server's word that the current build is no longer the run's, and
// the run must have done a turn (runTurns) since it began, so a run the
// server kept on the old build anyway cannot switch again and again
// without progress.
func ShouldUpgrade(runTurns int, targetChanged bool) bool {
	return targetChanged && runTurns > 0
}
