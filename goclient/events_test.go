package goclient_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/internal/protocol"
)

// approvalDefinition is a workflow whose first step awaits the event
// "approved" for two days (then the workflow is canceled), and whose second
// pays.
const approvalDefinition = `{"steps": [
	{"name": "approve", "await": {"event": "approved", "timeout": "2 days", "on_timeout": "cancel"}},
	{"name": "pay"}]}`

// setupEvents is setup with the workflow type Approval defined too.
func setupEvents(t *testing.T) (context.Context, *pgxpool.Pool, *goclient.Client, *protocol.Client) {
	t.Helper()
	ctx, pool, client, worker := setup(t)
	require.NoError(t, worker.DefineWorkflow(ctx, "Approval", []byte(approvalDefinition)))
	return ctx, pool, client, worker
}

// storedEvent is a row of geneva.events, as the owner reads it.
type storedEvent struct {
	Name       string
	Payload    *string
	ConsumedBy *int64
}

func storedEvents(t *testing.T, pool *pgxpool.Pool, workflowID int64) []storedEvent {
	t.Helper()
	rows, err := pool.Query(context.Background(),
		"select name, payload::text, consumed_by from geneva.events where workflow_id = $1 order by id", workflowID)
	require.NoError(t, err)
	defer rows.Close()
	var events []storedEvent
	for rows.Next() {
		var e storedEvent
		require.NoError(t, rows.Scan(&e.Name, &e.Payload, &e.ConsumedBy))
		events = append(events, e)
	}
	require.NoError(t, rows.Err())
	return events
}

