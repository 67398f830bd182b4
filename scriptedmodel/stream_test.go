package scriptedmodel

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

type wireChunk struct {
	Choices []struct {
		Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		TotalTokens int `json:"total_tokens"`
	} `json:"usage"`
}

// post sends a chat-completions request and returns the response and its
// data events.
func post(t *testing.T, s *Server, body string) (*http.Response, []string) {
	t.Helper()
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	var events []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			events = append(events, d)
		}
	}
	return resp, events
}

func TestStreamFollowsTheProtocol(t *testing.T) {
	t.Parallel()
	reply := Reply{Text: "one two three four five six seven eight nine ten", ToolCalls: []Call{{ID: "c1", Name: "read", Arguments: `{"path": "a/ü.go"}`}}}
	s := New(reply, reply)
	defer s.Close()

	resp, events := post(t, s, `{"model":"m","messages":[],"stream":true,"stream_options":{"include_usage":true}}`)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	require.Equal(t, "[DONE]", events[len(events)-1])
	var text, name, args, finish string
	usage := 0
	for _, e := range events[:len(events)-1] {
		var c wireChunk
		require.NoError(t, json.Unmarshal([]byte(e), &c), e)
		if c.Usage != nil {
			usage = c.Usage.TotalTokens
			require.Empty(t, c.Choices, "the usage chunk has no choices")
			continue
		}
		require.Len(t, c.Choices, 1)
		ch := c.Choices[0]
		text += ch.Delta.Content
		for _, tc := range ch.Delta.ToolCalls {
			require.Equal(t, 0, tc.Index)
			name += tc.Function.Name
			args += tc.Function.Arguments
		}
		if ch.FinishReason != nil {
			finish = *ch.FinishReason
		}
	}
	require.Equal(t, reply.Text, text)
	require.Equal(t, "read", name)
	require.Equal(t, reply.ToolCalls[0].Arguments, args)
	require.Equal(t, "tool_calls", finish)
	require.Equal(t, 120, usage)
	require.Greater(t, len(events), 6, "text and arguments come in pieces")

	_, events = post(t, s, `{"model":"m","messages":[],"stream":true}`)
	require.NotContains(t, strings.Join(events, "\n"), "total_tokens", "no usage chunk unless asked")
}

func TestStreamChunkDelayAndDrop(t *testing.T) {
	t.Parallel()
	s := New(Reply{Text: "a b c", ChunkDelay: 100 * time.Millisecond}, Reply{Text: "a b c d e f", DropAfter: 150})
	defer s.Close()
	start := time.Now()
	_, events := post(t, s, `{"messages":[],"stream":true}`)
	// Role with "a ", "b ", "c", finish, [DONE]: four pauses.
	require.Len(t, events, 5)
	require.GreaterOrEqual(t, time.Since(start), 400*time.Millisecond)

	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(`{"messages":[],"stream":true}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	var body strings.Builder
	_, err = bufio.NewReader(resp.Body).WriteTo(&body)
	require.Error(t, err, "the connection is dropped mid-stream")
	require.Len(t, body.String(), 150)
}

func TestPlainRequestsStillGetJSON(t *testing.T) {
	t.Parallel()
	s := New(Text("hello"))
	defer s.Close()
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(`{"messages":[]}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var c struct {
		Object string `json:"object"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&c))
	require.Equal(t, "chat.completion", c.Object)
	require.False(t, s.Requests()[0].Stream)
}

func TestSplitsJoinBack(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "one", "one two", strings.Repeat("word ", 50), "ünïcödé ∑ ✓✓✓ 🙂🙂"} {
		pieces := splitText(s, maxTextChunks)
		require.LessOrEqual(t, len(pieces), maxTextChunks)
		require.Equal(t, s, strings.Join(pieces, ""))
		frags := splitBytes(s, 3)
		require.LessOrEqual(t, len(frags), 3)
		require.Equal(t, s, strings.Join(frags, ""))
		for _, f := range frags {
			require.True(t, utf8.ValidString(f), "fragment %q splits a character", f)
		}
	}
}
