// Package activities holds everything non-deterministic a session does: the
// model call (openai-go against any OpenAI-compatible endpoint), running a
// tool in the workspace, and reporting the tool catalog. The workflow refers
// to these methods through a nil *Activities; the worker registers a real one.
package activities

import (
	"context"
	"fmt"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/longrun/longrun/activities/contract"
	"github.com/longrun/longrun/forge"
	"github.com/longrun/longrun/lsp"
	"github.com/longrun/longrun/mcp"
	"github.com/longrun/longrun/notify"
	"github.com/longrun/longrun/tools"
	"github.com/longrun/longrun/transcript"
)

// ModelConfig is how the worker reaches the model. It comes from the
// worker's environment (OPENAI_BASE_URL, OPENAI_API_KEY, LONGRUN_MODEL) and
// never enters workflow input or history.
type ModelConfig struct {
	BaseURL      string
	APIKey       string
	DefaultModel string
	// RequestTimeout bounds one HTTP request to the model.
	RequestTimeout time.Duration
	// Prices estimates each call's cost; nil means DefaultPrices.
	Prices PriceTable
	// NoStream sends plain requests instead of streamed ones, for
	// endpoints (some proxies) that cannot stream (LONGRUN_MODEL_STREAM=off).
	NoStream bool
	// FreeformTools is whether apply_patch goes out as a custom tool with
	// its grammar: FreeformAuto (empty: GPT-5-family models), FreeformOn or
	// FreeformOff (LONGRUN_FREEFORM_TOOLS; see model_custom.go).
	FreeformTools string
	// API is the wire protocol: ModelAPIChat, ModelAPIResponses, or empty
	// for chat except for the models that only speak the Responses API
	// (LONGRUN_MODEL_API).
	API string
	// PromptCacheKey says when to send a per-session prompt_cache_key:
	// PromptCacheKeyAuto (or empty), On or Off (LONGRUN_PROMPT_CACHE_KEY).
	PromptCacheKey string
}

