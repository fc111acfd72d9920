package worker_test

// A value the worker cannot decode (JSON nested deeper than encoding/json
// reads: 10,000 levels) fails the execution it came with, as that step's
// error, and never the batch of claims it came in (issue 44, item 2). The
// database refuses such values now (geneva._check_json_depth), so the test
// writes them as a database from before could hold them: by hand, as the
// owner, with the engine's permission.

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
	"github.com/geneva-dev/geneva/worker"
)

// tooDeep is JSON that PostgreSQL reads and encoding/json does not.
var tooDeep = strings.Repeat("[", 10001) + strings.Repeat("]", 10001)

func TestUndecodableInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	decide := &runCounter{}
	iterated := &runCounter{}
	poisoned := worker.NewWorkflow("Poisoned", nil).
		Step("decide", decide.step, &worker.StepOpts{Await: &worker.Await{Event: "data", Timeout: time.Hour}}).
		Step("done", ok, nil)
	resumed := worker.NewWorkflow("Resumed", nil).
		ResumableStep("iterate", func(ctx context.Context, it *worker.Iteration) error {
			return iterated.step(ctx, it.Step)
		}, nil)
	for _, wf := range []*worker.Workflow{poisoned, resumed} {
		definition, err := wf.Definition()
		require.NoError(t, err)
		require.NoError(t, protocol.New(b.workerPool).DefineWorkflow(b.ctx, wf.Type(), definition))
	}

	// One transaction, so that every step is due at once and claimed in one
	// batch: four workflows get their event, the first a poisoned one (the
	// oldest, consumed first); a resumable step gets a poisoned cursor.
	const workflows = 4
	var ids []int64
	var cursorID int64
	require.NoError(t, pgx.BeginFunc(b.ctx, b.pool, func(tx pgx.Tx) error {
		client := goclient.New(tx)
		for i := range workflows {
			id, err := client.CreateWorkflow(b.ctx, "Poisoned", "User", string(rune('a'+i)), nil)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		for _, statement := range []string{
			"select set_config('geneva.sending', 'on', true)",
			`insert into geneva.events (workflow_id, name, payload, sent_at, sent_by)
			 values (` + strconv.FormatInt(ids[0], 10) + `, 'data', '` + tooDeep + `', geneva.now(), session_user)`,
			"select set_config('geneva.sending', '', true)",
		} {
			if _, err := tx.Exec(b.ctx, statement); err != nil {
				return err
			}
		}
		for _, id := range ids {
			if _, err := client.SendEvent(b.ctx, id, "data", map[string]bool{"ok": true}); err != nil {
				return err
			}
		}
		var err error
		if cursorID, err = client.CreateWorkflow(b.ctx, "Resumed", "User", "r", nil); err != nil {
			return err
		}
		_, err = tx.Exec(b.ctx, "update geneva.step_executions set cursor = $1::jsonb where workflow_id = $2", tooDeep, cursorID)
		return err
	}))

	b.startBatching(t, &worker.Config{Workflows: []*worker.Workflow{poisoned, resumed}, CompleteBatchSize: 64},
		func(w *worker.Worker) { worker.SetClaimWindow(w, time.Minute, 100*time.Millisecond) })

	for _, id := range ids[1:] {
		b.waitState(t, id, goclient.StateFinished)
	}
	for _, id := range []int64{ids[0], cursorID} {
		b.waitState(t, id, goclient.StatePaused) // (no policy: an error pauses)
		// (read here without the cursor, which goclient could not decode)
		var (
			n            int
			state, class string
			classes      []string
			message      string
		)
		require.NoError(t, b.pool.QueryRow(b.ctx, `select count(*) over (), state, error_class_name, error_classes, error_message
			from geneva.step_executions where workflow_id = $1`, id).Scan(&n, &state, &class, &classes, &message))
		require.Equal(t, 1, n)
		require.Equal(t, "failed", state)
		require.Equal(t, "geneva.undecodable_input", class)
		require.True(t, slices.Contains(classes, "*worker.UndecodableInputError"), "%v", classes)
		require.Contains(t, message, "exceeded max depth")
	}
	executions, _ := decide.count()
	require.Equal(t, workflows-1, executions, "the poisoned step never ran; the others of its batch did")
	executions, _ = iterated.count()
	require.Zero(t, executions)
	require.Zero(t, b.unfinishedJobs(t))
}

// A batch of claims whose result is cut short once the claim committed (the
// connection drops while the rows come) gives back the executions it read,
// which no step would run: they run again at once, not after housekeeping's
// stuck threshold (an hour by default).
func TestClaimCutShortIsGivenBack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := &runCounter{}
	wf := worker.NewWorkflow("CutShort", nil).Step("a", a.step, nil)
	definition, err := wf.Definition()
	require.NoError(t, err)
	require.NoError(t, protocol.New(b.workerPool).DefineWorkflow(b.ctx, "CutShort", definition))
	const workflows = 3
	var ids []int64
	require.NoError(t, pgx.BeginFunc(b.ctx, b.pool, func(tx pgx.Tx) error {
		for i := range workflows {
			id, err := goclient.New(tx).CreateWorkflow(b.ctx, "CutShort", "User", strconv.Itoa(i), nil)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	}))

	cut := &cutShortDB{}
	b.startBatching(t, &worker.Config{Workflows: []*worker.Workflow{wf}, CompleteBatchSize: 64}, func(w *worker.Worker) {
		worker.SetClaimWindow(w, time.Minute, 100*time.Millisecond)
		worker.WrapClaimDB(w, func(db worker.DB) worker.DB { cut.DB = db; return cut })
	})
	for _, id := range ids {
		b.waitState(t, id, goclient.StateFinished)
	}
	require.EqualValues(t, 1, cut.cut.Load())
	given := 0
	for _, id := range ids {
		history := b.history(t, id)
		if len(history) == 2 {
			// the one claimed in the batch cut short, given back
			require.Equal(t, goclient.OutcomeRecovered, *history[0].Outcome)
			require.Equal(t, "interrupted", history[0].Metadata["recovery_reason"])
			given++
		}
		require.Equal(t, goclient.OutcomeSuccess, *history[len(history)-1].Outcome)
	}
	require.NotZero(t, given)
	executions, runs := a.count()
	require.Equal(t, workflows, executions)
	require.Equal(t, workflows, runs, "no step ran twice")
}

// cutShortDB reads the first geneva.start_steps result it sees to its end,
// then reports the connection lost: the claim committed, and its rows were
// read, but never handed over.
type cutShortDB struct {
	worker.DB
	cut atomic.Int32
}

func (c *cutShortDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := c.DB.Query(ctx, sql, args...)
	if err != nil || !strings.Contains(sql, "geneva.start_steps(") || !c.cut.CompareAndSwap(0, 1) {
		return rows, err
	}
	return &cutShortRows{Rows: rows}, nil
}

type cutShortRows struct{ pgx.Rows }

func (r *cutShortRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return fmt.Errorf("test: the connection dropped after the rows: %w", io.ErrUnexpectedEOF)
}
