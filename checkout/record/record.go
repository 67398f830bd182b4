// Package record holds what a session's history records of its own
// checkout: the checkout (Info), the size of its changes (Stat) and what
// closing it did (Closed). Plain data, so the workflow and package
// session read them without linking package checkout, which runs git;
// package checkout names them as its own (type aliases).
package record

import (
	"fmt"
	"strings"
	"time"
)

// Info is a session's checkout, as its history records it.
type Info struct {
	// Repo is the repository's top directory (the person's checkout).
	Repo string `json:"repo"`
	// Dir is the checkout, absolute: <state-dir>/checkouts/<name>.
	Dir string `json:"dir"`
	// Name is the sanitised session id: the checkout's directory name and
	// the branch's last part.
	Name   string `json:"name"`
	Branch string `json:"branch"`
	// Base is the commit the branch starts from; BaseRef is how the
	// person named it (HEAD by default).
	Base    string `json:"base"`
	BaseRef string `json:"base_ref,omitempty"`
	// Sub is the session's working directory inside the checkout,
	// slash-separated, "" for its top.
	Sub string `json:"sub,omitempty"`
	// Copy marks a copy of a directory outside git (checkout.CreateCopy): Repo is
	// the directory copied, and Dir a repository of its own holding the
	// branch, kept until Discard.
	Copy bool `json:"copy,omitempty"`
	// Dropped are the nested .git entries (repositories inside the
	// directory copied) a copy left out (checkout.CreateCopy), slash-separated,
	// relative to Repo: the files beside them were copied, as files of
	// the copy's own repository.
	Dropped []string `json:"dropped,omitempty"`
}

// Stat is the size of what a session changed against its base: files,
// lines added and deleted (a binary file counts as a file, with no lines),
// and the first changed paths. Control files (.longrun/, .git/,
// AGENTS.md: permission.IsControlPath) are not counted: the branch never
// gets them (checkout.Close leaves them out); Control lists them instead.
type Stat struct {
	Files      int      `json:"files"`
	Insertions int      `json:"insertions"`
	Deletions  int      `json:"deletions"`
	Paths      []string `json:"paths,omitempty"`
	// Control are the control files the session created or changed in
	// its checkout, which are not committed.
	Control []string `json:"control,omitempty"`
}

// String is the one line status and the Web UI show: "3 files changed,
// +10 -2".
func (s Stat) String() string {
	noun := "files"
	if s.Files == 1 {
		noun = "file"
	}
	out := fmt.Sprintf("%d %s changed, +%d -%d", s.Files, noun, s.Insertions, s.Deletions)
	if len(s.Control) > 0 {
		out += fmt.Sprintf(" (control files left out: %s)", strings.Join(s.Control, ", "))
	}
	return out
}

// Closed is what ending a session's checkout did.
type Closed struct {
	// Commit is the commit made on the branch, "" when nothing changed.
	Commit string `json:"commit,omitempty"`
	// LeftOut are control files (.longrun/, AGENTS.md: see
	// permission.IsControlPath) the session created or changed in its
	// checkout: they configure what later sessions may do, so they never
	// reach the branch (and so starter apply) on the session's say; they
	// are removed with the checkout. A nested repository the session made
	// (a directory holding a .git) is listed too, as "dir/": the worker's
	// git never goes into it, and records neither it nor its files.
	LeftOut []string `json:"left_out,omitempty"`
	// Changes is the branch against its base.
	Changes *Stat `json:"changes,omitempty"`
	// Bundle is the reference of the branch stored as a git bundle
	// (checkout.BundleBranch) in the transcript store, when the checkout was
	// restored on a worker with no checkpoint remote: the person's
	// repository fetches the branch from it (starter diff, apply).
	Bundle string `json:"bundle,omitempty"`
	// PushDue is set by the worker that closed the checkout, not by
	// Close: it publishes branches (a push remote is configured there)
	// and this one has a commit, so the session asks it to publish
	// (PushBranch). Never set on a worker without a push remote, whose
	// sessions then issue the commands they always did.
	PushDue bool `json:"push_due,omitempty"`
}

// Review is what the reviewer of a session's pull request is shown of
// how the session got there (the body's "Checks run", "Approved" and
// "Left undone"): the latest commands it ran and how each ended, the
// calls a person let run (who, when), and the calls that did not run
// or did not finish. The session keeps it as it goes (session.Review)
// and hands it to the push; every list is bounded, its oldest entries
// dropped and counted.
type Review struct {
	Commands []ReviewCall `json:"commands,omitempty"`
	Approved []ReviewCall `json:"approved,omitempty"`
	Undone   []ReviewCall `json:"undone,omitempty"`
	// Dropped counts the entries that fell off the front of each list.
	DroppedCommands int `json:"dropped_commands,omitempty"`
	DroppedApproved int `json:"dropped_approved,omitempty"`
	DroppedUndone   int `json:"dropped_undone,omitempty"`
	// Plan is the model's plan items not marked completed when the
	// branch was published (the todos), filled in at the push.
	Plan []string `json:"plan,omitempty"`
}

// ReviewCall is one call in a Review. Summary, Text and Author are
// untrusted: a surface renders them through package untrusted.
type ReviewCall struct {
	ID string `json:"id"` // the session's id of the call, "c17"
	// Summary is the call on one line (a command call's command line).
	Summary string `json:"summary"`
	// Outcome is the result's reason (ran, failed, denied, timeout, ...),
	// or "approve" for an approval.
	Outcome string `json:"outcome"`
	// Exit is a command's exit code, when its result says it.
	Exit *int `json:"exit,omitempty"`
	// By is who let the call run or stopped it: person, rule, guardian.
	By string `json:"by,omitempty"`
	// Author is the name the decision's sender gave (the approval's
	// author), "" when it gave none.
	Author string `json:"author,omitempty"`
	// At is when the workflow recorded the decision or the result.
	At time.Time `json:"at,omitzero"`
	// Text is a denial's feedback, or the guardian's reason for its
	// approval.
	Text string `json:"text,omitempty"`
}
