package session

import (
	"fmt"
	"strings"

	"github.com/longrun/longrun/guardian"
)

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

// GuardianDenialText is what the model is told of a call the guardian
// denied.
func GuardianDenialText(v guardian.Verdict) string {
	return "denied by the guardian, the reviewer that decides for the user in this session: " +
		strings.TrimSuffix(v.Reason, ".") + ". It did not run; do not retry it unchanged. Change the approach, or ask the user."
}

// DescribeVerdict says why the guardian did not decide, for a person.
func DescribeVerdict(v guardian.Verdict) string {
	what := v.Reason
	if what == "" {
		what = "no reason given"
	}
	switch v.Failure {
	case guardian.FailTimeout, guardian.FailError, guardian.FailMalformed:
		return fmt.Sprintf("it could not decide (%s): %s", v.Failure, what)
	}
	return what
}
