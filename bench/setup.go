package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/tools"
	"github.com/longrun/longrun/transcript"
	"github.com/longrun/longrun/workflows"
)

// benchFile is the small file every scripted turn reads.
const benchFile = "notes.txt"

// promptPrefix carries the shape of the session in the prompt (tool turns,
// calls per turn), so one stateless responder serves any number of
// concurrent sessions.
const promptPrefix = "bench turns="

// prompt is the user message of a session of turns tool turns, each
// asking for calls tool calls in one reply.
func prompt(turns, calls int) string {
	return fmt.Sprintf("%s%d calls=%d: read the notes", promptPrefix, turns, calls)
}

// newModel starts a scripted model that answers each request after delay:
// `read` calls (each with a different limit: three identical calls in a
// row would trip the doom-loop check and wait for a person) while the
// conversation has fewer tool results than the prompt asks for, then a
// final text.
func newModel(delay time.Duration) *scriptedmodel.Server {
	return scriptedmodel.NewResponder(func(req scriptedmodel.Request) (scriptedmodel.Reply, bool) {
		turns, calls, results := 0, 1, 0
		for _, m := range req.Messages {
			switch {
			case m.Role == "user" && strings.HasPrefix(m.Content, promptPrefix):
				shape, _, _ := strings.Cut(strings.TrimPrefix(m.Content, promptPrefix), ":")
				t, c, _ := strings.Cut(shape, " calls=")
				turns, _ = strconv.Atoi(t)
				calls, _ = strconv.Atoi(c)
			case m.Role == "tool":
				results++
			}
		}
		if results >= turns*calls {
			return scriptedmodel.Reply{Text: "done", Delay: delay}, true
		}
		r := scriptedmodel.Reply{Delay: delay}
		for i := 0; i < calls; i++ {
			r.ToolCalls = append(r.ToolCalls, scriptedmodel.Call{
				ID: fmt.Sprintf("call_%d", results+i+1), Name: "read",
				Arguments: fmt.Sprintf(`{"path":%q,"limit":%d}`, benchFile, results+i+1),
			})
		}
		return r, true
	})
}

// keepModelConns lets the default HTTP transport (the model client's)
// keep a connection per concurrent session to the scripted model: with
// its default of two idle connections a host, 500 sessions would open
// and close a connection on almost every model call.
func keepModelConns() {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t.MaxIdleConns, t.MaxIdleConnsPerHost = 2048, 2048
	}
}

// world is what both loops share: the scripted model, one workspace and
// the activities (the same value runs the baseline and backs the worker).
type world struct {
	model *scriptedmodel.Server
	dir   string
	acts  *activities.Activities
	// base are the activities the baseline loop calls: acts, unless the
	// durable worker keeps a transcript store (-store), which an
	// in-process loop has no use for.
	base *activities.Activities
	// reader is the transcript store the worker's conversation query
	// reads, as a worker started with --transcript on has; nil without.
	reader workflows.TranscriptReader
}

// baseline is the activities the in-process loop calls.
func (w *world) baseline() *activities.Activities {
	if w.base != nil {
		return w.base
	}
	return w.acts
}

func newWorld(delay time.Duration) (*world, error) {
	dir, err := os.MkdirTemp("", "longrun-bench-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, benchFile), []byte("one line of notes\n"), 0o644); err != nil {
		return nil, err
	}
	m := newModel(delay)
	acts, err := newActivities(m.URL(), dir, nil)
	if err != nil {
		m.Close()
		return nil, err
	}
	return &world{model: m, dir: dir, acts: acts}, nil
}

// newActivities are the activities on the model at modelURL with the
// builtin tools in the workspace dir, keeping conversations in store (nil:
// none).
func newActivities(modelURL, dir string, store transcript.Store) (*activities.Activities, error) {
	ws, err := tools.NewWorkspace(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	return activities.New(activities.Config{
		Model: activities.ModelConfig{
			BaseURL: modelURL, APIKey: "bench", DefaultModel: "scripted-bench", RequestTimeout: time.Minute,
		},
		Registry:   tools.NewRegistry(tools.Builtin(tools.DefaultConfig())...),
		Workspace:  ws,
		Transcript: store,
	}), nil
}

// withStore gives the world's activities a transcript store in its
// workspace and the worker's workflows its reader, as a worker started
// with --transcript on does. Call it before newDurable.
func (w *world) withStore() error {
	d, err := transcript.NewDir(filepath.Join(w.dir, ".longrun", "transcript"))
	if err != nil {
		return fmt.Errorf("transcript store: %w", err)
	}
	store := transcript.NewCache(d, 64<<20)
	if w.acts, err = newActivities(w.model.URL(), w.dir, store); err != nil {
		return err
	}
	w.reader = store
	return nil
}

func (w *world) close() {
	w.model.Close()
	_ = os.RemoveAll(w.dir)
}
