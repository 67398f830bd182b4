package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/activities"
)

// --freeform-tools (LONGRUN_FREEFORM_TOOLS) is auto by default, takes on
// and off, the flag over the variable, and refuses anything else.
func TestFreeformToolsSetting(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags(nil, env(nil))
	require.NoError(t, err)
	require.Equal(t, activities.FreeformAuto, m.Model.FreeformTools)
	m, err = ParseFlags(nil, env(map[string]string{"LONGRUN_FREEFORM_TOOLS": "off"}))
	require.NoError(t, err)
	require.Equal(t, activities.FreeformOff, m.Model.FreeformTools)
	m, err = ParseFlags([]string{"--freeform-tools", "on"}, env(map[string]string{"LONGRUN_FREEFORM_TOOLS": "off"}))
	require.NoError(t, err)
	require.Equal(t, activities.FreeformOn, m.Model.FreeformTools)
	_, err = ParseFlags([]string{"--freeform-tools", "maybe"}, env(nil))
	require.ErrorContains(t, err, `--freeform-tools "maybe": want auto, on or off`)
}
