package goclient

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// SQL owns the vocabulary and the defaults; these tests pin goclient's
// constants and the defaults it sends to what the database says, so that the
// two cannot drift.

// quoted lists the single-quoted words of s, in order, once each.
func quoted(s string) []string {
	var words []string
	for _, m := range regexp.MustCompile(`'([a-z_]+)'`).FindAllStringSubmatch(s, -1) {
		if !slices.Contains(words, m[1]) {
			words = append(words, m[1])
		}
	}
	return words
}

func TestVocabularyMatchesSQL(t *testing.T) {
	ctx := context.Background()
	conn := dbtest.NewConn(t, dbtest.NewConfig(t))
	query := func(sql string, args ...any) string {
		t.Helper()
		var s string
		require.NoError(t, conn.QueryRow(ctx, sql, args...).Scan(&s))
		return s
	}

	// workflow states: the CHECK on geneva.workflows (its first list)
	check := query(`select pg_get_constraintdef(oid) from pg_constraint where conname = 'workflows_state_valid'`)
	states := quoted(check[:strings.Index(check, "requested_action")])
	require.ElementsMatch(t, states, []string{StateReady, StatePerforming, StatePaused, StateFinished, StateCanceled})

	// execution states: the cases of the CHECK on geneva.step_executions
	check = query(`select pg_get_constraintdef(oid) from pg_constraint where conname = 'step_executions_state_outcome_valid'`)
	var executionStates []string
	for _, m := range regexp.MustCompile(`WHEN '([a-z_]+)'::text THEN`).FindAllStringSubmatch(check, -1) {
		executionStates = append(executionStates, m[1])
	}
	require.ElementsMatch(t, executionStates, []string{ExecutionScheduled, ExecutionInProgress, ExecutionCompleted,
		ExecutionFailed, ExecutionCanceled, ExecutionSkipped})

	// signals: what geneva._complete_step accepts, the step's rows of the
	// table of effects
	signals := query(`select string_agg(quote_literal(signal), ', ') from geneva._signal_effects() where cause = 'step'`)
	require.ElementsMatch(t, quoted(signals), []string{string(SignalSuccess), string(SignalFinished),
		string(SignalReattempt), string(SignalReattemptRewind), string(SignalSkip), string(SignalCancel),
		string(SignalPause), string(SignalSuspend)})

	// preconditions: what geneva.start_step accepts
	body := query(`select pg_get_functiondef('geneva.start_step'::regproc)`)
	line := regexp.MustCompile(`p_precondition not in \(([^)]*)\)`).FindStringSubmatch(body)
	require.NotNil(t, line)
	require.ElementsMatch(t, quoted(line[1]), []string{string(PreconditionCancel), string(PreconditionSkip),
		string(PreconditionHeroMissing)})
}

// Housekeep sends, for parameters not given, exactly geneva.housekeep's own
// defaults.
func TestHousekeepDefaultsMatchSQL(t *testing.T) {
	ctx := context.Background()
	conn := dbtest.NewConn(t, dbtest.NewConfig(t))
	args := housekeepArgs(nil)

	var same bool
	require.NoError(t, conn.QueryRow(ctx, `
		with d as (
		  select pg_get_function_arguments('geneva.housekeep'::regproc) as a
		)
		select $1::interval = substring(a from 'p_retention interval DEFAULT ''([^'']*)''')::interval
		  and $2::interval = substring(a from 'p_stuck_in_progress_after interval DEFAULT ''([^'']*)''')::interval
		  and $3::interval = substring(a from 'p_stuck_scheduled_after interval DEFAULT ''([^'']*)''')::interval
		  and $4::text = substring(a from 'p_recovery_action text DEFAULT ''([^'']*)''')
		  and $5::integer = substring(a from 'p_batch_size integer DEFAULT ([0-9]+)')::integer
		from d`, *args[0].(*time.Duration), args[1], args[2], args[3], args[4]).Scan(&same))
	require.True(t, same, "goclient's housekeeping defaults differ from geneva.housekeep's: %v", args)
}
