package session

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestShouldUpgrade(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		runTurns      int
		targetChanged bool
		want          bool
	}{
		{"current build unchanged", 3, false, false},
		{"changed after a turn", 1, true, true},
		{"changed, but no turn yet this run", 0, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, ShouldUpgrade(tt.runTurns, tt.targetChanged))
		})
	}
}
