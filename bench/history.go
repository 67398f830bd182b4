package main

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
)

// turnCost is where one tool turn's time went, read from the event
// timestamps of its history: the workflow tasks it took, the model
// activity and the tool activity, each split into the wait for dispatch
// (scheduled to started) and the run (started to completed, which includes
// reporting the result).
type turnCost struct {
	Wall                 time.Duration // model call scheduled to the next model call scheduled
	WFTs                 int           // workflow tasks scheduled in the turn
	Events               int
	Upserts              int // search attribute upserts
	WFTQueue, WFTRun     time.Duration
	ModelQueue, ModelRun time.Duration
	ToolQueue, ToolRun   time.Duration
	// Other activities (a checkpoint, a checkout's open or close):
	// how many, and their dispatch and run.
	Others                  int
	OtherQueue, OtherRun    time.Duration
	ModelStart, NextModelAt time.Time
}

// Activity type names as registered from *activities.Activities methods.
const (
	actModel = "CallModel"
	actTool  = "RunTool"
)

// breakdown attributes every event to the turn it happened in (a turn
// starts when its model call is scheduled) and returns the tool turns: the
// ones followed by another model call.
func breakdown(h *historypb.History) []turnCost { return breakdownOf(h, actModel) }

// breakdownOf is breakdown for a workflow whose model activity is of type
// model (the floor's is floorModel).
func breakdownOf(h *historypb.History, model string) []turnCost {
	type sched struct {
		kind string // "wft", actModel, actTool
		turn int
		at   time.Time
		run  time.Time
	}
	var turns []*turnCost // turns[i] is turn i+1
	cur := func() *turnCost {
		if len(turns) == 0 {
			return nil
		}
		return turns[len(turns)-1]
	}
	byID := map[int64]*sched{}
	add := func(kind string, ev *historypb.HistoryEvent) {
		byID[ev.GetEventId()] = &sched{kind: kind, turn: len(turns), at: ev.GetEventTime().AsTime()}
	}
	started := func(id int64, at time.Time) {
		if s := byID[id]; s != nil {
			s.run = at
		}
	}
	finished := func(id int64, at time.Time) {
		s := byID[id]
		if s == nil || s.turn == 0 {
			return
		}
		t := turns[s.turn-1]
		switch s.kind {
		case "wft":
			t.WFTQueue += s.run.Sub(s.at)
			t.WFTRun += at.Sub(s.run)
		case model:
			t.ModelQueue += s.run.Sub(s.at)
			t.ModelRun += at.Sub(s.run)
		case actTool:
			t.ToolQueue += s.run.Sub(s.at)
			t.ToolRun += at.Sub(s.run)
		default:
			t.Others++
			t.OtherQueue += s.run.Sub(s.at)
			t.OtherRun += at.Sub(s.run)
		}
	}
	for _, ev := range h.GetEvents() {
		at := ev.GetEventTime().AsTime()
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			name := ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
			if name == model {
				if t := cur(); t != nil {
					t.NextModelAt = at
				}
				turns = append(turns, &turnCost{ModelStart: at})
			}
			add(name, ev)
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			started(ev.GetActivityTaskStartedEventAttributes().GetScheduledEventId(), at)
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			finished(ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId(), at)
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
			add("wft", ev)
			if t := cur(); t != nil {
				t.WFTs++
			}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			started(ev.GetWorkflowTaskStartedEventAttributes().GetScheduledEventId(), at)
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			finished(ev.GetWorkflowTaskCompletedEventAttributes().GetScheduledEventId(), at)
		case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			if t := cur(); t != nil {
				t.Upserts++
			}
		}
		if t := cur(); t != nil {
			t.Events++
		}
	}
	var out []turnCost
	for _, t := range turns {
		if !t.NextModelAt.IsZero() {
			t.Wall = t.NextModelAt.Sub(t.ModelStart)
			out = append(out, *t)
		}
	}
	return out
}

// sessionPhases is where a whole session's wall time went, read from its
// history: what comes before its first model call (the checkout's open,
// the first workflow task), the model calls themselves, what lies between
// one model call's completion and the next one's scheduling (the
// workflow tasks and the local calls of every turn), and what comes after
// the last model call (the checkout's close, the last workflow task).
type sessionPhases struct {
	Before, Models, Between, After time.Duration
	// Outside is the wall time the history does not cover: the start
	// request before the first event and the result's way back.
	Outside time.Duration
}

// phases splits h's wall (the client's, start request to result) into
// sessionPhases.
func phases(h *historypb.History, wall time.Duration) sessionPhases {
	var p sessionPhases
	var first, last, lastModelDone time.Time
	models := map[int64]time.Time{}
	for _, ev := range h.GetEvents() {
		at := ev.GetEventTime().AsTime()
		if first.IsZero() {
			first = at
		}
		last = at
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() != actModel {
				continue
			}
			models[ev.GetEventId()] = at
			if lastModelDone.IsZero() {
				p.Before = at.Sub(first)
			} else {
				p.Between += at.Sub(lastModelDone)
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			a := ev.GetActivityTaskCompletedEventAttributes()
			if s, ok := models[a.GetScheduledEventId()]; ok {
				p.Models += at.Sub(s)
				lastModelDone = at
			}
		}
	}
	if !lastModelDone.IsZero() {
		p.After = last.Sub(lastModelDone)
	}
	p.Outside = wall - last.Sub(first)
	return p
}
