package tests

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// actionRow is a row of geneva.action_log.
type actionRow struct {
	ActionID     int64           `db:"action_id"`
	At           time.Time       `db:"at"`
	PerformedBy  string          `db:"performed_by"`
	Actor        *string         `db:"actor"`
	Verb         string          `db:"verb"`
	WorkflowID   *int64          `db:"workflow_id"`
	Arguments    json.RawMessage `db:"arguments"`
	Result       json.RawMessage `db:"result"`
	BulkActionID *int64          `db:"bulk_action_id"`
}

// actions returns the log's rows after the action id, in order.
func (b *testBundle) actions(t *testing.T, after int64) []actionRow {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, "select * from geneva.action_log where action_id > $1 order by action_id", after)
	require.NoError(t, err)
	all, err := pgx.CollectRows(rows, pgx.RowToStructByName[actionRow])
	require.NoError(t, err)
	return all
}

// verbs are the rows' verbs, in order.
func verbs(rows []actionRow) []string {
	out := make([]string, len(rows))
	for i, row := range rows {
		out[i] = row.Verb
	}
	return out
}

func (b *testBundle) lastActionID(t *testing.T) int64 {
	t.Helper()
	var id int64
	require.NoError(t, b.conn.QueryRow(b.ctx, "select coalesce(max(action_id), 0) from geneva.action_log").Scan(&id))
	return id
}

