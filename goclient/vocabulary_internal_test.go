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
// two cannot drift (internal/protocol's test does the same for the worker
// protocol's signals and preconditions).

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

// strs is the strings of typed constants.
func strs[S ~string](values ...S) []string {
	var all []string
	for _, v := range values {
		all = append(all, string(v))
	}
	return all
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
	require.ElementsMatch(t, states, strs(StateReady, StatePerforming, StatePaused, StateFinished, StateCanceled))

	// execution states: the cases of the CHECK on geneva.step_executions
	check = query(`select pg_get_constraintdef(oid) from pg_constraint where conname = 'step_executions_state_outcome_valid'`)
	var executionStates []string
	for _, m := range regexp.MustCompile(`WHEN '([a-z_]+)'::text THEN`).FindAllStringSubmatch(check, -1) {
		executionStates = append(executionStates, m[1])
	}
	require.ElementsMatch(t, executionStates, strs(ExecutionScheduled, ExecutionInProgress, ExecutionCompleted,
		ExecutionFailed, ExecutionCanceled, ExecutionSkipped))

}

// SQL alone holds housekeeping's defaults (the settings row of migration
// 008): for thresholds not given, goclient sends NULL, and geneva.housekeep
// and geneva.set_housekeeping_settings default every threshold to NULL ("the
// setting", "unchanged").
func TestHousekeepSendsNoDefaults(t *testing.T) {
	ctx := context.Background()
	conn := dbtest.NewConn(t, dbtest.NewConfig(t))
	none := []any{(*time.Duration)(nil), (*time.Duration)(nil), (*time.Duration)(nil), (*string)(nil), (*int)(nil), false}
	for _, params := range []*HousekeepParams{nil, {}} {
		require.Equal(t, none, params.args())
	}
	keepForever := (&HousekeepParams{Retention: new(-time.Second)}).args()
	require.Nil(t, keepForever[0])
	require.Equal(t, true, keepForever[5])

	for _, function := range []string{"geneva.housekeep", "geneva.set_housekeeping_settings"} {
		var arguments string
		require.NoError(t, conn.QueryRow(ctx, "select pg_get_function_arguments($1::regproc)", function).Scan(&arguments))
		require.Equal(t, "p_retention interval DEFAULT NULL::interval, p_stuck_in_progress_after interval DEFAULT NULL::interval, "+
			"p_stuck_scheduled_after interval DEFAULT NULL::interval, p_recovery_action text DEFAULT NULL::text, "+
			"p_batch_size integer DEFAULT NULL::integer, p_keep_forever boolean DEFAULT false", arguments, function)
	}
}
