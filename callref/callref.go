// Package callref names the tool calls of a session and matches a
// person's decision to the one call it means.
//
// A model chooses its own call ids: it can use one twice in a reply,
// use it again in a later turn, or put newlines in it. A decision keyed
// by such an id can land on a call the person never saw. So the session
// names every call itself ("c1", "c2", ... in the order it receives
// them, never reused), and a decision carries a digest of the tool and
// the exact arguments the person was shown: the session takes it only
// for the call it names and only when that call still has those
// arguments. The model's id stays in the conversation sent back to the
// model and is accepted from a person only while it names one call.
//
// Everything here is a pure function: the workflow calls it, so it must
// replay the same.
package callref

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Name is the id the session gives its n-th call (n from 1): "c1",
// "c2", ... Short, printable and safe in a shell, a URL and a form.
func Name(n int) string { return "c" + strconv.Itoa(n) }

// Digest is the sha256 of the tool's name and its raw arguments, in hex:
// what a decision carries to say which arguments the person saw. The NUL
// between them keeps ("ab", "c") and ("a", "bc") apart.
func Digest(tool, arguments string) string {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write([]byte(arguments))
	return hex.EncodeToString(h.Sum(nil))
}

// ShortLen is how many hex digits of a digest surfaces show, and the
// fewest a decision may carry: 64 bits.
const ShortLen = 16

// Short is the first ShortLen hex digits of a digest, as surfaces show it.
func Short(digest string) string {
	if len(digest) > ShortLen {
		return digest[:ShortLen]
	}
	return digest
}

// DigestMatches reports whether the digest a decision carries (all 64 hex
// digits, or at least the ShortLen a surface shows; any case) is the
// call's.
func DigestMatches(sent, call string) bool {
	sent = strings.ToLower(strings.TrimSpace(sent))
	return len(sent) >= ShortLen && len(sent) <= len(call) && strings.HasPrefix(call, sent)
}

// maxKeyLen bounds a model id kept as it is in the session's record of
// earlier calls; a longer one is kept as a hash (Key).
const maxKeyLen = 64

// Key is how the record of earlier calls keeps a model's call id: as it
// is when short, as a hash when long, so a model that sends huge ids
// cannot grow the state the session carries. Compare keys with keys.
func Key(modelID string) string {
	if len(modelID) <= maxKeyLen {
		return modelID
	}
	sum := sha256.Sum256([]byte(modelID))
	return "#" + hex.EncodeToString(sum[:16])
}

// Call is what matching needs of one call the session knows: a call of
// the batch in progress, or one of the record of earlier calls.
type Call struct {
	ID       string // the session's id
	ModelKey string // Key of the model's id
	// Digest is the call's digest (Digest); "" for a call of the record,
	// which no longer waits and has nothing left to compare.
	Digest string
}

// Request is what a decision names: the session's id, the model's id,
// or both, and the digest of what the person saw (optional).
type Request struct {
	ID      string
	ModelID string
	Digest  string
}

// Errors of Match. The workflow adds the waiting calls to each.
var (
	// ErrNoID: the decision names no call.
	ErrNoID = errors.New("names no call: send its id (the session's, as the pending list shows it)")
	// ErrUnknown: no call has that id.
	ErrUnknown = errors.New("no such call")
)

// Match returns the index in calls of the one call req names, or why it
// names none. The session's id wins: with it, the model's id may only
// confirm it. A model's id alone is taken only when exactly one call has
// it (as its model id or as its session id): a model that used it twice,
// in one reply or across turns, makes it ambiguous, and the decision is
// refused rather than guessed. A digest that does not match the call's
// is refused: the call has other arguments than the ones the person saw.
func Match(calls []Call, req Request) (int, error) {
	id, model := strings.TrimSpace(req.ID), req.ModelID
	var at int
	switch {
	case id != "":
		at = -1
		for i, c := range calls {
			if c.ID == id {
				at = i
				break
			}
		}
		if at < 0 {
			return -1, fmt.Errorf("call %s: %w", strconv.Quote(id), ErrUnknown)
		}
		if model != "" && calls[at].ModelKey != Key(model) {
			return -1, fmt.Errorf("call %s is not the call the model named %s: nothing decided; send the session's id alone", id, strconv.Quote(model))
		}
	case strings.TrimSpace(model) != "":
		var hits []int
		key := Key(model)
		for i, c := range calls {
			if c.ModelKey == key || c.ID == model {
				hits = append(hits, i)
			}
		}
		switch len(hits) {
		case 0:
			return -1, fmt.Errorf("call id %s: %w", strconv.Quote(model), ErrUnknown)
		case 1:
			at = hits[0]
		default:
			ids := make([]string, len(hits))
			for i, h := range hits {
				ids[i] = calls[h].ID
			}
			return -1, fmt.Errorf("call id %s names %d calls (%s): the model used it more than once, so nothing was decided; "+
				"name the call by the session's id (\"id\"), as the pending list shows it", strconv.Quote(model), len(hits), strings.Join(ids, ", "))
		}
	default:
		return -1, ErrNoID
	}
	if req.Digest != "" && calls[at].Digest != "" && !DigestMatches(req.Digest, calls[at].Digest) {
		return -1, &DigestError{ID: calls[at].ID, Sent: req.Digest, Call: calls[at].Digest}
	}
	return at, nil
}

// DigestError refuses a decision whose digest is not its call's: the
// call's arguments are not the ones the person was shown (a page shown
// before the call changed, or a model that reused an id).
type DigestError struct {
	ID         string
	Sent, Call string
}

func (e *DigestError) Error() string {
	return fmt.Sprintf("call %s has other arguments than the ones you saw (digest %s, yours %s): nothing decided; "+
		"look at the call again (longrun pending, or reload the page) and decide what it shows", e.ID, Short(e.Call), Short(strings.TrimSpace(e.Sent)))
}

// Record is one call of an earlier batch as the session remembers it, so
// a decision naming it is answered with what became of it, and a model
// that uses its id again makes that id ambiguous.
type Record struct {
	ID    string `json:"id"`
	Model string `json:"model"`          // Key of the model's id
	Fate  string `json:"fate,omitempty"` // what became of it, for a person
}

// MaxRecords bounds the record of earlier calls the session carries
// across continue-as-new.
const MaxRecords = 200

// Remember appends recs to the record, keeping the newest MaxRecords.
func Remember(record []Record, recs ...Record) []Record {
	record = append(record, recs...)
	if n := len(record) - MaxRecords; n > 0 {
		record = append([]Record(nil), record[n:]...)
	}
	return record
}
