package goclient_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
)

// WorkflowBlockers reads geneva.workflow_blockers, by workflow or by reason.
func TestWorkflowBlockers(t *testing.T) {
	t.Parallel()
	ctx, _, client, worker := setup(t)
	require.NoError(t, worker.DefineWorkflow(ctx, "Sync", []byte(`{"concurrency": {"by": "type", "limit": 1}, "steps": [{"name": "a"}]}`)))
	require.NoError(t, worker.DefineWorkflow(ctx, "Later", []byte(`{"steps": [{"name": "a", "wait": "1 hour"}]}`)))
	var sync []int64
	for _, hero := range []string{"1", "2"} {
		id, err := client.CreateWorkflow(ctx, "Sync", "User", hero, nil)
		require.NoError(t, err)
		history, err := client.StepHistory(ctx, id)
		require.NoError(t, err)
		_, err = worker.StartStep(ctx, history[0].ID, protocol.PreconditionNone)
		require.NoError(t, err)
		sync = append(sync, id)
	}
	later, err := client.CreateWorkflow(ctx, "Later", "User", "1", nil)
	require.NoError(t, err)

	held, err := client.WorkflowBlockers(ctx, &goclient.WorkflowBlockersParams{WorkflowID: sync[1]})
	require.NoError(t, err)
	require.Len(t, held, 1)
	require.Equal(t, goclient.BlockerConcurrency, held[0].Reason)
	require.Equal(t, goclient.LimitKindConcurrency, *held[0].LimitKind)
	require.Equal(t, []any{int64(1), 1, int64(1), int64(1)}, []any{*held[0].InProgress, *held[0].Concurrency, *held[0].Position, *held[0].Waiting})

	waits, err := client.WorkflowBlockers(ctx, &goclient.WorkflowBlockersParams{Reason: goclient.BlockerWait})
	require.NoError(t, err)
	require.Len(t, waits, 1)
	require.Equal(t, later, waits[0].WorkflowID)
	require.NotNil(t, waits[0].HeldUntil)

	all, err := client.WorkflowBlockers(ctx, nil)
	require.NoError(t, err)
	require.Len(t, all, 2, "the waiter and the wait (the running one: none)")
	limited, err := client.WorkflowBlockers(ctx, &goclient.WorkflowBlockersParams{Limit: 1})
	require.NoError(t, err)
	require.Equal(t, held[0].ExecutionID, limited[0].ExecutionID, "the oldest execution first")
}
