package session

import (
	"strings"

	"github.com/longrun/longrun/checkout/record"
)

// Checkout is the session's own checkout and the worker that holds it.
// Every call that touches it goes to Queue, the task queue only that
// worker polls: another machine has another disk.
type Checkout struct {
	record.Info
	Queue string `json:"queue"`
	// Checkpoint is the commit of the checkout's last checkpoint (""
	// none yet), and Remote the checkpoint remote it was stored in (""
	// only on the worker's disk): see checkpoint.go.
	Checkpoint string `json:"checkpoint,omitempty"`
	Remote     string `json:"remote,omitempty"`
	// Bundle is the reference of Checkpoint's bundle in the transcript
	// store ("" when it is not there: pushed to Remote, or not stored, as
	// BundleNote then says), and BranchBundle that of the branch, stored
	// at the end by a worker that restored the checkout with no remote:
	// starter diff fetches the branch from it.
	Bundle       string `json:"checkpoint_bundle,omitempty"`
	BundleNote   string `json:"checkpoint_note,omitempty"`
	BranchBundle string `json:"branch_bundle,omitempty"`
	// Origin is the person's repository when the checkout was restored on
	// another worker (Repo is then the restored checkout itself).
	Origin string `json:"origin,omitempty"`
	// Due: calls since the last checkpoint may have changed files. Lost
	// are the calls (name and id) a lost worker took with it, told to
	// the model once the checkout is restored.
	Due  bool     `json:"checkpoint_due,omitempty"`
	Lost []string `json:"lost_calls,omitempty"`
	// ByPath: every call that made the checkpoint due was a tool that
	// changes files by path and said which (Paths, relative to Sub), so
	// the checkpoint looks at those only. False (as in histories from
	// before it) is a look at every file.
	ByPath bool     `json:"checkpoint_by_path,omitempty"`
	Paths  []string `json:"checkpoint_paths,omitempty"`
}

// Isolated reports whether the session works in a checkout of its own
// (c may be nil: in place).
func (c *Checkout) Isolated() bool { return c != nil && c.Name != "" }

// CommitMessage is the message of the commit that ends a session's
// checkout: the first line of the session's final text, or a line naming
// the session when it has none.
func CommitMessage(finalText, session string) string {
	for _, line := range strings.Split(finalText, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if r := []rune(line); len(r) > 200 {
				line = string(r[:200])
			}
			return line
		}
	}
	return "longrun session " + session
}
