package activities

import "github.com/longrun/longrun/activities/contract"

// CloseCheckoutResult is CloseCheckout's output: see package contract.
type CloseCheckoutResult = contract.CloseCheckoutResult
