package main

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/workflows"
)

// TestLocalReadsFlag: without --local-reads the input leaves local_reads
// absent, so the session's default (on) decides; --local-reads and
// --local-reads=false say so explicitly.
func TestLocalReadsFlag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want *bool
	}{
		{"absent: the session's default", nil, nil},
		{"on", []string{"--local-reads"}, workflows.Flag(true)},
		{"off", []string{"--local-reads=false"}, workflows.Flag(false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("start", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			sf := bindSessionFlags(fs)
			require.NoError(t, fs.Parse(tt.args))
			in, err := sf.input("go")
			require.NoError(t, err)
			require.Equal(t, tt.want, in.LocalReads)
		})
	}
	fs := flag.NewFlagSet("start", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	bindSessionFlags(fs)
	require.ErrorContains(t, fs.Parse([]string{"--local-reads=maybe"}), "want true or false")
}
