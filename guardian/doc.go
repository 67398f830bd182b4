// Package guardian holds the pure decisions of the guardian, the
// independent reviewer model a session with approval "guardian" asks
// before a person: which calls it may decide, how its answer is read, the
// per-session cache of its decisions, the denial streak, and the prompt it
// is sent. It has no Temporal and no openai-go import, so every rule is a
// plain function with a table test; the activity (activities/guardian.go)
// makes the call and the workflow (workflows/guardian.go) applies the
// verdict.
//
// The guardian only ever stands in for a person: it never decides a call
// the rules allow or deny, a hard-blocked command, a write to a control
// file, or a command whose program is computed at run time; and what it
// approves still runs as an unapproved call would (no person vouched for
// it, so the sandbox keeps its read-only and no-network rules for it).
package guardian
