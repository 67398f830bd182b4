package contract

import "github.com/longrun/longrun/conversation"

// CompactRequest asks the worker to shrink a conversation that no longer
// fits the model's context window: Head and Messages as in ModelRequest.
type CompactRequest struct {
	Model    string                 `json:"model,omitempty"`
	Head     string                 `json:"head,omitempty"`
	Messages []conversation.Message `json:"messages"`
	// KeepTurns is how many of the latest turns (assistant messages and
	// what follows each) stay as they are.
	KeepTurns int `json:"keep_turns"`
	Turn      int `json:"turn"`
}

// CompactResult is the compacted conversation, stored in the transcript:
// the leading system messages, one summary message (its Compacted is the
// reference of the messages it replaced), then the kept turns, every tool
// call still paired.
type CompactResult struct {
	Head string `json:"head"`
	// Summary is the summary message's text, for the UI and the log.
	Summary string `json:"summary"`
	// Replaced and Kept count messages; Replaced 0 means there was nothing
	// older than KeepTurns to compact.
	Replaced int                `json:"replaced"`
	Kept     int                `json:"kept"`
	Usage    conversation.Usage `json:"usage"`
	// EstimatedTokens is the size of the compacted conversation, estimated
	// at four bytes a token.
	EstimatedTokens int `json:"estimated_tokens"`
}
