package worker

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every option of WorkflowOpts is one an extension may set over its base's
// (Workflow.Extend): an option added without its line in override fails
// here.
func TestExtendOverridesEveryOption(t *testing.T) {
	optsType := reflect.TypeFor[WorkflowOpts]()
	for i := range optsType.NumField() {
		field := optsType.Field(i)
		t.Run(field.Name, func(t *testing.T) {
			var with WorkflowOpts
			value := reflect.ValueOf(&with).Elem().Field(i)
			switch field.Type.Kind() {
			case reflect.String:
				value.SetString("x")
			case reflect.Int, reflect.Int64:
				value.SetInt(2)
			case reflect.Bool:
				value.SetBool(true)
			case reflect.Pointer:
				value.Set(reflect.New(field.Type.Elem()))
			case reflect.Func:
				value.Set(reflect.MakeFunc(field.Type, func([]reflect.Value) []reflect.Value { return nil }))
			case reflect.Slice:
				value.Set(reflect.MakeSlice(field.Type, 1, 1))
			default:
				t.Fatalf("no test value for a %s", field.Type)
			}
			base := NewWorkflow("Base", nil)
			extended := base.Extend("Extended", &with)
			require.False(t, reflect.ValueOf(extended.opts).Field(i).IsZero(), "Extend does not set %s", field.Name)
			require.True(t, reflect.ValueOf(base.opts).Field(i).IsZero(), "Extend changed the base's %s", field.Name)
		})
	}
}
