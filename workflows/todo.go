package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/toolspec"
)

// TodoName is the plan tool: the model keeps its list of steps with it,
// as Codex's update_plan and OpenCode's todowrite. The session answers it
// itself: the list lives in workflow state, so it survives crashes and
// continue-as-new, and no worker is involved.
const TodoName = "todo"

// TodoParams are the todo tool's arguments.
type TodoParams struct {
	Todos []Todo `json:"todos" jsonschema:"The whole plan, in order; it replaces the previous list."`
}

// todoSpec is the plan tool as the model sees it.
func todoSpec() toolspec.Spec {
	return toolspec.Spec{
		Name: TodoName,
		Description: "Keep your plan for this task: send the whole list of steps each time, with each step's status. " +
			"Use it for work of three steps or more; keep exactly one step in_progress while you work on it and mark steps completed as soon as they are done. " +
			"The current list is shown to you at every turn and to the person watching the session.",
		Parameters: toolspec.ParamsSchema[TodoParams](func(p toolspec.ParamProps) {
			// A slice may be null in Go; the plan is always a list.
			p["todos"].Type, p["todos"].Types = "array", nil
			item := p["todos"].Items.Properties
			toolspec.NonEmpty(item["content"])
			toolspec.OneOf(item["status"], TodoPending, TodoInProgress, TodoCompleted)
		}),
		ReadOnly:       true, // it changes the session's own notes, nothing in the workspace
		TimeoutSeconds: 1,
	}
}

// todoTool is the plan tool, answered by the session.
type todoTool struct{}

func (todoTool) offer(*driver, []toolspec.Spec) bool { return true }

func (todoTool) spec() toolspec.Spec { return todoSpec() }

// answer replaces the plan with the call's list (already validated
// against the schema) and says what it now holds.
func (todoTool) answer(_ workflow.Context, s *driver, cs callRef) (toolspec.Result, error) {
	todos, text, ok := session.ApplyTodos(cs.call().Arguments)
	if !ok {
		return toolspec.Errorf("%s", text), nil
	}
	s.Todos = todos
	return toolspec.Result{Content: text}, nil
}
