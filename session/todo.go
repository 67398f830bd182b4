package session

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/longrun/longrun/conversation"
)

// Todo is one step of the model's plan (the todo tool).
type Todo struct {
	Content string `json:"content" jsonschema:"The step, in a few words."`
	Status  string `json:"status"` // pending, in_progress, completed
}

// Todo states.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
)

// ApplyTodos reads a todo call's arguments (already validated against the
// schema): the new plan, and the text that answers the call. ok is false
// when the arguments do not decode; text then says why.
func ApplyTodos(args string) (todos []Todo, text string, ok bool) {
	var p struct {
		Todos []Todo `json:"todos"`
	}
	if err := json.Unmarshal([]byte(args), &p); err != nil {
		return nil, fmt.Sprintf("todo: %v", err), false
	}
	inProgress, done := 0, 0
	for _, t := range p.Todos {
		switch t.Status {
		case TodoInProgress:
			inProgress++
		case TodoCompleted:
			done++
		}
	}
	text = fmt.Sprintf("plan updated: %d steps, %d completed, %d in progress, %d pending", len(p.Todos), done, inProgress, len(p.Todos)-done-inProgress)
	if inProgress > 1 {
		text += "; keep only one step in_progress at a time"
	}
	return p.Todos, text, true
}

// TodoText renders the plan for the model and the UI.
func TodoText(todos []Todo) string {
	var b strings.Builder
	for _, t := range todos {
		mark := "[ ]"
		switch t.Status {
		case TodoCompleted:
			mark = "[x]"
		case TodoInProgress:
			mark = "[>]"
		}
		fmt.Fprintf(&b, "- %s %s\n", mark, t.Content)
	}
	return b.String()
}

// PlanReminder is the message the next request ends with while a plan is
// open, as MAF's TodoProvider injects it: the model sees its plan without
// calling for it, and the conversation does not keep a copy per turn. nil
// when every step is completed or there is no plan.
func PlanReminder(todos []Todo) *conversation.Message {
	open := false
	for _, t := range todos {
		if t.Status != TodoCompleted {
			open = true
		}
	}
	if !open {
		return nil
	}
	return &conversation.Message{Role: conversation.RoleSystem, Content: "Your current plan (update it with the todo tool):\n" + TodoText(todos)}
}
