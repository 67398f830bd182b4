// Package session is the pure core of a Longrun session: its state (which
// is also what it carries across continue-as-new), the decision for each
// tool call of a model reply, the text of every result a call gets without
// running to its end, the batch plan, the budgets and the compaction
// decision. It imports no Temporal package, so all of it is tested as plain
// functions; package workflows drives it on Temporal
// (TestNoTemporalImports).
package session
