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
	// checkout is where the durable sessions' calls run (checkout.go);
	// state is the worker's state directory, "" for checkoutNone.
	checkout string
	state    string
	// queue is the durable worker's task queue.
	queue string
}

// newQueue is a task queue name of its own, starting with prefix.
func newQueue(prefix string) string { return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()) }

// baseline is the activities the in-process loop calls.
func (w *world) baseline() *activities.Activities {
	if w.base != nil {
		return w.base
	}
	return w.acts
}

// newWorld makes the workspace for the checkout mode co (checkout.go:
// a git repository with one commit for checkoutGit, a state directory
// beside it unless checkoutNone), the scripted model and the activities.
func newWorld(delay time.Duration, co string) (*world, error) {
	dir, err := os.MkdirTemp("", "longrun-bench-")
	if err != nil {
		return nil, err
	}
	w := &world{dir: dir, checkout: co, queue: newQueue("bench")}
	if err := os.WriteFile(filepath.Join(dir, benchFile), []byte("one line of notes\n"), 0o644); err != nil {
		w.close()
		return nil, err
	}
	if w.state, err = prepareCheckout(dir, co); err != nil {
		w.close()
		return nil, err
	}
	w.model = newModel(delay)
	if w.acts, err = w.activities(nil); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// activities are the world's activities keeping conversations in store
// (nil: none), with the worker's state directory and queues when its
// sessions get checkouts.
func (w *world) activities(store transcript.Store) (*activities.Activities, error) {
	return newActivities(w.model.URL(), w.dir, store, w.isolation())
}

// newActivities are the activities on the model at modelURL with the
// builtin tools in the workspace dir, keeping conversations in store (nil:
// none), and the state directory and queues of iso (zero: none, so every
// session runs in the workspace).
func newActivities(modelURL, dir string, store transcript.Store, iso isolation) (*activities.Activities, error) {
	ws, err := tools.NewWorkspace(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	return activities.New(activities.Config{
		Model: activities.ModelConfig{
			BaseURL: modelURL, APIKey: "bench", DefaultModel: "scripted-bench", RequestTimeout: time.Minute,
		},
		Registry:      tools.NewRegistry(tools.Builtin(tools.DefaultConfig())...),
		Workspace:     ws,
		Transcript:    store,
		StateDir:      iso.StateDir,
		WorkerQueue:   iso.Own,
		CheckoutQueue: iso.Pinned,
	}), nil
}

// withStore gives the world's activities a transcript store in its
// workspace and the worker's workflows its reader, as a worker started
// with --transcript on does. Call it before newDurable.
func (w *world) withStore() error {
	store, err := openStore(w.dir, w.state)
	if err != nil {
		return err
	}
	if w.acts, err = w.activities(store); err != nil {
		return err
	}
	w.reader = store
	return nil
}

// openStore opens a transcript store in the state directory state, as
// the product worker keeps it (a copy of the workspace, checkoutCopy,
// must not carry it along), or in the workspace dir without one.
func openStore(dir, state string) (*transcript.Cache, error) {
	where := filepath.Join(dir, ".longrun", "transcript")
	if state != "" {
		where = filepath.Join(state, "transcript")
	}
	d, err := transcript.NewDir(where)
	if err != nil {
		return nil, fmt.Errorf("transcript store: %w", err)
	}
	return transcript.NewCache(d, 64<<20), nil
}

func (w *world) close() {
	if w.model != nil {
		w.model.Close()
	}
	_ = os.RemoveAll(w.dir)
	if w.state != "" {
		_ = os.RemoveAll(w.state)
	}
}
