package protocol_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
)

func TestStartSteps(t *testing.T) {
	t.Parallel()

	t.Run("ClaimsByPosition", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, worker := setup(t)
		var claims []protocol.Claim
		for i := range 3 {
			id, err := client.CreateWorkflow(ctx, "Two", "User", fmt.Sprint(i), nil)
			require.NoError(t, err)
			history, err := client.StepHistory(ctx, id)
			require.NoError(t, err)
			claims = append(claims, protocol.Claim{ExecutionID: history[0].ID})
		}
		claims[1].Precondition = protocol.PreconditionCancel

		started, err := worker.StartSteps(ctx, claims)
		require.NoError(t, err)
		require.Len(t, started, 3)
		require.Equal(t, claims[0].ExecutionID, started[0].ExecutionID)
		require.Nil(t, started[1], "canceled by its condition")
		require.Equal(t, claims[2].ExecutionID, started[2].ExecutionID)
		require.Equal(t, "a", started[2].StepName)

		again, err := worker.StartSteps(ctx, claims)
		require.NoError(t, err)
		require.Equal(t, []*protocol.Execution{nil, nil, nil}, again, "nothing to run twice")
	})

	t.Run("OneUnknownExecutionFailsTheCall", func(t *testing.T) {
		t.Parallel()
		ctx, _, _, worker := setup(t)
		_, err := worker.StartSteps(ctx, []protocol.Claim{{ExecutionID: 424242}})
		require.True(t, errors.Is(err, goclient.ErrNotFound), "%v", err)
	})
}
