package session

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxDeliveries is how many delivery ids a session keeps (State.Deliveries):
// a forge redelivers within days, and a session takes far fewer review
// messages than this in that time.
const MaxDeliveries = 512

// MaxDeliveryID bounds a delivery id's length: GitHub's are 36 bytes.
const MaxDeliveryID = 200

// ErrDeliveryTaken refuses a message whose delivery was taken before.
var ErrDeliveryTaken = errors.New("its message was taken before")

// TakeDelivery is seen with id added (newest last, the oldest dropped
// past MaxDeliveries), or an error when id was seen before (the forge
// sent the delivery again: ErrDeliveryTaken) or is not a plausible id.
// seen is not changed.
func TakeDelivery(seen []string, id string) ([]string, error) {
	if len(id) > MaxDeliveryID || !utf8.ValidString(id) || strings.ContainsFunc(id, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return seen, fmt.Errorf("delivery id of %d bytes is not one printable token of at most %d", len(id), MaxDeliveryID)
	}
	if slices.Contains(seen, id) {
		return seen, fmt.Errorf("delivery %q: %w", id, ErrDeliveryTaken)
	}
	out := append(slices.Clip(seen), id)
	if over := len(out) - MaxDeliveries; over > 0 {
		out = slices.Clone(out[over:])
	}
	return out, nil
}
