package activities

import (
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/activities/contract"
)

// TestContractNamesAreMethods: the worker registers *Activities as a
// struct, so each activity's registered name is its method's name; the
// workflow schedules by the names in package contract. Every contract name
// must be a method, and every exported method a contract name, or a
// session would schedule an activity no worker has (or a new activity
// would have no name the workflow can use).
func TestContractNamesAreMethods(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeOf((*Activities)(nil))
	var methods []string
	for i := range typ.NumMethod() {
		methods = append(methods, typ.Method(i).Name)
	}
	names := contract.Names()
	slices.Sort(names)
	require.Equal(t, names, methods, "contract.Names() and the exported methods of *Activities")
}
