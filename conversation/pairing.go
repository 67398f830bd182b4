package conversation

import (
	"errors"
	"fmt"
)

// CheckPairing verifies the invariant that makes a conversation valid to
// send to any model: every tool call of an assistant message is answered by
// exactly one tool result, in the tool messages that directly follow it,
// before the next assistant or user message; and no result answers a call
// that was not made. It returns every violation found, joined.
func CheckPairing(msgs []Message) error {
	var errs []error
	open := map[string]string{} // call id -> tool name, calls awaiting a result
	var order []string          // call ids of the open batch, in call order
	seen := map[string]bool{}   // every call id ever made
	closeBatch := func(at int) {
		for _, id := range order {
			if _, still := open[id]; still {
				errs = append(errs, fmt.Errorf("message %d: tool call %s (%s) has no result", at, id, open[id]))
			}
		}
		open = map[string]string{}
		order = nil
	}
	for i, m := range msgs {
		switch m.Role {
		case RoleAssistant:
			closeBatch(i)
			for _, c := range m.ToolCalls {
				if c.ID == "" {
					errs = append(errs, fmt.Errorf("message %d: tool call to %s has no id", i, c.Name))
					continue
				}
				if seen[c.ID] {
					errs = append(errs, fmt.Errorf("message %d: tool call id %s is used twice", i, c.ID))
					continue
				}
				seen[c.ID] = true
				open[c.ID] = c.Name
				order = append(order, c.ID)
			}
		case RoleTool:
			if m.Result == nil {
				errs = append(errs, fmt.Errorf("message %d: tool message without a result", i))
				continue
			}
			id := m.Result.CallID
			if _, ok := open[id]; !ok {
				if seen[id] {
					errs = append(errs, fmt.Errorf("message %d: second result for tool call %s", i, id))
				} else {
					errs = append(errs, fmt.Errorf("message %d: result for unknown tool call %s", i, id))
				}
				continue
			}
			if m.Result.Reason == "" {
				errs = append(errs, fmt.Errorf("message %d: result for %s records no reason", i, id))
			}
			delete(open, id)
		default:
			closeBatch(i)
		}
	}
	closeBatch(len(msgs))
	return errors.Join(errs...)
}
