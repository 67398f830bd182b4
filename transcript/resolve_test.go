package transcript

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
)

func TestPreviewCutsAtACharacter(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("é", 1000) // 2 bytes each: byte 1024 starts one
	p := Preview(strings.Repeat("a", 1023) + s)
	require.True(t, utf8.ValidString(p))
	require.True(t, strings.HasPrefix(p, strings.Repeat("a", 1023)+"\n[… preview"), "a cut inside é drops the whole é")
	require.Contains(t, p, "is 3023 bytes")
	short := Preview("abc")
	require.True(t, strings.HasPrefix(short, "abc\n[… preview"))
	require.True(t, strings.HasSuffix(short, "kept in the transcript store]"), "a last line already shown is not repeated")
}

// TestPreviewKeepsTheLastLine: a long command output's preview still
// ends with how the command ended; a long last line is not kept.
func TestPreviewKeepsTheLastLine(t *testing.T) {
	t.Parallel()
	out := strings.Repeat("ok line\n", 500) + "[exit code 2, 1.5s]\n"
	p := Preview(out)
	require.True(t, strings.HasSuffix(p, "kept in the transcript store]\n[exit code 2, 1.5s]"), p[len(p)-120:])
	long := Preview(strings.Repeat("a\n", 600) + strings.Repeat("b", 300))
	require.True(t, strings.HasSuffix(long, "kept in the transcript store]"))
}

func TestResolve(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := NewDir(t.TempDir())
	require.NoError(t, err)
	big := strings.Repeat("x", 5000)
	ref, preview, err := Offload(ctx, d, big)
	require.NoError(t, err)
	res := conversation.ToolResult{CallID: "c1", Name: "read", Content: preview, ContentRef: ref, ContentBytes: len(big), Reason: conversation.ReasonRan}
	msgs := []conversation.Message{{Role: conversation.RoleUser, Content: "hi"}, conversation.ToolMessage(res)}
	require.True(t, HasOffloaded(msgs))

	out, err := Resolve(ctx, d, msgs)
	require.NoError(t, err)
	require.Equal(t, big, out[1].Content)
	require.Equal(t, big, out[1].Result.Content)
	require.Empty(t, out[1].Result.ContentRef)
	require.False(t, HasOffloaded(out))
	require.Equal(t, preview, msgs[1].Result.Content, "the input is not changed")
	require.Equal(t, ref, msgs[1].Result.ContentRef)

	plain := []conversation.Message{{Role: conversation.RoleUser, Content: "hi"}}
	same, err := Resolve(ctx, d, plain)
	require.NoError(t, err)
	require.Equal(t, plain, same)

	msgs[1].Result = &conversation.ToolResult{CallID: "c2", ContentRef: Ref([]byte("never stored"))}
	_, err = Resolve(ctx, d, msgs)
	require.ErrorContains(t, err, "result of tool call c2")
}
