package eventlog

import (
	"encoding/json"
	"errors"
	"go/build"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// logOf is a log that had n events appended, each with text of size bytes.
func logOf(n, size int) *Log {
	l := &Log{}
	for i := 0; i < n; i++ {
		l.Append(Event{Kind: KindText, Text: strings.Repeat("x", size)})
	}
	return l
}

func seqs(evs []Event) []int64 {
	out := []int64{}
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return out
}

func TestAfter(t *testing.T) {
	t.Parallel()
	// A log whose oldest events were dropped: Seq 1..5 gone, 6..10 kept.
	trimmed := &Log{Next: 11}
	for s := int64(6); s <= 10; s++ {
		trimmed.Events = append(trimmed.Events, Event{Seq: s, Kind: KindPhase})
	}
	cases := []struct {
		name   string
		log    *Log
		req    Request
		want   []int64
		next   int64
		first  int64
		missed int64
		more   bool
		err    error
	}{
		{name: "empty log from the start", log: &Log{}, req: Request{}, want: []int64{}, next: 1, first: 1},
		{name: "zero log is a valid log", log: &Log{}, req: Request{After: 0}, want: []int64{}, next: 1, first: 1},
		{name: "empty log, after 1 is the future", log: &Log{}, req: Request{After: 1}, err: ErrFuture, next: 1, first: 1},
		{name: "all", log: logOf(3, 1), req: Request{}, want: []int64{1, 2, 3}, next: 4, first: 1},
		{name: "after 2", log: logOf(3, 1), req: Request{After: 2}, want: []int64{3}, next: 4, first: 1},
		{name: "caught up", log: logOf(3, 1), req: Request{After: 3}, want: []int64{}, next: 4, first: 1},
		{name: "far future", log: logOf(3, 1), req: Request{After: 1 << 40}, err: ErrFuture, next: 4, first: 1},
		{name: "negative", log: logOf(3, 1), req: Request{After: -1}, err: ErrNegative, next: 4, first: 1},
		{name: "limit", log: logOf(5, 1), req: Request{After: 1, Limit: 2}, want: []int64{2, 3}, next: 6, first: 1, more: true},
		{name: "limit exactly what there is", log: logOf(3, 1), req: Request{Limit: 3}, want: []int64{1, 2, 3}, next: 4, first: 1},
		{name: "behind the kept tail says how many it missed", log: trimmed, req: Request{After: 2}, want: []int64{6, 7, 8, 9, 10}, next: 11, first: 6, missed: 3},
		{name: "from the start of a trimmed log", log: trimmed, req: Request{}, want: []int64{6, 7, 8, 9, 10}, next: 11, first: 6, missed: 5},
		{name: "just at the kept tail misses nothing", log: trimmed, req: Request{After: 5}, want: []int64{6, 7, 8, 9, 10}, next: 11, first: 6},
		{name: "tail", log: logOf(5, 1), req: Request{Tail: 2}, want: []int64{4, 5}, next: 6, first: 1},
		{name: "tail after", log: logOf(5, 1), req: Request{After: 4, Tail: 2}, want: []int64{5}, next: 6, first: 1},
		{name: "tail of a trimmed log is not missed", log: trimmed, req: Request{After: 2, Tail: 2}, want: []int64{9, 10}, next: 11, first: 6},
		{name: "tail longer than the log", log: trimmed, req: Request{After: 2, Tail: 20}, want: []int64{6, 7, 8, 9, 10}, next: 11, first: 6, missed: 3},
		{name: "negative tail", log: logOf(3, 1), req: Request{Tail: -1}, err: ErrNegative, next: 4, first: 1},
		{name: "negative limit", log: logOf(3, 1), req: Request{Limit: -1}, err: ErrNegative, next: 4, first: 1},
		{name: "carried log with no events", log: &Log{Next: 42}, req: Request{After: 41}, want: []int64{}, next: 42, first: 42},
		{name: "carried log with no events, from an old seq", log: &Log{Next: 42}, req: Request{After: 30}, want: []int64{}, next: 42, first: 42, missed: 11},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := tc.log.After(tc.req, 2)
			require.Equal(t, tc.next, p.Next)
			require.Equal(t, tc.first, p.First)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				require.Contains(t, err.Error(), "ask after", "the error says what may be asked")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, seqs(p.Events))
			require.Equal(t, tc.missed, p.Missed)
			require.Equal(t, tc.more, p.More)
			require.Equal(t, 2, p.Run)
		})
	}
}

func TestNegativeSaysWhatToAsk(t *testing.T) {
	t.Parallel()
	_, err := logOf(2, 1).After(Request{After: -5}, 0)
	require.ErrorIs(t, err, ErrNegative)
	require.Contains(t, err.Error(), "ask after 0 to read from the first event kept")
}

