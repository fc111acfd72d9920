package protocol

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/internal/vocabtest"
)

// SQL owns the vocabulary; this test pins the protocol's signals and
// preconditions, as the package's source declares them, to what the
// functions accept (goclient's vocabulary test does the same for the states,
// outcomes and requested actions).
func TestVocabularyMatchesSQL(t *testing.T) {
	ctx := context.Background()
	conn := dbtest.NewConn(t, dbtest.NewConfig(t))
	query := func(sql string, args ...any) string {
		t.Helper()
		var s string
		require.NoError(t, conn.QueryRow(ctx, sql, args...).Scan(&s))
		return s
	}

	// signals: what geneva._end_running accepts, the step's rows of the
	// table of effects; Signals lists every constant (the worker checks a
	// step's signal against it)
	signals := vocabtest.Constants(t, ".", "Signal")
	accepted := query(`select string_agg(quote_literal(signal), ', ') from geneva._signal_effects() where cause = 'step'`)
	assert.ElementsMatch(t, vocabtest.Quoted(accepted), signals)
	var listed []string
	for _, s := range Signals {
		listed = append(listed, string(s))
	}
	assert.ElementsMatch(t, signals, listed, "Signals lists every Signal constant, once")

	// preconditions: what geneva.start_steps (and start_step, a batch of
	// one of it) accepts, besides none
	body := query(`select pg_get_functiondef('geneva.start_steps'::regproc)`)
	line := regexp.MustCompile(`p_preconditions\[i\.ord\] not in \(([^)]*)\)`).FindStringSubmatch(body)
	require.NotNil(t, line)
	preconditions := slices.DeleteFunc(vocabtest.Constants(t, ".", "Precondition"),
		func(p string) bool { return p == string(PreconditionNone) })
	assert.ElementsMatch(t, vocabtest.Quoted(line[1]), preconditions)
}
