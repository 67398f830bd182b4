package session

import "github.com/longrun/longrun/guardian"

// GuardianDecision is one decision of the guardian, as the status query
// (its "guardian" list) and the Web UI's current details show it.
type GuardianDecision struct {
	CallID string `json:"call_id"`
	ID     string `json:"id,omitempty"` // the session's id of the call
	Tool   string `json:"tool"`
	Turn   int    `json:"turn"`
	guardian.Verdict
}

// GuardianState is what a session knows of its guardian (approval
// "guardian"): its cache of decisions, its denial streak and its recent
// decisions, carried across continue-as-new (State.Guardian).
type GuardianState struct {
	Memory guardian.Memory    `json:"memory"`
	Log    []GuardianDecision `json:"log,omitempty"`
}
