package callref

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestName(t *testing.T) {
	t.Parallel()
	require.Equal(t, "c1", Name(1))
	require.Equal(t, "c17", Name(17))
}

func TestDigest(t *testing.T) {
	t.Parallel()
	d := Digest("shell", `{"command":"go test ./..."}`)
	require.Len(t, d, 64)
	require.Equal(t, d, Digest("shell", `{"command":"go test ./..."}`), "a digest is a pure function")
	require.NotEqual(t, d, Digest("shell", `{"command":"touch x"}`))
	require.NotEqual(t, d, Digest("shel", `l{"command":"go test ./..."}`), "the name and the arguments are kept apart")
	require.NotEqual(t, d, Digest("shell", `{"command": "go test ./..."}`), "the raw text counts, not its meaning")
	require.Len(t, Short(d), ShortLen)
	require.True(t, strings.HasPrefix(d, Short(d)))
}

func TestDigestMatches(t *testing.T) {
	t.Parallel()
	d := Digest("write", `{"path":"a"}`)
	for _, tc := range []struct {
		name string
		sent string
		want bool
	}{
		{"full", d, true},
		{"short, as surfaces show it", Short(d), true},
		{"upper case", strings.ToUpper(d), true},
		{"spaces around", " " + Short(d) + "\n", true},
		{"too short to mean anything", d[:8], false},
		{"another call's", Digest("write", `{"path":"b"}`), false},
		{"longer than a digest", d + "00", false},
		{"empty", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, DigestMatches(tc.sent, d))
		})
	}
}

func TestKey(t *testing.T) {
	t.Parallel()
	require.Equal(t, "call_abc", Key("call_abc"))
	long := strings.Repeat("x", 10000)
	require.Len(t, Key(long), 33)
	require.Equal(t, Key(long), Key(long))
	require.NotEqual(t, Key(long), Key(long+"y"))
}

func TestMatch(t *testing.T) {
	t.Parallel()
	benign, hostile := Digest("shell", `{"command":"go test ./..."}`), Digest("shell", `{"command":"touch pwned"}`)
	calls := []Call{
		{ID: "c1", ModelKey: "dup"},                    // an earlier turn's call (the record)
		{ID: "c2", ModelKey: "call_a", Digest: benign}, // the batch in progress
		{ID: "c3", ModelKey: "dup", Digest: hostile},   // the model reused "dup"
		{ID: "c4", ModelKey: "twice", Digest: benign},  // used twice in one reply
		{ID: "c5", ModelKey: "twice", Digest: hostile}, //
		{ID: "c6", ModelKey: "c2", Digest: hostile},    // a model id that is another call's session id
		{ID: "c7", ModelKey: Key(strings.Repeat("z", 99)), Digest: benign},
	}
	for _, tc := range []struct {
		name    string
		req     Request
		want    int
		wantErr string
	}{
		{name: "session id", req: Request{ID: "c2"}, want: 1},
		{name: "session id with its model id", req: Request{ID: "c2", ModelID: "call_a"}, want: 1},
		{name: "session id with the digest", req: Request{ID: "c3", Digest: hostile}, want: 2},
		{name: "session id with a short digest", req: Request{ID: "c3", Digest: Short(hostile)}, want: 2},
		{name: "session id wins over a model's reuse of it", req: Request{ID: "c2", Digest: benign}, want: 1},
		{name: "session id of an earlier call", req: Request{ID: "c1"}, want: 0},
		{name: "unique model id", req: Request{ModelID: "call_a"}, want: 1},
		{name: "long model id", req: Request{ModelID: strings.Repeat("z", 99)}, want: 6},
		{name: "model id reused across turns", req: Request{ModelID: "dup"}, want: -1, wantErr: `call id "dup" names 2 calls (c1, c3)`},
		{name: "model id reused in one reply", req: Request{ModelID: "twice", Digest: benign}, want: -1, wantErr: `names 2 calls (c4, c5)`},
		{name: "model id that is another call's session id", req: Request{ModelID: "c2"}, want: -1, wantErr: `names 2 calls (c2, c6)`},
		{name: "session id sent as a model id", req: Request{ModelID: "c4"}, want: 3},
		{name: "session id and another call's model id", req: Request{ID: "c3", ModelID: "call_a"}, want: -1, wantErr: "is not the call the model named"},
		{name: "digest of other arguments", req: Request{ID: "c3", Digest: benign}, want: -1, wantErr: "c3 has other arguments than the ones you saw"},
		{name: "digest of other arguments by model id", req: Request{ModelID: "call_a", Digest: hostile}, want: -1, wantErr: "c2 has other arguments"},
		{name: "a digest that is no digest", req: Request{ID: "c2", Digest: "yes"}, want: -1, wantErr: "other arguments"},
		{name: "unknown session id", req: Request{ID: "c9"}, want: -1, wantErr: `call "c9": no such call`},
		{name: "unknown model id", req: Request{ModelID: "nope"}, want: -1, wantErr: `call id "nope": no such call`},
		{name: "nothing", req: Request{Digest: benign}, want: -1, wantErr: "names no call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Match(calls, tc.req)
			require.Equal(t, tc.want, got)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
	_, err := Match(calls, Request{ID: "c3", Digest: benign})
	var de *DigestError
	require.True(t, errors.As(err, &de))
	require.Equal(t, "c3", de.ID)
	_, err = Match(calls, Request{ID: "c9"})
	require.ErrorIs(t, err, ErrUnknown)
}

func TestRemember(t *testing.T) {
	t.Parallel()
	var r []Record
	for i := 1; i <= MaxRecords+5; i++ {
		r = Remember(r, Record{ID: Name(i), Model: fmt.Sprint(i)})
	}
	require.Len(t, r, MaxRecords)
	require.Equal(t, "c6", r[0].ID)
	require.Equal(t, Name(MaxRecords+5), r[len(r)-1].ID)
}
