package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	activities "github.com/longrun/longrun/activities/contract"
	"github.com/longrun/longrun/conversation"
)

// setupCheckout runs the repository's setup command (the worker's
// --setup, which OpenCheckout named) in the new checkout before the first
// model call, on the worker holding it; its result, with the output's
// tail, is in the history. A setup that fails does not end the session:
// the task may not need what it fetches, the checkout is there, and a
// failed session would lose the person's task for what the model can
// often work around (run the command itself with the network, or say
// what is missing). The model is told instead, after the task.
func (s *driver) setupCheckout(ctx workflow.Context, command string) {
	res, err := s.setupCheckoutCall(ctx, command)
	if err != nil {
		res.Command, res.Error = command, rootMessage(err)
	}
	if res.Error == "" {
		s.logger(ctx).Info("repository setup", "command", command, "cached", res.Cached, "millis", res.Millis)
		return
	}
	s.logger(ctx).Warn("the repository's setup failed; the session goes on", "command", command, "error", res.Error)
	if s.endsWithUser() {
		s.Messages = append(s.Messages, conversation.Message{Role: conversation.RoleUser, Content: setupFailedText(res)})
	}
}

// setupFailedText tells the model the setup failed, with the end of its
// output: what it would have downloaded may be missing.
func setupFailedText(res activities.SetupResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Note from the worker, not the person: the repository's setup command `%s` failed before you started (%s). ", res.Command, res.Error)
	b.WriteString("Dependencies it would have downloaded may be missing, and commands run without the network unless the session allows it. Work around it if you can, and say in your final answer if it kept you from checking your work.")
	if out := strings.TrimSpace(res.Output); out != "" {
		const tail = 2000
		if len(out) > tail {
			out = "…" + strings.ToValidUTF8(out[len(out)-tail:], "")
		}
		fmt.Fprintf(&b, "\n\nThe end of its output:\n\n%s", out)
	}
	return b.String()
}