func TestAppendBounds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		n, size   int
		wantCount int
		wantFirst int64
	}{
		{name: "small", n: 10, size: 10, wantCount: 10, wantFirst: 1},
		{name: "count bound", n: MaxEvents + 50, size: 1, wantCount: MaxEvents, wantFirst: 51},
		// Each event holds MaxText bytes of text (the rest cut): the
		// byte bound keeps fewer than MaxEvents of them.
		{name: "byte bound", n: 400, size: 1 << 20, wantCount: MaxBytes / (MaxText + 64 + len(KindText)), wantFirst: 400 - int64(MaxBytes/(MaxText+64+len(KindText))) + 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := logOf(tc.n, tc.size)
			require.Len(t, l.Events, tc.wantCount)
			require.Equal(t, tc.wantFirst, l.Events[0].Seq)
			require.Equal(t, int64(tc.n+1), l.Next)
			total := 0
			for _, e := range l.Events {
				require.LessOrEqual(t, len(e.Text), MaxText)
				total += weight(e)
			}
			require.LessOrEqual(t, total, MaxBytes)
		})
	}
}

func TestAppendCutsHugeText(t *testing.T) {
	t.Parallel()
	l := &Log{}
	// A megabyte reply of three-byte characters: cut at a character
	// boundary, saying how much is left out.
	huge := strings.Repeat("€", 1<<20/3)
	e := l.Append(Event{Kind: KindText, Text: huge})
	require.LessOrEqual(t, len(e.Text), MaxText)
	require.True(t, strings.HasPrefix(huge, e.Text))
	require.Equal(t, len(huge), len(e.Text)+e.Cut)
	require.Equal(t, 0, len(e.Text)%3, "cut on a character boundary")
}

func TestCarriedKeepsSeqAndTail(t *testing.T) {
	t.Parallel()
	l := logOf(CarryEvents+30, 10)
	c := l.Carried()
	require.Equal(t, l.Next, c.Next)
	require.Len(t, c.Events, CarryEvents)
	require.Equal(t, l.Events[len(l.Events)-1], c.Events[len(c.Events)-1])
	require.Len(t, l.Events, CarryEvents+30, "carrying does not trim the live log")

	big := logOf(100, MaxText)
	cb := big.Carried()
	total := 0
	for _, e := range cb.Events {
		total += weight(e)
	}
	require.LessOrEqual(t, total, CarryBytes)
	require.Less(t, len(cb.Events), 100)

	// The carried log, through JSON as continue-as-new writes it, goes on
	// numbering where the old run stopped, and a reader behind its tail
	// is told how many it missed.
	b, err := json.Marshal(cb)
	require.NoError(t, err)
	var next Log
	require.NoError(t, json.Unmarshal(b, &next))
	e := next.Append(Event{Kind: KindPhase, Phase: "running"})
	require.Equal(t, int64(101), e.Seq)
	p, err := next.After(Request{After: 10}, 1)
	require.NoError(t, err)
	require.Equal(t, cb.Events[0].Seq-11, p.Missed)
	require.Equal(t, int64(101), p.Events[len(p.Events)-1].Seq)
}

func TestAppendNumbersFromOne(t *testing.T) {
	t.Parallel()
	var l Log
	require.Equal(t, int64(1), l.Append(Event{Kind: KindPhase}).Seq)
	require.Equal(t, int64(2), l.Append(Event{Kind: KindPhase}).Seq)
}

func FuzzAfter(f *testing.F) {
	f.Add(int64(0), 0, 5)
	f.Add(int64(-1), 3, 0)
	f.Add(int64(1<<62), 1, 1)
	f.Fuzz(func(t *testing.T, after int64, limit, n int) {
		l := logOf(n%(MaxEvents+20), 1)
		p, err := l.After(Request{After: after, Limit: limit}, 0)
		switch {
		case errors.Is(err, ErrNegative):
			require.True(t, after < 0 || limit < 0, "refused as negative: after %d, limit %d", after, limit)
			return
		case errors.Is(err, ErrFuture):
			require.GreaterOrEqual(t, after, max(l.Next, 1), "refused as in the future")
			return
		}
		require.NoError(t, err)
		require.LessOrEqual(t, len(p.Events), MaxPage)
		for _, e := range p.Events {
			require.Greater(t, e.Seq, after)
		}
	})
}

// TestNoTemporalImports: the log is pure, so the workflow cannot issue a
// command through it and it is tested as plain functions.
func TestNoTemporalImports(t *testing.T) {
	t.Parallel()
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	for _, imp := range slices.Concat(pkg.Imports, pkg.TestImports) {
		require.False(t, strings.HasPrefix(imp, "go.temporal.io/"), "eventlog imports %s", imp)
	}
}

func TestLastPhase(t *testing.T) {
	t.Parallel()
	var l Log
	require.Equal(t, "", l.LastPhase())
	l.Append(Event{Kind: KindPhase, Phase: "running"})
	l.Append(Event{Kind: KindPhase, Phase: "waiting-approval"})
	l.Append(Event{Kind: KindCallDecided})
	require.Equal(t, "waiting-approval", l.LastPhase())
}