// Config is every dependency of the activities, given once to New. Each
// zero value is a worker without that part, and says below what that
// means; nothing is set after New.
type Config struct {
	// Model is how the model is reached.
	Model ModelConfig
	// Registry holds the built-in tools; nil: ListTools fails.
	Registry *tools.Registry
	// Workspace is the root every tool is confined to (a --workspace
	// root); nil only in tests of the model call.
	Workspace *tools.Workspace
	// Worker is the worker's own configuration. Zero: no workspace is
	// trusted and there are no worker rules.
	Worker WorkerConfig
	// Guardian is the worker's reviewer model.
	Guardian GuardianConfig
	// Transcript holds conversations by reference: CallModel then takes a
	// conversation by reference (ModelRequest.Head) and stores what it was
	// sent, and Compact can run. Nil: this worker keeps none and takes
	// whole conversations only.
	Transcript transcript.Store
	// Notify posts to the worker's notification sinks. Nil (or no sink):
	// sessions are told the worker has none (WorkspaceConfig.Notify) and
	// schedule no notification.
	Notify *notify.Sender
	// Jobs is the worker's job manager and WorkerQueue the task queue only
	// this worker polls. Background jobs live in this process: the session
	// sends every call about a job, and the kill at its end, to that queue.
	Jobs        JobKiller
	WorkerQueue string
	// Shell is how this worker runs shell commands, so LoadWorkspaceConfig
	// can tell a session whether a sandbox stands behind its approvals
	// (WorkspaceConfig.NoSandbox). Nil: not said, taken as no sandbox
	// (fail closed).
	Shell *tools.ShellConfig
	// StateDir is the worker's state directory, under which sessions' own
	// checkouts live (checkout.Dir). "": none, a session runs in place.
	StateDir string
	// InPlace makes every session run in place, in the worker's
	// workspace, as one started --in-place does (longrun-worker
	// --in-place): for a workspace a checkout cannot hold. Checkouts made
	// before stay this worker's to close.
	InPlace bool
	// LSP holds the worker's language servers: edits then report the
	// changed files' diagnostics, and a session's servers stop with its
	// checkout. Nil: none.
	LSP *lsp.Manager
	// MCP holds the worker's MCP servers: ListTools adds their tools after
	// the built-ins and RunTool sends calls for them to the Manager. The
	// connections live in this worker process, so every worker of a task
	// queue needs the same MCP configuration. Nil: none.
	MCP *mcp.Manager
	// CheckpointRemote is where each checkpoint and, at the end, the
	// session's branch are pushed (any git URL, or the path of a bare
	// repository every worker reaches), and whence a lost worker's
	// checkout is restored. "": a checkpoint stays in the session's
	// repository, and restoring it works only on a worker that shares
	// that repository and state directory (in practice: the same machine).
	CheckpointRemote string
	// MaxBundleBytes has each checkpoint, when there is no
	// CheckpointRemote, stored in the transcript store as a git bundle of
	// at most this many bytes; at a session's end the branch of a checkout
	// restored on this worker is stored the same way, so the person's
	// repository can fetch it (starter diff) once the checkout is removed.
	// 0: none are.
	MaxBundleBytes int64
	// MaxCheckoutBytes bounds the disk all of the worker's checkouts take
	// together: OpenCheckout refuses a new one that would go past it. 0:
	// no bound.
	MaxCheckoutBytes int64
	// CheckoutQueue is the task queue of the worker's checkouts: it polls
	// it for as long as it keeps its state directory, across restarts,
	// unlike WorkerQueue, whose jobs die with the process. "": WorkerQueue.
	CheckoutQueue string
	// Forge publishes a session's branch when it ends (PushBranch): the
	// remote, the forge and its token, which stay in this process. Nil
	// or not Enabled: branches stay local, and CloseCheckout asks for no
	// push, so the session issues the commands it always did.
	Forge *forge.Config
	// Setup holds the repositories' setup commands (SetupCheckout). Nil
	// or none for a checkout's repository: OpenCheckout asks for no
	// setup, and the session issues the commands it always did.
	Setup *SetupConfig
}

// Activities holds the dependencies of every activity, complete when New
// returns. Its exported methods are the activities the worker registers,
// so it has no exported setters.
type Activities struct {
	cfg    Config
	client openai.Client
	tools  toolDefsCache // decoded tool definitions by reference (tooldefs.go)
}

// New returns activities with every dependency cfg names: they call the
// model cfg.Model describes and run cfg.Registry's tools confined to
// cfg.Workspace.
func New(cfg Config) *Activities {
	mc := cfg.Model
	opts := []option.RequestOption{
		// Temporal's retry policy owns retries; a client retrying on its own
		// would multiply attempts and hide faults from the history.
		option.WithMaxRetries(0),
	}
	if mc.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(mc.BaseURL))
	}
	// An empty key is allowed (Ollama, llama.cpp), but the client would
	// otherwise read OPENAI_API_KEY itself; set it explicitly either way.
	opts = append(opts, option.WithAPIKey(mc.APIKey))
	if mc.RequestTimeout > 0 {
		opts = append(opts, option.WithRequestTimeout(mc.RequestTimeout))
	}
	return &Activities{cfg: cfg, client: openai.NewClient(opts...)}
}

// Catalog is the result of ListTools: see package contract.
type Catalog = contract.Catalog

// ListTools reports the worker's tool catalog: the built-ins, then the
// tools of its MCP servers, each part sorted by name. A server that is
// down is left out (and logged by the Manager), not a failed catalog.
func (a *Activities) ListTools(ctx context.Context) (Catalog, error) {
	if a.cfg.Registry == nil {
		return Catalog{}, fmt.Errorf("list tools: worker has no tool registry")
	}
	specs := a.cfg.Registry.Specs()
	specs = append(specs, a.mcpSpecs(ctx, len(specs))...)
	return Catalog{Tools: specs, DefaultModel: a.cfg.Model.DefaultModel}, nil
}
