package guardian

import (
	"encoding/json"
	"fmt"
	"github.com/longrun/longrun/conversation"
	"strings"
)

// Decisions the guardian can reach.
const (
	// Approve lets the call run without a person (still as an unapproved
	// call: see the package comment).
	Approve = "approve"
	// AskPerson hands the call to a person, as without a guardian.
	AskPerson = "ask"
	// Deny refuses the call; Reason goes back to the model.
	Deny = "deny"
)

// Failure kinds: why a verdict is AskPerson without the reviewer saying so.
const (
	FailTimeout   = "timeout"   // no answer within the worker's --guardian-timeout
	FailError     = "error"     // the model call failed
	FailMalformed = "malformed" // the answer was not the fixed JSON format
	FailStreak    = "streak"    // MaxDenials denials in a row: a person decides
)

// MaxReasonLen bounds the reason kept from the reviewer's answer.
const MaxReasonLen = 2000

// Verdict is the guardian's decision on one call, as recorded in history
// (the activity's result) and shown to people.
type Verdict struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
	// Failure is set when the reviewer did not decide (Decision is then
	// AskPerson): FailTimeout, FailError, FailMalformed or FailStreak.
	Failure string `json:"failure,omitempty"`
	// Model is the reviewer's model.
	Model string `json:"model,omitempty"`
	// Cached is set when an earlier decision on an identical call was
	// reused and no reviewer was asked.
	Cached bool `json:"cached,omitempty"`
	// Usage is what the review cost (nil: no model answered). The session
	// adds it to its own usage, so reviews count toward its budgets.
	Usage *conversation.Usage `json:"usage,omitempty"`
}

// Failed is the AskPerson verdict for a reviewer that did not decide.
func Failed(kind, why string) Verdict {
	return Verdict{Decision: AskPerson, Failure: kind, Reason: clip(why)}
}

// answer is the reviewer's fixed output format.
type answer struct {
	Decision *string `json:"decision"`
	Reason   *string `json:"reason"`
}

// Parse reads the reviewer's answer. Only one exact form counts: a single
// JSON object {"decision": "approve"|"ask"|"deny", "reason": "..."} with
// nothing else, optionally in one ```json fence. Anything else (text
// around it, a second object, an unknown field, an unknown decision, a
// denial without a reason) is malformed and asks a person: the answer is
// read, never searched, so text the reviewer echoed from the evidence
// cannot become its verdict.
func Parse(text string) Verdict {
	body := strings.TrimSpace(text)
	if strings.HasPrefix(body, "```") {
		inner, ok := unfence(body)
		if !ok {
			return Failed(FailMalformed, "the reviewer's answer has an unclosed code fence")
		}
		body = inner
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	var a answer
	if err := dec.Decode(&a); err != nil {
		return Failed(FailMalformed, fmt.Sprintf("the reviewer's answer is not the JSON object asked for: %v", err))
	}
	if dec.More() || !onlySpace(body[dec.InputOffset():]) {
		return Failed(FailMalformed, "the reviewer's answer has text after its JSON object")
	}
	if a.Decision == nil {
		return Failed(FailMalformed, `the reviewer's answer has no "decision"`)
	}
	d := strings.ToLower(strings.TrimSpace(*a.Decision))
	reason := ""
	if a.Reason != nil {
		reason = strings.TrimSpace(*a.Reason)
	}
	switch d {
	case Approve, AskPerson:
	case Deny:
		if reason == "" {
			return Failed(FailMalformed, "the reviewer denied without a reason for the model")
		}
	default:
		return Failed(FailMalformed, fmt.Sprintf("the reviewer's decision %q is not approve, ask or deny", *a.Decision))
	}
	return Verdict{Decision: d, Reason: clip(reason)}
}

// Normalize makes v safe to act on whatever produced it: a decision that
// is not one of the three, or a denial without a reason, asks a person.
func Normalize(v Verdict) Verdict {
	switch v.Decision {
	case Approve, AskPerson:
		return v
	case Deny:
		if strings.TrimSpace(v.Reason) != "" {
			return v
		}
	}
	out := Failed(FailMalformed, fmt.Sprintf("verdict %q is not usable", v.Decision))
	out.Model = v.Model
	return out
}

func unfence(s string) (string, bool) {
	nl := strings.IndexByte(s, '\n')
	if nl < 0 {
		return "", false
	}
	lang := strings.TrimSpace(s[3:nl])
	if lang != "" && !strings.EqualFold(lang, "json") {
		return "", false
	}
	rest := strings.TrimRight(s[nl+1:], " \t\r\n")
	if !strings.HasSuffix(rest, "```") {
		return "", false
	}
	return strings.TrimSuffix(rest, "```"), true
}

func onlySpace(s string) bool { return strings.TrimSpace(s) == "" }

func clip(s string) string {
	if len(s) <= MaxReasonLen {
		return s
	}
	cut := MaxReasonLen
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
