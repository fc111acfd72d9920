package goclient_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
)

func TestRepair(t *testing.T) {
	t.Parallel()

	t.Run("RetryWorkflowKeepsLineageAndTheLogSaysWho", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, _ := setup(t)
		id, err := client.CreateWorkflow(ctx, "Two", "User", "1", nil)
		require.NoError(t, err)
		_, err = client.RetryWorkflow(ctx, id, "")
		require.ErrorIs(t, err, goclient.ErrIllegalTransition, "a ready workflow")

		_, err = client.PauseWorkflow(ctx, id)
		require.NoError(t, err)
		_, err = client.RetryWorkflow(ctx, id, "nope")
		require.ErrorIs(t, err, goclient.ErrInvalidArgument)
		retry, err := client.RetryWorkflow(ctx, id, "b")
		require.NoError(t, err)

		workflow, err := client.GetWorkflow(ctx, retry)
		require.NoError(t, err)
		require.Equal(t, &id, workflow.RetriedFrom)
		require.Equal(t, "b", *workflow.NextStepName)
		retries, err := client.Retries(ctx, id)
		require.NoError(t, err)
		require.Equal(t, []int64{retry}, retries)
		original, err := client.GetWorkflow(ctx, id)
		require.NoError(t, err)
		require.Equal(t, goclient.StateCanceled, original.State)

		actions, err := client.ActionLog(ctx, &goclient.ActionLogParams{WorkflowID: id})
		require.NoError(t, err)
		require.Len(t, actions, 2)
		require.Equal(t, "retry_workflow", actions[0].Verb, "newest first")
		require.Equal(t, "pause_workflow", actions[1].Verb)
		require.Equal(t, string(dbtest.Operator), actions[0].PerformedBy)
		require.JSONEq(t, `{"from_step": "b"}`, string(actions[0].Arguments))
	})

	t.Run("IdempotencyKeyReturnsTheFirstWorkflow", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, _ := setup(t)
		opts := &goclient.CreateWorkflowOpts{IdempotencyKey: "order-1"}
		first, err := client.CreateWorkflow(ctx, "Two", "User", "1", opts)
		require.NoError(t, err)
		again, err := client.CreateWorkflow(ctx, "Two", "User", "1", opts)
		require.NoError(t, err, "not a duplicate: the same request")
		require.Equal(t, first, again)
	})

	t.Run("BulkWorkflowsByFilter", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, _ := setup(t)
		var ids []int64
		for _, hero := range []string{"1", "2", "3"} {
			id, err := client.CreateWorkflow(ctx, "Two", "User", hero, &goclient.CreateWorkflowOpts{Group: "acme"})
			require.NoError(t, err)
			ids = append(ids, id)
		}
		_, err := client.PauseWorkflow(ctx, ids[1])
		require.NoError(t, err)

		result, err := client.BulkWorkflows(ctx, goclient.BulkPause, &goclient.WorkflowFilter{Group: "acme"}, 2)
		require.NoError(t, err)
		require.Equal(t, 2, result.Matched)
		require.Equal(t, 1, result.Acted)
		require.Len(t, result.Refused, 1)
		require.Equal(t, ids[1], result.Refused[0].WorkflowID)
		require.Equal(t, "55000", result.Refused[0].Code)
		require.True(t, result.More)

		result, err = client.BulkWorkflows(ctx, goclient.BulkPause, &goclient.WorkflowFilter{Group: "acme", AfterID: *result.LastID}, 2)
		require.NoError(t, err)
		require.Equal(t, 1, result.Acted)
		require.False(t, result.More)

		result, err = client.BulkWorkflows(ctx, goclient.BulkRetry, &goclient.WorkflowFilter{State: goclient.StatePaused}, 0)
		require.NoError(t, err)
		require.Equal(t, 3, result.Acted)
		require.Len(t, result.Retries, 3)

		_, err = client.BulkWorkflows(ctx, "explode", nil, 0)
		require.ErrorIs(t, err, goclient.ErrInvalidArgument)

		actions, err := client.ActionLog(ctx, nil)
		require.NoError(t, err)
		// the call's row comes before its acts (its id is drawn first)
		require.Equal(t, "retry_workflow", actions[0].Verb)
		require.Equal(t, &result.ActionID, actions[0].BulkActionID)
		require.Equal(t, "bulk_workflows", actions[3].Verb)
		require.Equal(t, result.ActionID, actions[3].ActionID)
	})
}

// ActionLog filters by workflow, verb, operator (the login role or the
// actor it named), time, and pages by id (issue 47).
func TestActionLogFilters(t *testing.T) {
	t.Parallel()
	ctx, pool, client, _ := setup(t)
	var ids []int64
	for _, hero := range []string{"1", "2", "3"} {
		id, err := client.CreateWorkflow(ctx, "Two", "User", hero, nil)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	_, err := client.PauseWorkflow(ctx, ids[0])
	require.NoError(t, err)
	_, err = client.CancelWorkflow(ctx, ids[1])
	require.NoError(t, err)
	var between time.Time
	require.NoError(t, pool.QueryRow(ctx, "select clock_timestamp()").Scan(&between))
	// an action whose caller named the person behind the role
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "select set_config('geneva.actor', 'ann', true)")
	require.NoError(t, err)
	_, err = goclient.New(tx).PauseWorkflow(ctx, ids[2])
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))

	verbs := func(params *goclient.ActionLogParams) []string {
		t.Helper()
		actions, err := client.ActionLog(ctx, params)
		require.NoError(t, err)
		var list []string
		for _, a := range actions {
			if a.WorkflowID != nil { // (not setup's define_workflow)
				list = append(list, fmt.Sprintf("%s %d", a.Verb, *a.WorkflowID))
			}
		}
		return list
	}
	all := []string{fmt.Sprint("pause_workflow ", ids[2]), fmt.Sprint("cancel_workflow ", ids[1]), fmt.Sprint("pause_workflow ", ids[0])}
	require.Equal(t, all, verbs(nil), "newest first")
	require.Equal(t, all[1:2], verbs(&goclient.ActionLogParams{WorkflowID: ids[1]}))
	require.Equal(t, []string{all[0], all[2]}, verbs(&goclient.ActionLogParams{Verb: "pause_workflow"}))
	require.Equal(t, all[:1], verbs(&goclient.ActionLogParams{By: "ann"}), "the actor")
	require.Equal(t, all[1:], verbs(&goclient.ActionLogParams{By: string(dbtest.Operator)}), "the login role")
	require.Empty(t, verbs(&goclient.ActionLogParams{By: "nobody"}))
	require.Equal(t, all[:1], verbs(&goclient.ActionLogParams{After: &between}))
	require.Equal(t, all[1:], verbs(&goclient.ActionLogParams{Before: &between}))
	require.Equal(t, all[2:], verbs(&goclient.ActionLogParams{Verb: "pause_workflow", Before: &between}))

	// a page at a time
	first, err := client.ActionLog(ctx, &goclient.ActionLogParams{Limit: 2})
	require.NoError(t, err)
	require.Len(t, first, 2)
	require.Equal(t, all[2:], verbs(&goclient.ActionLogParams{Limit: 2, BeforeID: first[1].ActionID}))
}
