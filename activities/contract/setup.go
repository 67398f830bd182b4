package contract

import "github.com/longrun/longrun/checkout/record"

// SetupRequest asks the worker holding a session's new checkout to run
// its repository's setup command there (longrun-worker --setup).
type SetupRequest struct {
	Checkout record.Info `json:"checkout"`
}

// SetupResult is what the setup did, as the history keeps it: the
// command, whether it ran or its layer was reused (Cached: a session of
// the same lockfiles made it), how long it took, and the tail of its
// output. A setup that failed has Error set (and ExitCode when the
// command ran); the session goes on, and the model is told.
type SetupResult struct {
	Command string `json:"command"`
	// Key is the hash of the command and the base's lockfiles that names
	// the layer (checkout.LockfileKey).
	Key    string `json:"key"`
	Cached bool   `json:"cached,omitempty"`
	// Millis is how long this run took; on a reuse, the lookup, and
	// FirstMillis how long the run that made the layer took.
	Millis      int64 `json:"millis"`
	FirstMillis int64 `json:"first_millis,omitempty"`
	// MadeBy is the session whose setup made a reused layer.
	MadeBy string `json:"made_by,omitempty"`
	// Again says why the command ran although its layer was there: the
	// run that made the layer also changed the checkout (npm ci's
	// node_modules, a rewritten go.sum), which a layer does not hold, so
	// a skipped command would leave this checkout without it.
	Again    string `json:"again,omitempty"`
	ExitCode int    `json:"exit_code"`
	// Output is the command's output, its last SetupOutputMax bytes (a
	// reused layer's: the run that made it).
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
}

// SetupOutputMax bounds SetupResult.Output: a history event is not a log.
const SetupOutputMax = 8 << 10
