package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/activities"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// A model reply too large to record (3 MB; the server takes 2 MB) fails
// once with ModelReplyTooLarge: exactly one request reaches the model, not
// ten paid retries ending in an undocumented payload-size error (issue 15,
// finding 10).
func TestModelReplyTooLargeFailsOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Text(strings.Repeat("x", 3<<20)), sm.Text("must not be asked for"))
	id := e.start(workflows.SessionInput{Prompt: "write me a novel"})
	r := result(t, id)
	require.Len(t, e.model.Requests(), 1)
	require.Equal(t, workflows.ResultFailed, r.Status)
	require.Contains(t, r.Error, activities.ErrTypeModelReplyTooLarge)
	st := query[workflows.Status](t, id, workflows.QueryStatus)
	require.Equal(t, activities.ErrTypeModelReplyTooLarge, st.LastErrorType)
	require.Contains(t, st.LastError, "not retried")
	e.checkSession(id)
}
