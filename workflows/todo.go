package workflows

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/tools"
)

// TodoName is the plan tool: the model keeps its list of steps with it,
// as Codex's update_plan and OpenCode's todowrite. The session answers it
// itself: the list lives in workflow state, so it survives crashes and
// continue-as-new, and no worker is involved.
const TodoName = "todo"

// QueryTodos returns the session's plan: [{"content", "status"}].
const QueryTodos = "todos"

// Todo is one step of the plan.
type Todo struct {
	Content string `json:"content"`
	Status  string `json:"status"` // pending, in_progress, completed
}

// Todo states.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
)

// todoSpec is the plan tool as the model sees it.
func todoSpec() tools.Spec {
	return tools.Spec{
		Name: TodoName,
		Description: "Keep your plan for this task: send the whole list of steps each time, with each step's status. " +
			"Use it for work of three steps or more; keep exactly one step in_progress while you work on it and mark steps completed as soon as they are done. " +
			"The current list is shown to you at every turn and to the person watching the session.",
		Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "todos": {
      "type": "array",
      "description": "The whole plan, in order; it replaces the previous list.",
      "items": {
        "type": "object",
        "properties": {
          "content": {"type": "string", "minLength": 1, "description": "The step, in a few words."},
          "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
        },
        "required": ["content", "status"],
        "additionalProperties": false
      }
    }
  },
  "required": ["todos"],
  "additionalProperties": false
}`),
		ReadOnly:       true, // it changes the session's own notes, nothing in the workspace
		TimeoutSeconds: 1,
	}
}

// runTodo replaces the plan with the call's list (already validated
// against the schema) and says what it now holds.
func (s *session) runTodo(c conversation.ToolCall) tools.Result {
	var p struct {
		Todos []Todo `json:"todos"`
	}
	if err := json.Unmarshal([]byte(c.Arguments), &p); err != nil {
		return tools.Errorf("todo: %v", err)
	}
	inProgress := 0
	for _, t := range p.Todos {
		if t.Status == TodoInProgress {
			inProgress++
		}
	}
	s.todos = p.Todos
	done := 0
	for _, t := range p.Todos {
		if t.Status == TodoCompleted {
			done++
		}
	}
	msg := fmt.Sprintf("plan updated: %d steps, %d completed, %d in progress, %d pending", len(p.Todos), done, inProgress, len(p.Todos)-done-inProgress)
	if inProgress > 1 {
		msg += "; keep only one step in_progress at a time"
	}
	return tools.Result{Content: msg}
}

// todoText renders the plan for the model and the UI.
func todoText(todos []Todo) string {
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

// planReminder is the message the next request ends with while a plan is
// open, as MAF's TodoProvider injects it: the model sees its plan without
// calling for it, and the conversation does not keep a copy per turn.
func (s *session) planReminder() *conversation.Message {
	open := false
	for _, t := range s.todos {
		if t.Status != TodoCompleted {
			open = true
		}
	}
	if !open {
		return nil
	}
	return &conversation.Message{Role: conversation.RoleSystem, Content: "Your current plan (update it with the todo tool):\n" + todoText(s.todos)}
}
