package goclient_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
)

func TestLimits(t *testing.T) {
	t.Parallel()

	t.Run("DefineLimitRefusesBadBounds", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, _ := setup(t)
		for _, params := range []*goclient.DefineLimitParams{
			nil, // neither a concurrency nor a rate
			{Concurrency: 2, By: "tenant"},
			{Concurrency: -1},
			{Rate: 10}, // no per
			{Rate: 10, Per: -time.Second},
		} {
			err := client.DefineLimit(ctx, "api", params)
			require.ErrorIs(t, err, goclient.ErrInvalidArgument, "%+v", params)
		}
		require.ErrorIs(t, client.DefineLimit(ctx, "", &goclient.DefineLimitParams{Concurrency: 1}), goclient.ErrInvalidArgument)
	})

	t.Run("UsagePerLimitAndKey", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, worker := setup(t)
		usage, err := client.LimitUsage(ctx)
		require.NoError(t, err)
		require.Empty(t, usage)

		require.NoError(t, client.DefineLimit(ctx, "payments_api", &goclient.DefineLimitParams{Rate: 100, Per: time.Hour}))
		require.NoError(t, client.DefineLimit(ctx, "payments_api", &goclient.DefineLimitParams{
			Concurrency: 5, Rate: 100, Per: 2400 * time.Hour, By: goclient.LimitByGroup, // (no window ends during the test)
		})) // replaced
		require.NoError(t, worker.DefineWorkflow(ctx, "TenantSync", []byte(`{
			"concurrency": {"by": "group", "limit": 1},
			"steps": [{"name": "charge", "limits": ["payments_api"]}]}`)))

		// acme: one started, one waiting; globex: one started
		var started []int64
		for i, group := range []string{"acme", "acme", "globex"} {
			id, err := client.CreateWorkflow(ctx, "TenantSync", "Account", string(rune('1'+i)), &goclient.CreateWorkflowOpts{Group: group})
			require.NoError(t, err)
			history, err := client.StepHistory(ctx, id)
			require.NoError(t, err)
			execution, err := worker.StartStep(ctx, history[0].ID, protocol.PreconditionNone)
			require.NoError(t, err)
			if execution != nil {
				started = append(started, id)
			}
		}
		require.Len(t, started, 2, "acme's second waits")

		usage, err = client.LimitUsage(ctx)
		require.NoError(t, err)
		type row struct {
			kind                          goclient.LimitKind
			name, key                     string
			inProgress, waiting, inWindow int64
			concurrency, rate             *int
		}
		var rows []row
		for _, u := range usage {
			rows = append(rows, row{u.Kind, u.LimitName, u.Key, u.InProgress, u.Waiting, u.StartsInWindow, u.Concurrency, u.Rate})
			if u.Waiting > 0 {
				require.NotNil(t, u.WaitingSince)
			}
			if u.StartsInWindow > 0 {
				require.NotNil(t, u.WindowEnd)
			}
		}
		one, five, hundred := 1, 5, 100
		require.Equal(t, []row{
			{goclient.LimitKindConcurrency, "TenantSync", "acme", 1, 1, 0, &one, nil},
			{goclient.LimitKindConcurrency, "TenantSync", "globex", 1, 0, 0, &one, nil},
			{goclient.LimitKindNamed, "payments_api", "acme", 1, 0, 1, &five, &hundred},
			{goclient.LimitKindNamed, "payments_api", "globex", 1, 0, 1, &five, &hundred},
		}, rows)
	})

	t.Run("ListWorkflowsShowsAndFiltersTheGroup", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, _ := setup(t)
		var ids []int64
		for i, group := range []string{"acme", "", "acme", "globex"} {
			id, err := client.CreateWorkflow(ctx, "Two", "User", string(rune('1'+i)), &goclient.CreateWorkflowOpts{Group: group})
			require.NoError(t, err)
			ids = append(ids, id)
		}
		list, err := client.ListWorkflows(ctx, nil, 0)
		require.NoError(t, err)
		var groups []string
		for _, w := range list {
			groups = append(groups, fmt.Sprint(w.ID, ":", deref(w.Group)))
		}
		require.Equal(t, []string{
			fmt.Sprint(ids[3], ":globex"), fmt.Sprint(ids[2], ":acme"), fmt.Sprint(ids[1], ":"), fmt.Sprint(ids[0], ":acme"),
		}, groups)

		list, err = client.ListWorkflows(ctx, &goclient.WorkflowFilter{Group: "acme"}, 0)
		require.NoError(t, err)
		require.Len(t, list, 2)
		require.Equal(t, ids[2], list[0].ID)
		require.Equal(t, ids[0], list[1].ID)
		count, err := client.CountWorkflows(ctx, &goclient.WorkflowFilter{Group: "acme", State: goclient.StateReady})
		require.NoError(t, err)
		require.Equal(t, &goclient.FilterCount{Workflows: 2, NewestID: ids[2]}, count)
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
