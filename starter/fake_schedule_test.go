package main

import (
	"context"
	"fmt"
	"sync"

	"go.temporal.io/sdk/client"
)

// fakeSchedules is the fake client's schedule client: it records what the
// schedule commands ask for and answers from its fields.
type fakeSchedules struct {
	mu      sync.Mutex
	created []client.ScheduleOptions
	ops     []string // "pause NAME: NOTE", "delete NAME", ...

	createErr error                       // Create's answer
	handleErr error                       // every handle call's answer, e.g. NotFound
	desc      *client.ScheduleDescription // Describe's answer
	entries   []*client.ScheduleListEntry // List's
}

func (s *fakeSchedules) Create(_ context.Context, o client.ScheduleOptions) (client.ScheduleHandle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.createErr != nil {
		return nil, s.createErr
	}
	s.created = append(s.created, o)
	return fakeScheduleHandle{o.ID, s}, nil
}

func (s *fakeSchedules) List(context.Context, client.ScheduleListOptions) (client.ScheduleListIterator, error) {
	return &fakeScheduleIter{entries: s.entries}, nil
}

func (s *fakeSchedules) GetHandle(_ context.Context, id string) client.ScheduleHandle {
	return fakeScheduleHandle{id, s}
}

func (s *fakeSchedules) record(op string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handleErr != nil {
		return s.handleErr
	}
	s.ops = append(s.ops, op)
	return nil
}

type fakeScheduleHandle struct {
	id string
	s  *fakeSchedules
}

func (h fakeScheduleHandle) GetID() string                { return h.id }
func (h fakeScheduleHandle) Delete(context.Context) error { return h.s.record("delete " + h.id) }
func (h fakeScheduleHandle) Backfill(context.Context, client.ScheduleBackfillOptions) error {
	return h.s.record("backfill " + h.id)
}
func (h fakeScheduleHandle) Update(context.Context, client.ScheduleUpdateOptions) error {
	return h.s.record("update " + h.id)
}
func (h fakeScheduleHandle) Describe(context.Context) (*client.ScheduleDescription, error) {
	if err := h.s.record("describe " + h.id); err != nil {
		return nil, err
	}
	return h.s.desc, nil
}
func (h fakeScheduleHandle) Trigger(_ context.Context, o client.ScheduleTriggerOptions) error {
	return h.s.record(fmt.Sprintf("trigger %s: %s", h.id, o.Overlap))
}
func (h fakeScheduleHandle) Pause(_ context.Context, o client.SchedulePauseOptions) error {
	return h.s.record(fmt.Sprintf("pause %s: %s", h.id, o.Note))
}
func (h fakeScheduleHandle) Unpause(_ context.Context, o client.ScheduleUnpauseOptions) error {
	return h.s.record(fmt.Sprintf("unpause %s: %s", h.id, o.Note))
}

type fakeScheduleIter struct{ entries []*client.ScheduleListEntry }

func (it *fakeScheduleIter) HasNext() bool { return len(it.entries) > 0 }
func (it *fakeScheduleIter) Next() (*client.ScheduleListEntry, error) {
	e := it.entries[0]
	it.entries = it.entries[1:]
	return e, nil
}
