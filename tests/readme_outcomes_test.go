package tests

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// effectKey names a row of geneva._signal_effects().
type effectKey struct{ Cause, Signal string }

// readmeOutcomeRows maps the first cell of each row of docs/sql-api.md's outcome
// table to the row of geneva._signal_effects() it describes.
var readmeOutcomeRows = map[string]effectKey{
	"step returned normally (`success`)": {"step", "success"},
	"`finished`":                         {"step", "finished"},
	"`reattempt` (wait)":                 {"step", "reattempt"},
	"`reattempt_rewind` (wait)":          {"step", "reattempt_rewind"},
	"`skip`":                             {"step", "skip"},
	"`cancel`":                           {"step", "cancel"},
	"`pause`":                            {"step", "pause"},
	"`suspend`: a resumable step hands over (wait)": {"step", "suspend"},
	"`cancel_if` held":       {"precondition", "cancel"},
	"`skip_if` held":         {"precondition", "skip"},
	"step no longer defined": {"precondition", "step_not_defined"},
	"hero gone":              {"precondition", "hero_missing"},
	"an awaited event did not come in time, `on_timeout` cancel":                               {"timeout", "cancel"},
	"an awaited event did not come in time, `on_timeout` pause":                                {"timeout", "pause"},
	"an awaited event did not come in time, `on_timeout` skip":                                 {"timeout", "skip"},
	"error → pause (default)":                                                                  {"exception", "pause"},
	"error → cancel":                                                                           {"exception", "cancel"},
	"error → skip":                                                                             {"exception", "skip"},
	"error → reattempt":                                                                        {"exception", "reattempt"},
	"error → a handler decides `finished`":                                                     {"exception", "finished"},
	"reattempts exhausted → `terminal_action` pause (default)":                                 {"exhausted", "pause"},
	"reattempts exhausted → `terminal_action` cancel":                                          {"exhausted", "cancel"},
	"reattempts exhausted → `terminal_action` skip":                                            {"exhausted", "skip"},
	"worker shut down while the step ran":                                                      {"worker", "interrupt"},
	"stuck, housekeeping's `reattempt` (default)":                                              {"housekeeping", "reattempt"},
	"stuck, housekeeping's `cancel`":                                                           {"housekeeping", "cancel"},
	"operator cancel":                                                                          {"operator", "cancel"},
	"an event of the type's `cancel_on` (at once, or at the running step's end)":               {"event", "cancel"},
	"operator skip":                                                                            {"operator", "skip"},
	"a late job or report finds its workflow ended or not performing (a stray execution)":      {"stray", "cancel"},
	"housekeeping repairs an orphan (an active execution its workflow's state does not match)": {"repair", "orphan"},
}

// readmeWorkflowThen is how docs/sql-api.md's "workflow then" column begins for
// each of geneva._advance's moves. (Its skip, an operator's, differs from next
// only for a step no longer defined: the page words both as next.)
var readmeWorkflowThen = map[string]string{
	"next":   "ready, next step scheduled",
	"same":   "ready, same step",
	"finish": "finished",
	"cancel": "canceled",
	"pause":  "paused",
	"none":   "as it was",
}

// TestReadmeOutcomes compares docs/sql-api.md's outcome table with
// geneva._signal_effects(), the one table in SQL of what each signal, policy
// action, precondition and recovery does to an execution and its workflow:
// a row for every row, with the same execution state, outcome and move.
func TestReadmeOutcomes(t *testing.T) {
	t.Parallel()
	b := setup(t)

	readme, err := os.ReadFile("../docs/sql-api.md")
	require.NoError(t, err)
	text := string(readme)
	start := strings.Index(text, "\n| what happened | execution state / outcome | workflow then |\n")
	require.GreaterOrEqual(t, start, 0, "docs/sql-api.md has no outcome table")
	table := text[start+1:]
	table = table[:strings.Index(table, "\n\n")]

	type effect struct{ State, Outcome, Move string }
	stateOutcome := regexp.MustCompile("^([a-z_]+) / `([a-z_]+)`$")
	readmeRows := map[effectKey]effect{}
	lines := strings.Split(table, "\n")[2:] // after the header and its rule
	require.NotEmpty(t, lines)
	for _, line := range lines {
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		require.Len(t, cells, 3, "docs/sql-api.md's outcome table: %q", line)
		what, executed, then := strings.TrimSpace(cells[0]), strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])

		key, ok := readmeOutcomeRows[what]
		require.True(t, ok, "docs/sql-api.md's outcome table has a row this test does not know: %q (add it to readmeOutcomeRows)", what)
		require.NotContains(t, readmeRows, key, "docs/sql-api.md's outcome table describes %v twice", key)
		m := stateOutcome.FindStringSubmatch(executed)
		require.NotNil(t, m, "docs/sql-api.md's outcome table, %q: %q is not \"state / `outcome`\"", what, executed)
		move := ""
		for candidate, phrase := range readmeWorkflowThen {
			if strings.HasPrefix(then, phrase) {
				move = candidate
			}
		}
		require.NotEmpty(t, move, "docs/sql-api.md's outcome table, %q: %q names no move of the workflow", what, then)
		readmeRows[key] = effect{m[1], m[2], move}
	}

	rows, err := b.conn.Query(b.ctx, `select cause, signal, execution_state, outcome, workflow_move from geneva._signal_effects()`)
	require.NoError(t, err)
	sqlRows := map[effectKey]effect{}
	var key effectKey
	var e effect
	_, err = pgx.ForEachRow(rows, []any{&key.Cause, &key.Signal, &e.State, &e.Outcome, &e.Move}, func() error {
		require.NotContains(t, sqlRows, key, "geneva._signal_effects() has %v twice", key)
		if e.Move == "skip" {
			e.Move = "next"
		}
		sqlRows[key] = e
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, sqlRows)

	for key, want := range sqlRows {
		got, ok := readmeRows[key]
		if assert.True(t, ok, "docs/sql-api.md's outcome table has no row for geneva._signal_effects()'s %v", key) {
			assert.Equal(t, want, got, "docs/sql-api.md's outcome table differs from geneva._signal_effects() for %v", key)
		}
	}
	for key := range readmeRows {
		assert.Contains(t, sqlRows, key, "docs/sql-api.md's outcome table has a row geneva._signal_effects() does not")
	}
}
