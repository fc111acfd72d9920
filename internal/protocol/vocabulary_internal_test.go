package protocol

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// SQL owns the vocabulary; this test pins the protocol's signals and
// preconditions to what the functions accept (goclient's vocabulary test
// does the same for the states).

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

	// signals: what geneva._complete_step accepts, the step's rows of the
	// table of effects
	accepted := query(`select string_agg(quote_literal(signal), ', ') from geneva._signal_effects() where cause = 'step'`)
	var signals []string
	for _, s := range Signals {
		signals = append(signals, string(s))
	}
	require.ElementsMatch(t, quoted(accepted), signals)
	require.ElementsMatch(t, Signals, []Signal{SignalSuccess, SignalFinished, SignalReattempt,
		SignalReattemptRewind, SignalSkip, SignalCancel, SignalPause, SignalSuspend}, "Signals lists every constant")

	// preconditions: what geneva.start_step accepts
	body := query(`select pg_get_functiondef('geneva.start_step'::regproc)`)
	line := regexp.MustCompile(`p_precondition not in \(([^)]*)\)`).FindStringSubmatch(body)
	require.NotNil(t, line)
	require.ElementsMatch(t, quoted(line[1]), []string{string(PreconditionCancel), string(PreconditionSkip),
		string(PreconditionHeroMissing)})
}
