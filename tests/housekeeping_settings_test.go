package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// hkSettings reads the housekeeping settings on db as one text, in the
// order of geneva.get_housekeeping_settings' columns.
func (b *testBundle) hkSettings(t *testing.T, db rowQueryer) string {
	t.Helper()
	var s string
	require.NoError(t, db.QueryRow(b.ctx, "select row(s.*)::text from geneva.get_housekeeping_settings() s").Scan(&s))
	return s
}

// hkDefaults are the settings of a new database (the defaults of
// geneva.housekeeping_settings, migrations/001_create_schema.sql): no one set
// them.
const hkDefaults = `("30 days",01:00:00,00:15:00,reattempt,1000,00:01:00,"30 days","30 days",1000,100,"1 day",01:00:00,drop,,)`

// hkEnded creates a workflow of "One" and cancels it now (on the real clock:
// the rounds of housekeep_if_due run on other connections).
func (b *testBundle) hkEnded(t *testing.T, heroID string) int64 {
	t.Helper()
	id := b.create(t, "One", heroID)
	_, err := b.conn.Exec(b.ctx, "select geneva.cancel_workflow($1)", id)
	require.NoError(t, err)
	return id
}

func TestHousekeepingSettings(t *testing.T) {
	t.Parallel()

	t.Run("DefaultsAreTheMigrations", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		require.Equal(t, hkDefaults, b.hkSettings(t, b.conn))
	})

	// A worker's role cannot choose what a round deletes or recovers:
	// housekeep (thresholds as arguments) and the settings are refused,
	// housekeep_if_due takes none, and nothing changes.
	t.Run("WorkerCannotChooseThresholds", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "One", `{"steps": [{"name": "a"}]}`)
		ended := b.hkEnded(t, "1")
		running := b.create(t, "One", "2")
		b.run(t, running)
		worker := dbtest.NewConnAs(t, b.conf, dbtest.Worker)

		for _, c := range []struct {
			statement string
			code      string
		}{
			{"select geneva.housekeep(p_retention => interval '0')", "42501"},
			{"select geneva.housekeep(p_stuck_in_progress_after => interval '0', p_recovery_action => 'cancel')", "42501"},
			{"select geneva.housekeep()", "42501"},
			{"select geneva.housekeep_if_due(interval '0', p_retention => interval '0')", "42883"},
			{"select geneva.housekeep_if_due(interval '0', interval '0')", "42883"},
			{"select geneva.housekeep_if_due(interval '0', p_recovery_action => 'cancel')", "42883"},
			{"select geneva.set_housekeeping_settings(p_retention => interval '0')", "42501"},
			{"select geneva.set_housekeeping_settings(p_stuck_in_progress_after => interval '0')", "42501"},
			{"update geneva.housekeeping_settings set retention = interval '0'", "42501"},
			{"select * from geneva.housekeeping_settings", "42501"},
		} {
			_, err := worker.Exec(b.ctx, c.statement)
			requireCode(t, err, c.code)
		}

		require.Equal(t, hkDefaults, b.hkSettings(t, b.conn))
		require.Equal(t, 1, b.hkWorkflowCount(t, ended))
		require.Equal(t, "in_progress", b.active(t, running).State)
		// and its round, with the settings, deletes and recovers nothing young
		counts, err := ifDue(b.ctx, worker, "interval '0'")
		require.NoError(t, err)
		require.Equal(t, hkCounts{}, *counts)
	})

	t.Run("OnlyOperatorsSetThemEveryoneReadsThem", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for _, role := range []dbtest.Role{dbtest.Reader, dbtest.App, dbtest.Worker, dbtest.Operator} {
			conn := dbtest.NewConnAs(t, b.conf, role)
			require.Equal(t, hkDefaults, b.hkSettings(t, conn), role)
			_, err := conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_batch_size => 7)")
			if role != dbtest.Operator {
				requireCode(t, err, "42501")
				require.Equal(t, hkDefaults, b.hkSettings(t, b.conn), role)
				continue
			}
			require.NoError(t, err)
		}

		var batch int
		var by string
		var at time.Time
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select batch_size, updated_by, updated_at from geneva.get_housekeeping_settings()").Scan(&batch, &by, &at))
		require.Equal(t, 7, batch)
		require.Equal(t, string(dbtest.Operator), by, "the session user")
		require.WithinDuration(t, time.Now(), at, time.Minute)
	})

	// The acceptance of issue 21, item 11: an operator's retention of zero
	// (and stuck threshold, and action) is what the worker's rounds do.
	t.Run("WorkersRoundsFollowTheOperatorsSettings", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "One", `{"steps": [{"name": "a"}]}`)
		ended := b.hkEnded(t, "1")
		running := b.create(t, "One", "2")
		b.run(t, running)
		worker := dbtest.NewConnAs(t, b.conf, dbtest.Worker)
		operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)

		counts, err := ifDue(b.ctx, worker, "interval '0'")
		require.NoError(t, err)
		require.Equal(t, hkCounts{}, *counts, "the defaults keep both")

		_, err = operator.Exec(b.ctx, `select geneva.set_housekeeping_settings(p_retention => interval '0',
			p_stuck_in_progress_after => interval '0', p_recovery_action => 'cancel')`)
		require.NoError(t, err)
		// (retention drops whole days: the worker's round a day later)
		setNowOn(t, worker, time.Now().Add(24*time.Hour))
		counts, err = ifDue(b.ctx, worker, "interval '0'")
		require.NoError(t, err)

		require.Equal(t, hkCounts{WorkflowsCleanedUp: 1, StepExecutionsCleanedUp: 1, StuckInProgressRecovered: 1}, *counts)
		require.Zero(t, b.hkWorkflowCount(t, ended))
		require.Equal(t, "canceled", b.workflow(t, running).State, "recovered by the setting's action")
	})

	t.Run("ArgumentsNotGivenStayAsTheyAre", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		set := func(args string) string {
			t.Helper()
			var s string
			require.NoError(t, b.conn.QueryRow(b.ctx,
				"select row(s.retention, s.stuck_in_progress_after, s.stuck_scheduled_after, s.recovery_action, s.batch_size)::text"+
					" from geneva.set_housekeeping_settings("+args+") s").Scan(&s))
			return s
		}

		require.Equal(t, `("30 days",01:00:00,00:15:00,reattempt,1000)`, set(""))
		require.Equal(t, hkDefaults, b.hkSettings(t, b.conn), "nothing given: nothing changed, not even who set them")
		require.Equal(t, `("30 days",01:00:00,00:15:00,reattempt,1000)`, set("null, null, null, null, null"))
		require.Equal(t, `("7 days",01:00:00,00:15:00,cancel,1000)`, set("p_retention => interval '7 days', p_recovery_action => 'cancel'"))
		require.Equal(t, `("7 days",00:00:00,00:05:00,cancel,10)`,
			set("p_stuck_in_progress_after => interval '0', p_stuck_scheduled_after => interval '5 minutes', p_batch_size => 10"))
		// NULL is "unchanged"; keeping ended workflows forever is said so
		require.Equal(t, `(,00:00:00,00:05:00,cancel,10)`, set("p_keep_forever => true"))
		require.Equal(t, `(,00:00:00,00:05:00,cancel,10)`, set("p_retention => null"))
		require.Equal(t, `(00:00:00,00:00:00,00:05:00,cancel,10)`, set("p_retention => interval '0'"))
		require.Equal(t, `(00:00:00,00:00:00,00:05:00,cancel,10)`, set("p_keep_forever => false"))
	})

	// How often the workers' rounds run is a setting too
	// (geneva.housekeep_if_due given none, as the workers call it).
	t.Run("RoundInterval", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)
		set := func(args string) string {
			t.Helper()
			var s string
			require.NoError(t, operator.QueryRow(b.ctx,
				"select s.round_interval::text from geneva.set_housekeeping_settings("+args+") s").Scan(&s))
			return s
		}
		read := func() string {
			t.Helper()
			var s string
			require.NoError(t, b.conn.QueryRow(b.ctx,
				"select round_interval::text from geneva.get_housekeeping_settings()").Scan(&s))
			return s
		}

		require.Equal(t, "00:01:00", read(), "the default")
		require.Equal(t, "00:05:00", set("p_round_interval => interval '5 minutes'"), "returned")
		require.Equal(t, "00:05:00", read(), "and kept")
		var by string
		require.NoError(t, b.conn.QueryRow(b.ctx, "select updated_by from geneva.get_housekeeping_settings()").Scan(&by))
		require.Equal(t, string(dbtest.Operator), by)
		require.Equal(t, "00:05:00", set("p_batch_size => 10"), "not given: unchanged")
		require.Equal(t, "00:05:00", set("p_round_interval => null"))
		require.Equal(t, "00:00:00", set("p_round_interval => interval '0'"), "zero is zero")

		// refused, nothing written
		before := b.hkSettings(t, b.conn)
		for _, args := range []string{
			"p_round_interval => interval '-1 second'",
			"p_round_interval => interval '1001 years'",
			"p_batch_size => 20, p_round_interval => interval '-1 minute'",
		} {
			_, err := operator.Exec(b.ctx, "select geneva.set_housekeeping_settings("+args+")")
			requireCode(t, err, "22023")
		}
		require.Equal(t, before, b.hkSettings(t, b.conn))

		// and only operators set it
		worker := dbtest.NewConnAs(t, b.conf, dbtest.Worker)
		_, err := worker.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_round_interval => interval '1 second')")
		requireCode(t, err, "42501")
		require.Equal(t, before, b.hkSettings(t, b.conn))
	})

	t.Run("RaisesForBadValues", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)
		for _, c := range []struct {
			args string
			code string
		}{
			{"p_recovery_action => 'retry'", "22023"},
			{"p_recovery_action => ''", "22023"},
			{"p_batch_size => 0", "22023"},
			{"p_batch_size => -1", "22023"},
			{"p_retention => interval '-1 day'", "22023"},
			{"p_stuck_in_progress_after => interval '-1 minute'", "22023"},
			{"p_stuck_scheduled_after => interval '-1 second'", "22023"},
			{"p_retention => interval '1 day', p_keep_forever => true", "22023"},
			{"p_keep_forever => null", "22004"},
			// far past every wait's bound (it overflowed timestamptz: 22008)
			{"p_retention => interval '1000000 years'", "22023"},
			{"p_stuck_in_progress_after => interval '1001 years'", "22023"},
			{"p_stuck_scheduled_after => interval '1000000 years'", "22023"},
			{"p_round_interval => interval '-1 second'", "22023"},
			{"p_round_interval => interval '1000000 years'", "22023"},
			{"p_action_retention => interval '-1 day'", "22023"},
			{"p_action_retention => interval '1000000 years'", "22023"},
			{"p_action_retention_floor => interval '-1 second'", "22023"},
			{"p_action_retention_floor => interval '1001 years'", "22023"},
			// one bad value refuses the good ones with it
			{"p_retention => interval '0', p_batch_size => 0", "22023"},
		} {
			_, err := operator.Exec(b.ctx, "select geneva.set_housekeeping_settings("+c.args+")")
			requireCode(t, err, c.code)
		}
		require.Equal(t, hkDefaults, b.hkSettings(t, b.conn))

		// a round's own thresholds and the interval between rounds too
		for _, call := range []string{
			"select geneva.housekeep(p_retention => interval '1000000 years')",
			"select geneva.housekeep(p_stuck_scheduled_after => interval '1000000 years')",
			"select geneva.housekeep_if_due(interval '1000000 years')",
		} {
			_, err := operator.Exec(b.ctx, call)
			requireCode(t, err, "22023")
		}
	})

	// Only the functions write the settings, even for the owner.
	t.Run("GuardRefusesHandWrites", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for _, statement := range []string{
			"update geneva.housekeeping_settings set retention = interval '0'",
			"update geneva.housekeeping_settings set updated_by = 'someone else'",
			"delete from geneva.housekeeping_settings",
			"insert into geneva.housekeeping_settings (singleton) values (true)",
			"truncate geneva.housekeeping_settings",
		} {
			_, err := b.conn.Exec(b.ctx, statement)
			requireCode(t, err, "55000")
		}
		require.Equal(t, hkDefaults, b.hkSettings(t, b.conn))
	})

	t.Run("MissingRowIsPutBack", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_batch_size => 3)")
		require.NoError(t, err)
		// the owner can always get past the guard (as the functions do)
		_, err = b.conn.Exec(b.ctx, `select set_config('geneva.housekeeping_settings', 'on', false);
			delete from geneva.housekeeping_settings;
			select set_config('geneva.housekeeping_settings', '', false)`)
		require.NoError(t, err)

		require.NotNil(t, b.hkRound(t, ""), "a round runs, with the defaults")
		require.Equal(t, hkDefaults, b.hkSettings(t, b.conn))
	})

	t.Run("HousekeepTakesTheSettingForEachArgumentNotGiven", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		id := b.hkFinished(t, "1")
		_, err := b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_retention => interval '1 hour')")
		require.NoError(t, err)

		// (ended at noon: its day's partition ends at midnight, two hours ago)
		b.setNow(t, t0.Add(14*time.Hour))
		require.Equal(t, hkCounts{}, b.hkRound(t, "p_retention => interval '3 hours'"), "an argument wins")
		require.Equal(t, hkCounts{}, b.hkRound(t, "p_keep_forever => true"))
		require.Equal(t, hkCounts{WorkflowsCleanedUp: 1, StepExecutionsCleanedUp: 1}, b.hkRound(t, ""), "the setting")
		require.Zero(t, b.hkWorkflowCount(t, id))
	})

	t.Run("StuckExecutionsFollowTheSettings", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "One", `{"steps": [{"name": "a"}]}`)
		b.run(t, b.create(t, "One", "1"))
		reader := dbtest.NewConnAs(t, b.conf, dbtest.Reader)
		stuck := func() int {
			t.Helper()
			var n int
			require.NoError(t, reader.QueryRow(b.ctx, "select count(*) from geneva.stuck_executions").Scan(&n))
			return n
		}

		require.Zero(t, stuck(), "started just now: not stuck after an hour")
		_, err := b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_stuck_in_progress_after => interval '0')")
		require.NoError(t, err)
		require.Equal(t, 1, stuck(), "stuck after the setting, nothing")
		// a session's own threshold still wins
		_, err = reader.Exec(b.ctx, "set geneva.stuck_in_progress_after = '1 hour'")
		require.NoError(t, err)
		require.Zero(t, stuck())
	})

	t.Run("SurviveMigrate", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.conn.Exec(b.ctx, `select geneva.set_housekeeping_settings(p_keep_forever => true,
			p_stuck_scheduled_after => interval '2 hours', p_recovery_action => 'cancel', p_batch_size => 50)`)
		require.NoError(t, err)
		before := b.hkSettings(t, b.conn)
		require.True(t, strings.HasPrefix(before, `(,01:00:00,02:00:00,cancel,50,`), before)

		migrate(t, b.pool)
		migrate(t, b.pool)

		require.Equal(t, before, b.hkSettings(t, b.conn))
	})
}
