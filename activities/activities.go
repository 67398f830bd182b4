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

// Activities holds the dependencies of every activity.
type Activities struct {
	model     ModelConfig
	client    openai.Client
	registry  *tools.Registry
	workspace *tools.Workspace
	// jobs and workerQueue serve background jobs (SetJobs).
	jobs        JobKiller
	workerQueue string
	// transcript holds conversations by reference (SetTranscript); nil:
	// this worker keeps none and takes whole conversations only.
	transcript transcript.Store
	// mcp holds the worker's MCP servers (SetMCP); nil: none.
	mcp *mcp.Manager
	// worker is the worker's own configuration (SetWorkerConfig).
	worker WorkerConfig
	// shell is how this worker runs shell commands (SetShell); nil: not
	// said, taken as no sandbox.
	shell *tools.ShellConfig
	// notify posts notifications to the worker's sinks (SetNotify); nil:
	// none.
	notify *notify.Sender
	// guardian is the worker's reviewer model (SetGuardian).
	guardian GuardianConfig
	// stateDir holds sessions' own checkouts (SetCheckouts); "": none.
	stateDir string
	// inPlace runs every session in place, with no checkout of its own
	// (SetInPlace).
	inPlace bool
	// lsp holds the worker's language servers (SetLSP); nil: none.
	lsp *lsp.Manager
	// checkpointRemote is where checkpoints are pushed
	// (SetCheckpointRemote); "": they stay in the repository.
	checkpointRemote string
	// maxBundleBytes bounds a checkpoint stored in the transcript store
	// as a bundle (SetCheckpointBundles); 0: none are.
	maxBundleBytes int64
	// maxCheckoutBytes bounds the disk the checkouts take
	// (SetCheckoutLimit); 0: no bound.
	maxCheckoutBytes int64
	// checkoutQueue is where calls pinned to a checkout go
	// (SetCheckoutQueue); "": workerQueue.
	checkoutQueue string
}

// New returns activities that call the model described by mc and run the
// registry's tools confined to workspace.
func New(mc ModelConfig, registry *tools.Registry, workspace *tools.Workspace) *Activities {
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
	return &Activities{
		model:     mc,
		client:    openai.NewClient(opts...),
		registry:  registry,
		workspace: workspace,
	}
}

// Catalog is the tool catalog a session works with, recorded in history at
// session start so the workflow never reads it from the environment.
type Catalog struct {
	Tools []tools.Spec `json:"tools"`
	// DefaultModel is the worker's LONGRUN_MODEL, the model of a session
	// that names none: the session picks its edit tools for it.
	DefaultModel string `json:"default_model,omitempty"`
}

// ListTools reports the worker's tool catalog: the built-ins, then the
// tools of its MCP servers, each part sorted by name. A server that is
// down is left out (and logged by the Manager), not a failed catalog.
func (a *Activities) ListTools(ctx context.Context) (Catalog, error) {
	if a.registry == nil {
		return Catalog{}, fmt.Errorf("list tools: worker has no tool registry")
	}
	specs := a.registry.Specs()
	specs = append(specs, a.mcpSpecs(ctx, len(specs))...)
	return Catalog{Tools: specs, DefaultModel: a.model.DefaultModel}, nil
}
