package activities

import (
	"bytes"
	"encoding/json"

	"github.com/longrun/longrun/checkout"
)

// CloseCheckoutResult is what CloseCheckout did: the commit on the
// session's branch, the control files left out of it, and the branch's
// size against its base.
type CloseCheckoutResult checkout.Closed

// UnmarshalJSON also reads the plain commit id CloseCheckout returned
// before it returned this struct, so recorded histories still replay.
func (r *CloseCheckoutResult) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '"' {
		*r = CloseCheckoutResult{}
		return json.Unmarshal(b, &r.Commit)
	}
	var c checkout.Closed
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	*r = CloseCheckoutResult(c)
	return nil
}