func TestEvents(t *testing.T) {
	t.Parallel()

	t.Run("SendEventWakesTheAwaitingStep", func(t *testing.T) {
		t.Parallel()
		ctx, pool, client, worker := setupEvents(t)
		id, err := client.CreateWorkflow(ctx, "Approval", "Expense", "1", nil)
		require.NoError(t, err)

		awaiting, err := client.AwaitingEvents(ctx, nil)
		require.NoError(t, err)
		require.Len(t, awaiting, 1)
		a := awaiting[0]
		require.Equal(t, id, a.WorkflowID)
		require.Equal(t, "Approval", a.WorkflowType)
		require.Equal(t, "Expense", a.HeroType)
		require.Equal(t, "1", a.HeroID)
		require.Equal(t, goclient.StateReady, a.WorkflowState)
		require.Equal(t, "approve", a.StepName)
		require.Equal(t, "approved", a.Event)
		require.Equal(t, "cancel", a.OnTimeout)
		require.WithinDuration(t, time.Now(), a.WaitingSince, time.Minute)
		require.NotNil(t, a.TimeoutAt)
		require.WithinDuration(t, a.WaitingSince.Add(48*time.Hour), *a.TimeoutAt, time.Second)

		sent, err := client.SendEvent(ctx, id, "approved", map[string]any{"by": "ann", "amount": 12})
		require.NoError(t, err)
		require.True(t, sent)

		awaiting, err = client.AwaitingEvents(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, awaiting, "the step has its event")
		history, err := client.StepHistory(ctx, id)
		require.NoError(t, err)
		require.Len(t, history, 1)
		require.Equal(t, a.ExecutionID, history[0].ID)
		require.WithinDuration(t, time.Now(), history[0].ScheduledFor, time.Minute, "due now, not in two days")
		require.Equal(t, []storedEvent{{Name: "approved", Payload: new(`{"by": "ann", "amount": 12}`)}}, storedEvents(t, pool, id))

		// the step that starts consumes it, and gets its payload
		started, err := worker.StartStep(ctx, a.ExecutionID, protocol.PreconditionNone)
		require.NoError(t, err)
		require.NotNil(t, started)
		require.Equal(t, []storedEvent{{Name: "approved", Payload: new(`{"by": "ann", "amount": 12}`), ConsumedBy: &a.ExecutionID}},
			storedEvents(t, pool, id))
		stats, err := client.EventStats(ctx)
		require.NoError(t, err)
		require.Len(t, stats, 1)
		require.WithinDuration(t, time.Now(), stats[0].LastSentAt, time.Minute)
		stats[0].LastSentAt = time.Time{}
		require.Equal(t, []*goclient.EventStat{{WorkflowType: "Approval", Event: "approved", Sent: 1, Consumed: 1}}, stats)
	})

	t.Run("PayloadForms", func(t *testing.T) {
		t.Parallel()
		ctx, pool, client, _ := setupEvents(t)
		id, err := client.CreateWorkflow(ctx, "Two", "User", "1", nil)
		require.NoError(t, err)

		type approval struct {
			By string `json:"by"`
		}
		for _, payload := range []any{
			nil,
			(*approval)(nil), // encodes to null: no payload either
			json.RawMessage(`{"raw":  [1, 2]}`),
			approval{By: "bo"},
			"text",
		} {
			sent, err := client.SendEvent(ctx, id, "noted", payload)
			require.NoError(t, err)
			require.True(t, sent)
		}
		var payloads []*string
		for _, e := range storedEvents(t, pool, id) {
			payloads = append(payloads, e.Payload)
		}
		require.Equal(t, []*string{nil, nil, new(`{"raw": [1, 2]}`), new(`{"by": "bo"}`), new(`"text"`)}, payloads)

		// a payload that is not JSON is refused before it is sent
		_, err = client.SendEvent(ctx, id, "noted", json.RawMessage(`{not json`))
		require.ErrorIs(t, err, goclient.ErrInvalidArgument)
		_, err = client.SendEvent(ctx, id, "noted", func() {})
		require.ErrorIs(t, err, goclient.ErrInvalidArgument)
		require.Len(t, storedEvents(t, pool, id), 5, "nothing sent")
	})

	t.Run("KeysAndStart", func(t *testing.T) {
		t.Parallel()
		ctx, pool, client, _ := setupEvents(t)
		// a delivery repeated is one event
		reached, err := client.SendHeroEvent(ctx, "Expense", "1", "approved", nil,
			goclient.SendHeroEventOpts{Key: "d-1", Start: "Approval"})
		require.NoError(t, err)
		require.Equal(t, 1, reached, "the workflow it started")
		workflows, err := client.ListWorkflows(ctx, &goclient.WorkflowFilter{WorkflowType: "Approval"}, 0)
		require.NoError(t, err)
		require.Len(t, workflows, 1)
		id := workflows[0].ID
		sent, err := client.SendEvent(ctx, id, "approved", nil, goclient.SendEventOpts{Key: "d-1"})
		require.NoError(t, err)
		require.False(t, sent)
		sent, err = client.SendEvent(ctx, id, "approved", nil, goclient.SendEventOpts{Key: "d-2"})
		require.NoError(t, err)
		require.True(t, sent)
		require.Len(t, storedEvents(t, pool, id), 2)
		_, err = client.SendEvent(ctx, id, "approved", nil, goclient.SendEventOpts{}, goclient.SendEventOpts{})
		require.ErrorIs(t, err, goclient.ErrInvalidArgument)
	})

	t.Run("ErrorsMatchTheirSentinels", func(t *testing.T) {
		t.Parallel()
		ctx, pool, client, _ := setupEvents(t)
		id, err := client.CreateWorkflow(ctx, "Approval", "Expense", "1", nil)
		require.NoError(t, err)

		for _, c := range []struct {
			err  error
			want error
			code string
		}{
			{second(client.SendEvent(ctx, 404, "approved", nil)), goclient.ErrNotFound, "P0002"},
			{second(client.SendEvent(ctx, id, "", nil)), goclient.ErrInvalidArgument, "22023"},
			{second(client.SendEvent(ctx, id, strings.Repeat("e", 256), nil)), goclient.ErrInvalidArgument, "22001"},
			{second(client.SendEvent(ctx, id, "approved", strings.Repeat("p", 1<<20))), goclient.ErrInvalidArgument, "22001"},
			{second(client.SendHeroEvent(ctx, "Expense", "1", "", nil)), goclient.ErrInvalidArgument, "22023"},
			{second(client.SendEvent(ctx, id, "approved", nil, goclient.SendEventOpts{Key: strings.Repeat("k", 256)})), goclient.ErrInvalidArgument, "22001"},
			{second(client.SendHeroEvent(ctx, "Expense", "1", "approved", nil, goclient.SendHeroEventOpts{Start: "Nope"})), goclient.ErrUnknownWorkflowType, "WF001"},
		} {
			require.ErrorIs(t, c.err, c.want)
			var pgErr *pgconn.PgError
			require.ErrorAs(t, c.err, &pgErr)
			require.Equal(t, c.code, pgErr.Code, pgErr.Message)
		}
		require.Empty(t, storedEvents(t, pool, id), "nothing written on an error")

		// to an ended workflow: false, and nothing recorded
		_, err = client.CancelWorkflow(ctx, id)
		require.NoError(t, err)
		sent, err := client.SendEvent(ctx, id, "approved", nil)
		require.NoError(t, err)
		require.False(t, sent)
		require.Empty(t, storedEvents(t, pool, id))
	})

	t.Run("SendHeroEventReachesEveryOngoingWorkflowOfTheHero", func(t *testing.T) {
		t.Parallel()
		ctx, pool, client, _ := setupEvents(t)
		first, err := client.CreateWorkflow(ctx, "Approval", "Expense", "9", nil)
		require.NoError(t, err)
		second, err := client.CreateWorkflow(ctx, "Two", "Expense", "9", nil)
		require.NoError(t, err)
		ended, err := client.CreateWorkflow(ctx, "Approval", "Expense", "9", &goclient.CreateWorkflowOpts{AllowMultiple: true})
		require.NoError(t, err)
		_, err = client.CancelWorkflow(ctx, ended)
		require.NoError(t, err)
		other, err := client.CreateWorkflow(ctx, "Approval", "Expense", "10", nil)
		require.NoError(t, err)

		reached, err := client.SendHeroEvent(ctx, "Expense", "9", "approved", json.RawMessage(`{"by": "cy"}`))
		require.NoError(t, err)
		require.Equal(t, 2, reached)
		for _, id := range []int64{first, second} {
			require.Equal(t, []storedEvent{{Name: "approved", Payload: new(`{"by": "cy"}`)}}, storedEvents(t, pool, id))
		}
		require.Empty(t, storedEvents(t, pool, ended))
		require.Empty(t, storedEvents(t, pool, other))
		awaiting, err := client.AwaitingEvents(ctx, nil)
		require.NoError(t, err)
		require.Len(t, awaiting, 1)
		require.Equal(t, other, awaiting[0].WorkflowID, "only the other hero's workflow still awaits")

		reached, err = client.SendHeroEvent(ctx, "Expense", "nobody", "approved", nil)
		require.NoError(t, err)
		require.Zero(t, reached)

		// kept for the workflow of type Two, which awaits nothing: pending
		stats, err := client.EventStats(ctx)
		require.NoError(t, err)
		for _, s := range stats {
			s.LastSentAt = time.Time{}
		}
		require.Equal(t, []*goclient.EventStat{
			{WorkflowType: "Approval", Event: "approved", Sent: 1, Pending: 1},
			{WorkflowType: "Two", Event: "approved", Sent: 1, Pending: 1},
		}, stats)
	})

	t.Run("AwaitingEventsFilters", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, worker := setupEvents(t)
		require.NoError(t, worker.DefineWorkflow(ctx, "Refund", []byte(`{"steps": [
			{"name": "wait_for_return", "await": {"event": "returned", "timeout": "1 day"}}]}`)))
		var approvals, refunds []int64
		for i := range 3 {
			id, err := client.CreateWorkflow(ctx, "Approval", "Expense", string(rune('a'+i)), nil)
			require.NoError(t, err)
			approvals = append(approvals, id)
		}
		for i := range 2 {
			id, err := client.CreateWorkflow(ctx, "Refund", "Order", string(rune('a'+i)), nil)
			require.NoError(t, err)
			refunds = append(refunds, id)
		}
		workflowIDs := func(list []*goclient.AwaitingEvent) []int64 {
			var ids []int64
			for _, a := range list {
				ids = append(ids, a.WorkflowID)
			}
			return ids
		}

		// the soonest timeout first: the refunds' day, then the approvals' two
		all, err := client.AwaitingEvents(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, append(append([]int64{}, refunds...), approvals...), workflowIDs(all))
		require.Equal(t, "run", all[0].OnTimeout, "the default")

		for _, c := range []struct {
			params *goclient.AwaitingEventsParams
			want   []int64
			count  int64 // without the limit
		}{
			{&goclient.AwaitingEventsParams{WorkflowType: "Approval"}, approvals, 3},
			{&goclient.AwaitingEventsParams{Event: "returned"}, refunds, 2},
			{&goclient.AwaitingEventsParams{WorkflowType: "Approval", Event: "returned"}, nil, 0},
			{&goclient.AwaitingEventsParams{WorkflowType: "Approval", Limit: 2}, approvals[:2], 3},
			{&goclient.AwaitingEventsParams{WorkflowID: refunds[1]}, refunds[1:], 1},
		} {
			list, err := client.AwaitingEvents(ctx, c.params)
			require.NoError(t, err)
			require.Equal(t, c.want, workflowIDs(list), "%+v", c.params)
			n, err := client.CountAwaitingEvents(ctx, c.params)
			require.NoError(t, err)
			require.Equal(t, c.count, n, "%+v", c.params)
		}
		n, err := client.CountAwaitingEvents(ctx, nil)
		require.NoError(t, err)
		require.EqualValues(t, 5, n)

		// a paused workflow still awaits its event
		_, err = client.PauseWorkflow(ctx, approvals[0])
		require.NoError(t, err)
		list, err := client.AwaitingEvents(ctx, &goclient.AwaitingEventsParams{WorkflowType: "Approval", Limit: 1})
		require.NoError(t, err)
		require.Equal(t, approvals[0], list[0].WorkflowID)
		require.Equal(t, goclient.StatePaused, list[0].WorkflowState)
	})

	t.Run("Roles", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		conf := dbtest.NewConfig(t)
		worker := protocol.New(dbtest.NewPoolAs(t, conf, dbtest.Worker))
		require.NoError(t, worker.DefineWorkflow(ctx, "Approval", []byte(approvalDefinition)))
		app := goclient.New(dbtest.NewPoolAs(t, conf, dbtest.App))
		id, err := app.CreateWorkflow(ctx, "Approval", "Expense", "1", nil)
		require.NoError(t, err)

		reader := goclient.New(dbtest.NewPoolAs(t, conf, dbtest.Reader))
		awaiting, err := reader.AwaitingEvents(ctx, nil)
		require.NoError(t, err, "a reader reads the view")
		require.Len(t, awaiting, 1)
		_, err = reader.EventStats(ctx)
		require.NoError(t, err)
		_, err = reader.SendEvent(ctx, id, "approved", nil)
		require.ErrorContains(t, err, "permission denied", "a reader may not send")
		_, err = reader.SendHeroEvent(ctx, "Expense", "1", "approved", nil)
		require.ErrorContains(t, err, "permission denied")

		sent, err := app.SendEvent(ctx, id, "approved", nil)
		require.NoError(t, err)
		require.True(t, sent, "the application may send")
		operator := goclient.New(dbtest.NewPoolAs(t, conf, dbtest.Operator))
		reached, err := operator.SendHeroEvent(ctx, "Expense", "1", "approved", nil)
		require.NoError(t, err)
		require.Equal(t, 1, reached, "so may an operator")
	})
}
