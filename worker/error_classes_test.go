package worker_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/worker"
)

// wrappingError is an application's own wrapper: a class a person names.
type wrappingError struct{ err error }

func (e *wrappingError) Error() string { return "charge: " + e.err.Error() }
func (e *wrappingError) Unwrap() error { return e.err }

func TestErrorClassesRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opErr := func() error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}

	for _, tt := range []struct {
		name      string
		err       error
		class     string
		classes   []string
		anyOfThem string
	}{
		{
			name:    "LooksThroughFmtWrap",
			err:     fmt.Errorf("charging payment 1006: %w", opErr()),
			class:   "*net.OpError",
			classes: []string{"*net.OpError", "*fmt.wrapError", "*os.SyscallError", "syscall.Errno"},
		},
		{
			name:    "LooksThroughSeveralWrapsAndJoin",
			err:     fmt.Errorf("outer: %w", errors.Join(fmt.Errorf("a: %w, %w", opErr(), errConnectionFailed), errors.New("b"))),
			class:   "*net.OpError",
			classes: []string{"*net.OpError", "*fmt.wrapError", "*errors.joinError", "*fmt.wrapErrors", "*os.SyscallError", "syscall.Errno", "*errors.errorString"},
		},
		{
			name:    "KeepsAnApplicationsWrapper",
			err:     fmt.Errorf("step: %w", &wrappingError{err: opErr()}),
			class:   "*worker_test.wrappingError",
			classes: []string{"*worker_test.wrappingError", "*fmt.wrapError", "*net.OpError", "*os.SyscallError", "syscall.Errno"},
		},
		{
			name:    "PlainError",
			err:     errors.New("boom"),
			class:   "*errors.errorString",
			classes: []string{"*errors.errorString"},
		},
		{
			name:    "ErrorfWithoutWrap",
			err:     fmt.Errorf("nothing wrapped"),
			class:   "*errors.errorString",
			classes: []string{"*errors.errorString"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wf := worker.NewWorkflow("Charging", nil).Step("charge", always(tt.err), nil)
			h, _ := policyHarness(t, wf)
			id := h.Create(ctx, "Charging", "Payment", "1006")

			execution := h.PerformNextStep(ctx, id)

			require.Equal(t, goclient.ExecutionFailed, execution.State)
			require.Equal(t, tt.class, *execution.ErrorClassName)
			require.Equal(t, tt.classes, execution.ErrorClasses)
			paused, err := h.Client().PausedWorkflows(ctx, &goclient.PausedWorkflowsParams{WorkflowType: "Charging"})
			require.NoError(t, err)
			require.Len(t, paused, 1)
			require.Equal(t, tt.class, *paused[0].LastErrorClass)
			require.Equal(t, tt.classes, paused[0].ErrorClasses)
			h.AssertWorkflowState(ctx, id, goclient.StatePaused)
		})
	}
}