// TestActionLog: every operator verb, called as the operator's login role
// (not the owner), leaves exactly one row in geneva.action_log naming that
// role, the verb, the workflow and the arguments; a refused call leaves
// none; the dashboard's actor is recorded; housekeeping keeps the log for
// the retention; and no one writes it by hand.
func TestActionLog(t *testing.T) {
	t.Parallel()

	t.Run("EveryVerbLeavesOneRowWithTheOperatorsRole", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)
		setNowOn(t, operator, t0)
		worker := dbtest.NewConnAs(t, b.conf, dbtest.Worker)
		setNowOn(t, worker, t0)

		id := b.create(t, "ThreeSteps", "1")
		start := b.lastActionID(t)
		_, err := b.conn.Exec(b.ctx, "create table public.users (id bigint primary key); grant trigger on public.users to "+string(dbtest.Operator))
		require.NoError(t, err)

		type call struct {
			role       *pgx.Conn
			login      dbtest.Role
			sql        string
			verb       string
			workflowID *int64
			arguments  string // a JSON subset the row's arguments hold
		}
		calls := []call{
			{operator, dbtest.Operator, "select geneva.pause_workflow($1)", "pause_workflow", &id, `{}`},
			{operator, dbtest.Operator, "select geneva.resume_workflow($1)", "resume_workflow", &id, `{}`},
			{operator, dbtest.Operator, "select geneva.skip_step($1)", "skip_step", &id, `{}`},
			{operator, dbtest.Operator, "select geneva.schedule_step($1, 'c')", "schedule_step", &id, `{"step_name": "c"}`},
			{operator, dbtest.Operator, "select geneva.send_event($1, 'approved', '{\"by\": \"me\"}')", "send_event", &id, `{"event": "approved"}`},
			{operator, dbtest.Operator, "select geneva.send_hero_event('User', '1', 'approved')", "send_hero_event", nil, `{"hero_type": "User", "hero_id": "1", "event": "approved"}`},
			{operator, dbtest.Operator, "select geneva.cancel_workflow($1)", "cancel_workflow", &id, `{}`},
			{operator, dbtest.Operator, "select geneva.retry_workflow($1, 'b')", "retry_workflow", &id, `{"from_step": "b"}`},
			{operator, dbtest.Operator, "select geneva.bulk_workflows('pause', '{\"hero_id\": \"nobody\"}')", "bulk_workflows", nil, `{"verb": "pause", "filter": {"hero_id": "nobody"}, "limit": 1000}`},
			{operator, dbtest.Operator, "select geneva.set_housekeeping_settings(p_batch_size => 50)", "set_housekeeping_settings", nil, `{"batch_size": 50}`},
			{operator, dbtest.Operator, "select geneva.track_hero('public.users', 'User')", "track_hero", nil, `{"table": "public.users", "hero_type": "User", "id_column": "id"}`},
			{operator, dbtest.Operator, "select geneva.untrack_hero('public.users', 'User')", "untrack_hero", nil, `{"table": "public.users", "hero_type": "User"}`},
			{operator, dbtest.Operator, "select geneva.define_limit('mail', p_concurrency => 5, p_by => 'group')", "define_limit", nil, `{"name": "mail", "concurrency": 5, "by": "group"}`},
			{operator, dbtest.Operator, "select geneva.create_schedule('nightly', '0 3 * * *', 'ThreeSteps', 'Team', 'ops')", "create_schedule", nil, `{"name": "nightly", "cron": "0 3 * * *", "timezone": "UTC"}`},
			{operator, dbtest.Operator, "select geneva.pause_schedule('nightly')", "pause_schedule", nil, `{"name": "nightly"}`},
			{operator, dbtest.Operator, "select geneva.resume_schedule('nightly')", "resume_schedule", nil, `{"name": "nightly"}`},
			{operator, dbtest.Operator, "select geneva.delete_schedule('nightly')", "delete_schedule", nil, `{"name": "nightly"}`},
			{worker, dbtest.Worker, "select geneva.define_workflow('Other', '{\"steps\": [{\"name\": \"x\"}]}')", "define_workflow", nil, `{"workflow_type": "Other"}`},
		}
		for _, c := range calls {
			before := b.lastActionID(t)
			var args []any
			if strings.Contains(c.sql, "$1") {
				args = append(args, id)
			}
			_, err := c.role.Exec(b.ctx, c.sql, args...)
			require.NoError(t, err, c.sql)
			got := b.actions(t, before)
			require.Len(t, got, 1, "%s leaves one row", c.verb)
			require.Equal(t, string(c.login), got[0].PerformedBy, c.verb)
			require.Equal(t, c.verb, got[0].Verb)
			require.Equal(t, c.workflowID, got[0].WorkflowID, c.verb)
			require.Equal(t, t0, got[0].At.Local())
			var want, have map[string]any
			require.NoError(t, json.Unmarshal([]byte(c.arguments), &want))
			require.NoError(t, json.Unmarshal(got[0].Arguments, &have))
			for k, v := range want {
				require.Equal(t, v, have[k], "%s: argument %s", c.verb, k)
			}
			require.Nil(t, got[0].Actor)
		}

		// what the verbs left is their result
		rows := b.actions(t, start)
		require.JSONEq(t, `{"state": "paused", "next_step_name": "a"}`, string(rows[0].Result))
		require.JSONEq(t, `{"sent": true}`, string(rows[4].Result))
		require.JSONEq(t, `{"reached": 1}`, string(rows[5].Result))

		// defining the same again (every worker's start-up) is no action
		before := b.lastActionID(t)
		_, err = worker.Exec(b.ctx, "select geneva.define_workflow('Other', '{\"steps\": [{\"name\": \"x\"}]}')")
		require.NoError(t, err)
		require.Empty(t, b.actions(t, before))
	})

	t.Run("RefusedCallLeavesNoRow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		start := b.lastActionID(t)
		operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)
		_, err := operator.Exec(b.ctx, "select geneva.resume_workflow($1)", id)
		requireCode(t, err, "55000")
		_, err = operator.Exec(b.ctx, "select geneva.retry_workflow($1)", id)
		requireCode(t, err, "55000")
		_, err = operator.Exec(b.ctx, "select geneva.bulk_workflows('explode', '{}')")
		requireCode(t, err, "22023")
		require.Empty(t, b.actions(t, start))
	})

	t.Run("RecordsTheActorTheCallerNames", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		start := b.lastActionID(t)
		operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)
		tx, err := operator.Begin(b.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "select set_config('geneva.actor', 'alice@example.com', true)")
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "select geneva.pause_workflow($1)", id)
		require.NoError(t, err)
		require.NoError(t, tx.Commit(b.ctx))
		// transaction-local: the next call names no one
		_, err = operator.Exec(b.ctx, "select geneva.resume_workflow($1)", id)
		require.NoError(t, err)

		rows := b.actions(t, start)
		require.Len(t, rows, 2)
		require.Equal(t, "alice@example.com", deref(rows[0].Actor))
		require.Equal(t, string(dbtest.Operator), rows[0].PerformedBy, "the role is the fact, the actor a claim")
		require.Nil(t, rows[1].Actor)

		// a name, not a document: over 255 bytes is refused, and the verb
		// with it (issue 44, item 8: 50 MB rows)
		for _, size := range []int{256, 50_000_000} {
			tx, err = operator.Begin(b.ctx)
			require.NoError(t, err)
			_, err = tx.Exec(b.ctx, "select set_config('geneva.actor', repeat('x', $1), true)", size)
			require.NoError(t, err)
			_, err = tx.Exec(b.ctx, "select geneva.pause_workflow($1)", id)
			requireCode(t, err, "22001")
			require.NoError(t, tx.Rollback(b.ctx))
		}
		require.Len(t, b.actions(t, start), 2)
		require.Equal(t, "ready", b.workflow(t, id).State)
	})

	// geneva.bulk_action_id was a setting the verbs read: any operator
	// could set it and tie its own actions to another bulk call (issue 44,
	// item 9). The bulk call passes its id down instead.
	t.Run("BulkActionIDCannotBeForged", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		other := b.create(t, "ThreeSteps", "2")
		start := b.lastActionID(t)
		operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)
		_, err := operator.Exec(b.ctx, "set geneva.bulk_action_id = '424242'")
		require.NoError(t, err)
		_, err = operator.Exec(b.ctx, "select geneva.pause_workflow($1)", id)
		require.NoError(t, err)
		var result map[string]any
		require.NoError(t, operator.QueryRow(b.ctx,
			"select geneva.bulk_workflows('pause', jsonb_build_object('hero_id', '2'))").Scan(&result))

		rows := b.actions(t, start)
		require.Len(t, rows, 3)
		require.Equal(t, "pause_workflow", rows[0].Verb)
		require.Nil(t, rows[0].BulkActionID, "a setting the caller controls named a bulk call")
		// (the bulk call's id is taken before its verbs act)
		require.Equal(t, "bulk_workflows", rows[1].Verb)
		require.Nil(t, rows[1].BulkActionID)
		require.Equal(t, other, deref(rows[2].WorkflowID))
		require.Equal(t, rows[1].ActionID, deref(rows[2].BulkActionID), "the bulk call's own id, not the setting")
	})

	t.Run("HousekeepingKeepsItForTheRetention", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		_, err := b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_action_retention => interval '40 days')")
		require.NoError(t, err)
		start := b.lastActionID(t)
		b.call(t, "pause_workflow", id)
		b.setNow(t, t0.Add(hours(24*10)))
		b.call(t, "resume_workflow", id)

		b.setNow(t, t0.Add(hours(24*45)))
		_, err = b.conn.Exec(b.ctx, "select geneva.housekeep()")
		require.NoError(t, err)
		rows := b.actions(t, start)
		require.Len(t, rows, 1, "the action older than the action retention is deleted")
		require.Equal(t, "resume_workflow", rows[0].Verb)

		// the workflows' retention is not the log's
		_, err = b.conn.Exec(b.ctx, "select geneva.housekeep(p_keep_forever => true)")
		require.NoError(t, err)
		b.setNow(t, t0.Add(hours(24*60)))
		_, err = b.conn.Exec(b.ctx, "select geneva.housekeep(p_keep_forever => true)")
		require.NoError(t, err)
		require.Equal(t, []string{"housekeep", "housekeep"}, verbs(b.actions(t, start)),
			"the resume went with the action retention; the rounds with arguments are logged")
	})

	// An operator erased the log unseen: housekeep(p_retention => '0') is
	// no logged verb, and a retention of zero set in the settings deleted
	// the very row that set it at the next round (issue 44, item 4). The
	// log has its own retention, never below a floor only the owner may
	// lower, and housekeep given arguments is logged.
	t.Run("AnOperatorCannotEraseIt", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		start := b.lastActionID(t)
		operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)
		setNowOn(t, operator, t0)
		_, err := operator.Exec(b.ctx, "select geneva.pause_workflow($1)", id)
		require.NoError(t, err)

		setNowOn(t, operator, t0.Add(hours(1)))
		_, err = operator.Exec(b.ctx, "select geneva.housekeep(p_retention => interval '0')")
		require.NoError(t, err)
		_, err = operator.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_retention => interval '0')")
		require.NoError(t, err)
		_, err = operator.Exec(b.ctx, "select geneva.housekeep()")
		require.NoError(t, err)
		require.Equal(t, []string{"pause_workflow", "housekeep", "set_housekeeping_settings"}, verbs(b.actions(t, start)),
			"what the operator did is all there, a round with arguments too (one without is no action)")

		// the log's own retention stops at the floor; only the owner lowers it
		for _, c := range []struct{ args, code string }{
			{"p_action_retention => interval '0'", "22023"},
			{"p_action_retention => interval '29 days'", "22023"},
			{"p_action_retention_floor => interval '1 day'", "42501"},
			{"p_action_retention_floor => interval '1 day', p_action_retention => interval '1 day'", "42501"},
		} {
			_, err = operator.Exec(b.ctx, "select geneva.set_housekeeping_settings("+c.args+")")
			requireCode(t, err, c.code)
		}
		var retention, floor string
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select action_retention::text, action_retention_floor::text from geneva.get_housekeeping_settings()").Scan(&retention, &floor))
		require.Equal(t, []string{"30 days", "30 days"}, []string{retention, floor}, "the defaults")
		// raising the floor keeps more: an operator may
		_, err = operator.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_action_retention_floor => interval '60 days')")
		require.NoError(t, err)
		setNowOn(t, operator, t0.Add(hours(24*45)))
		_, err = operator.Exec(b.ctx, "select geneva.housekeep()")
		require.NoError(t, err)
		require.Len(t, b.actions(t, start), 4, "nothing younger than the floor goes, whatever the retention")

		// the owner may lower it
		b.setNow(t, t0.Add(hours(24*45)))
		_, err = b.conn.Exec(b.ctx, `select geneva.set_housekeeping_settings(p_action_retention_floor => interval '1 day',
			p_action_retention => interval '1 day')`)
		require.NoError(t, err)
		_, err = b.conn.Exec(b.ctx, "select geneva.housekeep()")
		require.NoError(t, err)
		require.Equal(t, []string{"set_housekeeping_settings"}, verbs(b.actions(t, start)), "the owner's own change is a day young")
	})

	t.Run("IsHistory", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		start := b.lastActionID(t)
		b.call(t, "pause_workflow", id)
		for _, statement := range []string{
			"insert into geneva.operator_actions (at, performed_by, verb, arguments) values (now(), 'me', 'pause_workflow', '{}')",
			"update geneva.operator_actions set performed_by = 'someone else'",
			"delete from geneva.operator_actions",
			"truncate geneva.operator_actions",
		} {
			_, err := b.conn.Exec(b.ctx, statement)
			requireCode(t, err, "55000")
		}
		require.Len(t, b.actions(t, start), 1)
	})
}
