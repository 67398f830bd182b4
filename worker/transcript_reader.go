package main

import (
	"context"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/transcript"
)

// storeReader lets the session's conversation queries resolve transcript
// references (workflows.SetTranscriptReader) from this worker's store.
type storeReader struct{ s transcript.Store }

func (r storeReader) Load(ctx context.Context, head string) ([]conversation.Message, error) {
	return transcript.Load(ctx, r.s, head)
}

func (r storeReader) Expand(ctx context.Context, msgs []conversation.Message) ([]conversation.Message, error) {
	return transcript.Expand(ctx, r.s, msgs)
}
