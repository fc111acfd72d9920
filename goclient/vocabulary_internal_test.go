package goclient

import (
	"context"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/internal/vocabtest"
)

// SQL owns the vocabulary and the defaults; these tests pin goclient's
// constants, as its source declares them, and the defaults it sends to what
// the database says, so that the two cannot drift (internal/protocol's test
// does the same for the worker protocol's signals and preconditions).

func TestVocabularyMatchesSQL(t *testing.T) {
	ctx := context.Background()
	conn := dbtest.NewConn(t, dbtest.NewConfig(t))
	// the body of the function a CHECK constraint calls (sql/constraints/)
	rules := func(function string) string {
		t.Helper()
		var body string
		require.NoError(t, conn.QueryRow(ctx, "select prosrc from pg_proc where oid = $1::regproc", function).Scan(&body))
		return body
	}
	// between is the part of s after the first from and before the next to.
	between := func(s, from, to string) string {
		t.Helper()
		_, after, ok := strings.Cut(s, from)
		require.True(t, ok, "no %q in %s", from, s)
		part, _, ok := strings.Cut(after, to)
		require.True(t, ok, "no %q after %q in %s", to, from, s)
		return part
	}

	// the CHECK on geneva.workflows: the states (its first list; and
	// StateOngoing, a filter's: the first three), and the requests an
	// operator may leave a performing workflow
	check := rules("geneva._chk_workflows_state_valid")
	assert.ElementsMatch(t, append(vocabtest.Quoted(between(check, "p_state in (", ")")), string(StateOngoing)),
		vocabtest.Constants(t, ".", "WorkflowState"))
	assert.ElementsMatch(t, vocabtest.Quoted(between(check, "p_requested_action in (", ")")),
		vocabtest.Constants(t, ".", "RequestedAction"))

	// the workflow filter's states (WorkflowFilter.State): each a clause of
	// geneva._workflow_filter, written when '"state"' then ...
	var filterStates []string
	for _, m := range regexp.MustCompile(`when '"(\w+)"' then`).FindAllStringSubmatch(rules("geneva._workflow_filter"), -1) {
		filterStates = append(filterStates, m[1])
	}
	assert.ElementsMatch(t, filterStates, vocabtest.Constants(t, ".", "WorkflowState"))
	// and its keys (rows ['key', 'kind', ...] of v_keys): WorkflowFilter's
	// fields, by their JSON names
	var sqlKeys, goKeys []string
	for _, m := range regexp.MustCompile(`\['(\w+)', '(?:text|time|id|state)'`).FindAllStringSubmatch(rules("geneva._workflow_filter"), -1) {
		sqlKeys = append(sqlKeys, m[1])
	}
	filter := reflect.TypeFor[WorkflowFilter]()
	for i := range filter.NumField() {
		key, _, _ := strings.Cut(filter.Field(i).Tag.Get("json"), ",")
		goKeys = append(goKeys, key)
	}
	assert.NotEmpty(t, sqlKeys)
	assert.Equal(t, sqlKeys, goKeys, "in the same order")

	// the CHECK on geneva.step_executions: its list of the states, each
	// alone (active) or with each outcome it may carry ("state:outcome")
	check = rules("geneva._chk_step_executions_state_valid")
	list := regexp.MustCompile(`any \('\{([^}]*)\}'::text\[\]\)`).FindStringSubmatch(check)
	require.NotNil(t, list, "no list in %s", check)
	var executionStates, outcomes []string
	for _, pair := range strings.Split(list[1], ",") {
		state, outcome, _ := strings.Cut(strings.TrimSpace(pair), ":")
		if !slices.Contains(executionStates, state) {
			executionStates = append(executionStates, state)
		}
		if outcome != "" && !slices.Contains(outcomes, outcome) { // recovered is completed or canceled
			outcomes = append(outcomes, outcome)
		}
	}
	assert.ElementsMatch(t, executionStates, vocabtest.Constants(t, ".", "ExecutionState"))
	assert.ElementsMatch(t, outcomes, vocabtest.Constants(t, ".", "Outcome"))

	// housekeeping's recovery actions: the rows of geneva._signal_effects
	// with the cause housekeeping, which the settings' CHECK also lists
	var actions []string
	require.NoError(t, conn.QueryRow(ctx,
		"select array_agg(signal order by signal) from geneva._signal_effects() where cause = 'housekeeping'").Scan(&actions))
	assert.ElementsMatch(t, actions, vocabtest.Constants(t, ".", "RecoveryAction"))
	var constraint string
	require.NoError(t, conn.QueryRow(ctx, `select pg_get_constraintdef(oid) from pg_constraint
		where conname = 'housekeeping_settings_recovery_action_valid'`).Scan(&constraint))
	assert.ElementsMatch(t, vocabtest.Quoted(constraint), actions)
}

// SQL alone holds housekeeping's defaults (the column defaults of
// geneva.housekeeping_settings): for thresholds and a round interval not
// given, goclient sends NULL, and geneva.housekeep,
// geneva.set_housekeeping_settings and geneva.housekeep_if_due default every
// one to NULL ("the setting", "unchanged").
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
	for _, params := range []*HousekeepingSettingsParams{nil, {}} {
		require.Equal(t, append(none, (*time.Duration)(nil), (*time.Duration)(nil), (*time.Duration)(nil), (*int)(nil), (*int)(nil),
			(*time.Duration)(nil), (*time.Duration)(nil), (*string)(nil)), params.args())
	}
	settings := (&HousekeepingSettingsParams{HousekeepParams: HousekeepParams{BatchSize: 5}, RoundInterval: new(time.Duration(0))}).args()
	require.Equal(t, new(5), settings[4])
	require.Equal(t, new(time.Duration(0)), settings[6], "a zero round interval is zero")
	require.Nil(t, nullIfZero(time.Duration(0)), "HousekeepIfDue sends NULL for a zero interval")
	require.Equal(t, new(time.Hour), nullIfZero(time.Hour))

	thresholds := "p_retention interval DEFAULT NULL::interval, p_stuck_in_progress_after interval DEFAULT NULL::interval, " +
		"p_stuck_scheduled_after interval DEFAULT NULL::interval, p_recovery_action text DEFAULT NULL::text, " +
		"p_batch_size integer DEFAULT NULL::integer, p_keep_forever boolean DEFAULT false"
	for function, want := range map[string]string{
		"geneva.housekeep": thresholds,
		"geneva.set_housekeeping_settings": thresholds + ", p_round_interval interval DEFAULT NULL::interval" +
			", p_action_retention interval DEFAULT NULL::interval, p_action_retention_floor interval DEFAULT NULL::interval" +
			", p_runaway_executions integer DEFAULT NULL::integer, p_runaway_repeats integer DEFAULT NULL::integer" +
			", p_partition_interval interval DEFAULT NULL::interval, p_move_after interval DEFAULT NULL::interval" +
			", p_archive text DEFAULT NULL::text",
		"geneva.housekeep_if_due": "p_interval interval DEFAULT NULL::interval",
	} {
		var arguments string
		require.NoError(t, conn.QueryRow(ctx, "select pg_get_function_arguments($1::regproc)", function).Scan(&arguments))
		require.Equal(t, want, arguments, function)
	}
}
