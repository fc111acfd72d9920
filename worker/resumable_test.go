package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
	"github.com/geneva-dev/geneva/worker/workertest"
)

// visits records what a resumable step visited, in order.
type visits[T comparable] struct {
	mu  sync.Mutex
	all []T
}

func (v *visits[T]) add(item T) {
	v.mu.Lock()
	v.all = append(v.all, item)
	v.mu.Unlock()
}

func (v *visits[T]) list() []T {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.all)
}

// resumableHarness is a harness on a new database whose clock starts at t0
// (so that budgets by time are spent only when the test moves it).
func resumableHarness(t *testing.T, workflows ...*worker.Workflow) *workertest.Harness {
	t.Helper()
	h := workertest.New(t, dbtest.NewConn(t, dbtest.NewConfig(t)), &worker.Config{Workflows: workflows})
	h.SetNow(context.Background(), time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
	return h
}

// chain lists "outcome cursor" for each execution of the step, checking that
// each one after the first continues the one before.
func chain(t *testing.T, h *workertest.Harness, id int64) []string {
	t.Helper()
	var out []string
	var previous *goclient.StepExecution
	for _, e := range h.History(context.Background(), id) {
		if previous != nil && previous.StepName == e.StepName && len(previous.Cursor) > 0 && e.ContinuesFromID != nil {
			require.Equal(t, previous.ID, *e.ContinuesFromID, "execution %d continues the one before", e.ID)
		}
		outcome := string(e.State)
		if e.Outcome != nil {
			outcome = string(*e.Outcome)
		}
		out = append(out, fmt.Sprintf("%s %s %s", e.StepName, outcome, orNone(e.Cursor)))
		previous = e
	}
	return out
}

func orNone(raw []byte) string {
	if len(raw) == 0 {
		return "-"
	}
	return string(raw)
}

func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// subscribersTable creates subscribers(id, email, created_at, notified_at)
// with ids 1..n, created a minute apart.
func subscribersTable(t *testing.T, conn *pgx.Conn, n int) {
	t.Helper()
	_, err := conn.Exec(context.Background(), `
		create table subscribers (id bigint primary key, email text not null, created_at timestamptz not null, notified_at timestamptz);
		insert into subscribers select g, 'user' || g || '@example.com', timestamptz '2024-01-01' + g * interval '1 minute', null
		from generate_series(1, `+fmt.Sprint(n)+`) g`)
	require.NoError(t, err)
}

type subscriber struct {
	ID         int64      `db:"id"`
	Email      string     `db:"email"`
	CreatedAt  time.Time  `db:"created_at"`
	NotifiedAt *time.Time `db:"notified_at"`
}

func TestResumableSeedExamples(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("ManualCursorOverRecords", func(t *testing.T) {
		t.Parallel()
		var h *workertest.Harness
		var seen visits[int64]
		wf := worker.NewWorkflow("Bulk", nil).
			Step("prepare", ok, nil).
			ResumableStep("send_notifications", func(ctx context.Context, it *worker.Iteration) error {
				var last int64
				if _, err := it.Cursor(&last); err != nil {
					return err
				}
				rows, err := h.Conn().Query(ctx, "select id from subscribers where id > $1 order by id", last)
				if err != nil {
					return err
				}
				ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
				if err != nil {
					return err
				}
				for _, id := range ids {
					seen.add(id)
					if err := it.Set(ctx, id); err != nil {
						return err
					}
				}
				return nil
			}, &worker.ResumableOpts{MaxIterations: 10}).
			Step("finalize", ok, nil)
		h = resumableHarness(t, wf)
		subscribersTable(t, h.Conn(), 25)
		id := h.Create(ctx, "Bulk", "Campaign", "1")
		h.PerformNextStep(ctx, id)

		h.PerformNextStep(ctx, id)
		h.AssertStepHasSuccessor(ctx, id, "send_notifications")
		h.AssertCursor(ctx, id, 10)

		h.Speedrun(ctx, id, nil)
		h.AssertWorkflowState(ctx, id, goclient.StateFinished)
		require.Equal(t, []string{
			"prepare success -",
			"send_notifications suspended 10",
			"send_notifications suspended 20",
			"send_notifications success 25",
			"finalize success -",
		}, chain(t, h, id))
		require.Equal(t, toInt64(seq(1, 25)), seen.list(), "every record once, in order")
	})

	t.Run("IterateQueryOverRecords", func(t *testing.T) {
		t.Parallel()
		var h *workertest.Harness
		var seen visits[string]
		wf := worker.NewWorkflow("Records", nil).
			ResumableStep("send", func(ctx context.Context, it *worker.Iteration) error {
				return worker.IterateQuery(ctx, it, h.Conn(),
					"select id, email, created_at, notified_at from subscribers where id % $1 = 0", []any{2},
					&worker.QueryOpts{BatchSize: 4},
					func(ctx context.Context, s subscriber) error {
						seen.add(s.Email)
						return nil
					})
			}, &worker.ResumableOpts{MaxIterations: 5})
		h = resumableHarness(t, wf)
		subscribersTable(t, h.Conn(), 23)
		id := h.Create(ctx, "Records", "List", "1")

		last := h.SpeedrunCurrentStep(ctx, id, 10)

		require.Equal(t, goclient.ExecutionCompleted, last.State)
		require.Equal(t, []string{"send suspended 10", "send suspended 20", "send success 22"}, chain(t, h, id))
		var want []string
		for i := 2; i <= 22; i += 2 {
			want = append(want, fmt.Sprintf("user%d@example.com", i))
		}
		require.Equal(t, want, seen.list())
	})

	t.Run("IterateQueryWithTimeCursorColumn", func(t *testing.T) {
		t.Parallel()
		var h *workertest.Harness
		var seen visits[int64]
		wf := worker.NewWorkflow("ByTime", nil).
			ResumableStep("send", func(ctx context.Context, it *worker.Iteration) error {
				return worker.IterateQuery(ctx, it, h.Conn(),
					"select id, email, created_at, notified_at from subscribers", nil,
					&worker.QueryOpts{Column: "created_at", BatchSize: 3},
					func(ctx context.Context, s subscriber) error {
						seen.add(s.ID)
						return nil
					})
			}, &worker.ResumableOpts{MaxIterations: 4})
		h = resumableHarness(t, wf)
		subscribersTable(t, h.Conn(), 9)
		id := h.Create(ctx, "ByTime", "List", "1")

		h.PerformNextStep(ctx, id)
		var cursor time.Time
		require.NoError(t, jsonUnmarshal(h.History(ctx, id)[0].Cursor, &cursor))
		require.True(t, cursor.Equal(time.Date(2024, 1, 1, 0, 4, 0, 0, time.UTC)), "the cursor is the 4th row's created_at, got %s", cursor)
		h.SpeedrunCurrentStep(ctx, id, 10)

		require.Equal(t, toInt64(seq(1, 9)), seen.list())
	})

	t.Run("IterateQueryBatchesForSetBasedWork", func(t *testing.T) {
		t.Parallel()
		var h *workertest.Harness
		var batches visits[int]
		wf := worker.NewWorkflow("Subrelations", nil).
			ResumableStep("mark", func(ctx context.Context, it *worker.Iteration) error {
				return worker.IterateQueryBatches(ctx, it, h.Conn(),
					"select id, email, created_at, notified_at from subscribers", nil, &worker.QueryOpts{BatchSize: 7},
					func(ctx context.Context, batch []subscriber) error {
						ids := make([]int64, len(batch))
						for i, s := range batch {
							ids[i] = s.ID
						}
						batches.add(len(batch))
						_, err := h.Conn().Exec(ctx, "update subscribers set notified_at = now() where id = any($1)", ids)
						return err
					})
			}, &worker.ResumableOpts{MaxIterations: 2})
		h = resumableHarness(t, wf)
		subscribersTable(t, h.Conn(), 30)
		id := h.Create(ctx, "Subrelations", "List", "1")

		h.SpeedrunCurrentStep(ctx, id, 10)

		require.Equal(t, []int{7, 7, 7, 7, 2}, batches.list())
		require.Equal(t, []string{"mark suspended 14", "mark suspended 28", "mark success 30"}, chain(t, h, id))
		var left int
		require.NoError(t, h.Conn().QueryRow(ctx, "select count(*) from subscribers where notified_at is null").Scan(&left))
		require.Zero(t, left)
	})

	t.Run("IterateOverSlice", func(t *testing.T) {
		t.Parallel()
		items := []string{"a", "b", "c", "d", "e"}
		var seen visits[string]
		resumed := visits[bool]{}
		wf := worker.NewWorkflow("Slice", nil).
			ResumableStep("", func(ctx context.Context, it *worker.Iteration) error {
				resumed.add(it.Resumed())
				return worker.Iterate(ctx, it, items, func(ctx context.Context, item string) error {
					seen.add(item)
					return nil
				})
			}, &worker.ResumableOpts{MaxIterations: 2})
		h := resumableHarness(t, wf)
		id := h.Create(ctx, "Slice", "List", "1")

		h.SpeedrunCurrentStep(ctx, id, 10)

		require.Equal(t, items, seen.list())
		require.Equal(t, []string{"step_1 suspended 2", "step_1 suspended 4", "step_1 success 5"}, chain(t, h, id), "an anonymous resumable step")
		require.Equal(t, []bool{false, true, true}, resumed.list())
	})

	t.Run("OpaquePageTokens", func(t *testing.T) {
		t.Parallel()
		// a paginated API: token -> (messages, next token); page "p2" is empty
		pages := map[string]struct {
			messages []string
			next     string
		}{
			"":   {[]string{"m1", "m2"}, "p1"},
			"p1": {[]string{"m3"}, "p2"},
			"p2": {nil, "p3"},
			"p3": {[]string{"m4", "m5"}, ""},
		}
		var seen visits[string]
		wf := worker.NewWorkflow("Gmail", nil).
			ResumableStep("sync", func(ctx context.Context, it *worker.Iteration) error {
				var token string
				if _, err := it.Cursor(&token); err != nil {
					return err
				}
				for {
					page := pages[token]
					if len(page.messages) == 0 && page.next != "" {
						return it.SkipTo(ctx, page.next, 0) // nothing here: a successor takes the next page
					}
					for _, m := range page.messages {
						seen.add(m)
					}
					if page.next == "" {
						return nil
					}
					token = page.next
					if err := it.Set(ctx, token); err != nil {
						return err
					}
				}
			}, nil)
		h := resumableHarness(t, wf)
		id := h.Create(ctx, "Gmail", "Mailbox", "1")

		h.SpeedrunCurrentStep(ctx, id, 10)

		require.Equal(t, []string{"m1", "m2", "m3", "m4", "m5"}, seen.list())
		require.Equal(t, []string{`sync suspended "p3"`, `sync success "p3"`}, chain(t, h, id))
	})

	t.Run("AdvanceOnIntegers", func(t *testing.T) {
		t.Parallel()
		var seen visits[int]
		wf := worker.NewWorkflow("Batches", nil).
			ResumableStep("process_batches", func(ctx context.Context, it *worker.Iteration) error {
				var current int
				if _, err := it.Cursor(&current); err != nil {
					return err
				}
				for ; current < 10; current++ {
					seen.add(current)
					if err := it.Advance(ctx); err != nil {
						return err
					}
				}
				return nil
			}, &worker.ResumableOpts{MaxIterations: 4})
		h := resumableHarness(t, wf)
		id := h.Create(ctx, "Batches", "Job", "1")

		h.SpeedrunCurrentStep(ctx, id, 10)

		require.Equal(t, seq(0, 9), seen.list())
		require.Equal(t, []string{"process_batches suspended 4", "process_batches suspended 8", "process_batches success 10"}, chain(t, h, id))
	})

	t.Run("AdvanceRefusesNonIntegerCursor", func(t *testing.T) {
		t.Parallel()
		var advanceErr error
		wf := worker.NewWorkflow("BadAdvance", nil).
			ResumableStep("a", func(ctx context.Context, it *worker.Iteration) error {
				if err := it.Set(ctx, "page-2"); err != nil {
					return err
				}
				advanceErr = it.Advance(ctx)
				return nil
			}, nil)
		h := resumableHarness(t, wf)
		id := h.Create(ctx, "BadAdvance", "Job", "1")

		h.PerformNextStep(ctx, id)

		require.ErrorContains(t, advanceErr, "integer cursor")
	})

	t.Run("DatesAsCursors", func(t *testing.T) {
		t.Parallel()
		var seen visits[string]
		end := time.Date(2024, 1, 10, 0, 0, 0, 0, time.UTC)
		wf := worker.NewWorkflow("Days", nil).
			ResumableStep("process_days", func(ctx context.Context, it *worker.Iteration) error {
				current := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
				if _, err := it.Cursor(&current); err != nil {
					return err
				}
				for !current.After(end) {
					seen.add(current.Format(time.DateOnly))
					current = current.AddDate(0, 0, 1)
					if err := it.Set(ctx, current); err != nil {
						return err
					}
				}
				return nil
			}, &worker.ResumableOpts{MaxIterations: 3})
		h := resumableHarness(t, wf)
		id := h.Create(ctx, "Days", "Report", "1")

		h.PerformNextStep(ctx, id)
		h.AssertCursor(ctx, id, time.Date(2024, 1, 4, 0, 0, 0, 0, time.UTC))
		h.SpeedrunCurrentStep(ctx, id, 10)

		var want []string
		for d := 1; d <= 10; d++ {
			want = append(want, fmt.Sprintf("2024-01-%02d", d))
		}
		require.Equal(t, want, seen.list())
	})

	t.Run("RateLimitedSkipToWithWait", func(t *testing.T) {
		t.Parallel()
		var seen visits[int]
		limited := true
		wf := worker.NewWorkflow("ExternalAPI", nil).
			ResumableStep("sync", func(ctx context.Context, it *worker.Iteration) error {
				page := 1
				if _, err := it.Cursor(&page); err != nil {
					return err
				}
				for ; page <= 5; page++ {
					if page == 3 && limited {
						limited = false
						return it.SkipTo(ctx, page, 30*time.Second) // retry after the limit
					}
					seen.add(page)
					if err := it.Set(ctx, page+1); err != nil {
						return err
					}
				}
				return nil
			}, nil)
		h := resumableHarness(t, wf)
		id := h.Create(ctx, "ExternalAPI", "Account", "1")
		before := h.Now(ctx)

		h.PerformNextStep(ctx, id)

		h.AssertStepHasSuccessor(ctx, id, "sync")
		h.AssertCursor(ctx, id, 3)
		history := h.History(ctx, id)
		require.Equal(t, before.Add(30*time.Second), history[1].ScheduledFor, "the successor waits out the limit")
		h.SpeedrunCurrentStep(ctx, id, 10)
		require.Equal(t, seq(1, 5), seen.list())
	})
}

func TestResumableInterruptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	items := make([]int, 20)
	for i := range items {
		items[i] = i
	}

	t.Run("TimeBudgetWithFakeClock", func(t *testing.T) {
		t.Parallel()
		var h *workertest.Harness
		var seen visits[int]
		wf := worker.NewWorkflow("Timed", nil).
			ResumableStep("work", func(ctx context.Context, it *worker.Iteration) error {
				return worker.Iterate(ctx, it, items, func(ctx context.Context, item int) error {
					seen.add(item)
					h.Advance(ctx, 20*time.Second) // each item takes 20 seconds of the engine's clock
					return nil
				})
			}, &worker.ResumableOpts{MaxRuntime: time.Minute, CheckpointInterval: time.Hour})
		h = resumableHarness(t, wf)
		id := h.Create(ctx, "Timed", "Job", "1")

		h.PerformNextStep(ctx, id)

		h.AssertStepHasSuccessor(ctx, id, "work")
		h.AssertCursor(ctx, id, 3) // the minute was spent after the third item
		h.SpeedrunCurrentStep(ctx, id, 20)
		require.Equal(t, items, seen.list(), "the successors continue exactly from the cursor")
		require.Len(t, h.History(ctx, id), 7)
	})

	t.Run("IterationBudget", func(t *testing.T) {
		t.Parallel()
		var seen visits[int]
		wf := worker.NewWorkflow("Counted", nil).
			ResumableStep("work", func(ctx context.Context, it *worker.Iteration) error {
				return worker.Iterate(ctx, it, items, func(ctx context.Context, item int) error {
					seen.add(item)
					return nil
				})
			}, &worker.ResumableOpts{MaxIterations: 6, CheckpointInterval: time.Hour})
		h := resumableHarness(t, wf)
		id := h.Create(ctx, "Counted", "Job", "1")

		h.SpeedrunCurrentStep(ctx, id, 10)

		require.Equal(t, items, seen.list())
		require.Equal(t, []string{"work suspended 6", "work suspended 12", "work suspended 18", "work success 20"}, chain(t, h, id))
	})

	for _, operator := range []string{"pause", "cancel"} {
		t.Run("Operator"+operator, func(t *testing.T) {
			t.Parallel()
			var h *workertest.Harness
			var id int64
			var seen visits[int]
			wf := worker.NewWorkflow("Operated", nil).
				ResumableStep("work", func(ctx context.Context, it *worker.Iteration) error {
					return worker.Iterate(ctx, it, items, func(ctx context.Context, item int) error {
						seen.add(item)
						if item == 7 && !slices.Contains(seen.list()[:len(seen.list())-1], 7) {
							var err error
							if operator == "pause" {
								_, err = h.Client().PauseWorkflow(ctx, id)
							} else {
								_, err = h.Client().CancelWorkflow(ctx, id)
							}
							require.NoError(t, err)
						}
						return nil
					})
				}, &worker.ResumableOpts{CheckpointInterval: -1}).
				Step("after", ok, nil)
			h = resumableHarness(t, wf)
			id = h.Create(ctx, "Operated", "Job", "1")

			h.PerformNextStep(ctx, id)

			require.Equal(t, seq(0, 7), seen.list(), "the step stops at the first check after the request")
			h.AssertCursor(ctx, id, 8)
			if operator == "cancel" {
				h.AssertWorkflowState(ctx, id, goclient.StateCanceled)
				require.Equal(t, []string{"work suspended 8", "work canceled_externally 8"}, chain(t, h, id))
				return
			}
			h.AssertWorkflowState(ctx, id, goclient.StatePaused)
			require.Equal(t, []string{"work suspended 8", "work scheduled 8"}, chain(t, h, id), "the successor is kept")
			_, err := h.Client().ResumeWorkflow(ctx, id)
			require.NoError(t, err)
			h.Speedrun(ctx, id, nil)
			h.AssertWorkflowState(ctx, id, goclient.StateFinished)
			require.Equal(t, items, seen.list(), "resumed from the cursor, nothing repeated")
		})
	}

	t.Run("WorkerShutdown", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var seen visits[int]
		started := make(chan struct{})
		var once sync.Once
		many := make([]int, 200)
		for i := range many {
			many[i] = i
		}
		wf := worker.NewWorkflow("Long", nil).
			ResumableStep("work", func(ctx context.Context, it *worker.Iteration) error {
				return worker.Iterate(ctx, it, many, func(ctx context.Context, item int) error {
					seen.add(item)
					if item == 5 {
						once.Do(func() { close(started) })
					}
					time.Sleep(5 * time.Millisecond)
					return nil
				})
			}, nil) // the default interval: the hand-over writes the cursor
		w, err := worker.New(b.pool, &worker.Config{Workflows: []*worker.Workflow{wf}, River: fastRiver()})
		require.NoError(t, err)
		require.NoError(t, w.Start(b.ctx))
		id := b.create(t, "Long")
		<-started

		stopCtx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		require.NoError(t, w.Stop(stopCtx))

		history := b.history(t, id)
		require.Len(t, history, 2)
		require.Equal(t, goclient.OutcomeSuspended, *history[0].Outcome, "handed over, not cut off")
		require.Equal(t, goclient.ExecutionScheduled, history[1].State)
		var cursor int
		require.NoError(t, jsonUnmarshal(history[1].Cursor, &cursor))
		require.Equal(t, seq(0, cursor-1), seen.list(), "the cursor says exactly what was done")

		b.start(t, &worker.Config{Workflows: []*worker.Workflow{wf}})
		b.waitState(t, id, goclient.StateFinished)
		require.Equal(t, many, seen.list(), "the new worker continued from the cursor")
	})

	t.Run("WorkerHardStopGivesBackFromCursor", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var seen visits[int]
		blocked := make(chan struct{})
		var once sync.Once
		wf := worker.NewWorkflow("Stuck", nil).
			ResumableStep("work", func(ctx context.Context, it *worker.Iteration) error {
				return worker.Iterate(ctx, it, items, func(ctx context.Context, item int) error {
					if item == 3 && !it.Resumed() {
						once.Do(func() { close(blocked) })
						<-ctx.Done() // an item that outlasts the grace period
						return ctx.Err()
					}
					seen.add(item)
					return nil
				})
			}, &worker.ResumableOpts{CheckpointInterval: time.Hour})
		w, err := worker.New(b.pool, &worker.Config{Workflows: []*worker.Workflow{wf}, River: fastRiver()})
		require.NoError(t, err)
		require.NoError(t, w.Start(b.ctx))
		id := b.create(t, "Stuck")
		<-blocked

		stopCtx, cancel := context.WithTimeout(b.ctx, 100*time.Millisecond)
		defer cancel()
		require.NoError(t, w.Stop(stopCtx))

		history := b.history(t, id)
		require.Equal(t, []string{"work: recovered", "work: scheduled"}, b.outcomes(t, id), "given back (interrupt_step)")
		require.JSONEq(t, "3", string(history[0].Cursor), "the cursor not yet written went with it")
		require.JSONEq(t, "3", string(history[1].Cursor))

		b.start(t, &worker.Config{Workflows: []*worker.Workflow{wf}})
		b.waitState(t, id, goclient.StateFinished)
		require.Equal(t, items, seen.list(), "items 0-2 were not repeated")
	})
}

func TestResumablePaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	items := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}

	t.Run("ErrorPauseThenResumeContinuesFromCursor", func(t *testing.T) {
		t.Parallel()
		var seen visits[int]
		failed := false
		wf := worker.NewWorkflow("Import", nil).
			ResumableStep("import", func(ctx context.Context, it *worker.Iteration) error {
				return worker.Iterate(ctx, it, items, func(ctx context.Context, item int) error {
					if item == 7 && !failed {
						failed = true
						return errors.New("row 7 is malformed")
					}
					seen.add(item)
					return nil
				})
			}, nil) // the default interval: the cursor is written with the error
		h := resumableHarness(t, wf)
		id := h.Create(ctx, "Import", "File", "1")

		h.PerformNextStep(ctx, id)
		h.AssertWorkflowState(ctx, id, goclient.StatePaused)
		h.AssertStepOutcome(ctx, id, "import", "paused_by_exception")
		h.AssertCursor(ctx, id, 7)

		_, err := h.Client().ResumeWorkflow(ctx, id)
		require.NoError(t, err)
		h.Speedrun(ctx, id, nil)

		h.AssertWorkflowState(ctx, id, goclient.StateFinished)
		require.Equal(t, items, seen.list(), "the import did not start over")
	})

	t.Run("ReattemptKeepsCursor", func(t *testing.T) {
		t.Parallel()
		var seen visits[int]
		reattempted := false
		wf := worker.NewWorkflow("Reattempting", nil).
			ResumableStep("work", func(ctx context.Context, it *worker.Iteration) error {
				return worker.Iterate(ctx, it, items, func(ctx context.Context, item int) error {
					if item == 4 && !reattempted {
						reattempted = true
						return worker.Reattempt(time.Minute)
					}
					seen.add(item)
					return nil
				})
			}, nil)
		h := resumableHarness(t, wf)
		id := h.Create(ctx, "Reattempting", "Job", "1")

		h.SpeedrunCurrentStep(ctx, id, 10)

		require.Equal(t, items, seen.list())
		require.Equal(t, []string{"work reattempted 4", "work success 10"}, chain(t, h, id))
	})

	t.Run("RewindStartsFromNothing", func(t *testing.T) {
		t.Parallel()
		var seen visits[int]
		var resumed visits[bool]
		rewound := false
		wf := worker.NewWorkflow("Rewinding", nil).
			ResumableStep("work", func(ctx context.Context, it *worker.Iteration) error {
				resumed.add(it.Resumed())
				return worker.Iterate(ctx, it, items, func(ctx context.Context, item int) error {
					if item == 5 && !rewound {
						rewound = true
						return worker.ReattemptRewind(0)
					}
					seen.add(item)
					return nil
				})
			}, nil)
		h := resumableHarness(t, wf)
		id := h.Create(ctx, "Rewinding", "Job", "1")

		h.SpeedrunCurrentStep(ctx, id, 10)

		require.Equal(t, append(seq(0, 4), items...), seen.list(), "the second run starts from the first item")
		require.Equal(t, []bool{false, false}, resumed.list())
		require.Equal(t, []string{"work reattempted 5", "work success 10"}, chain(t, h, id))
		require.Nil(t, h.History(ctx, id)[1].ContinuesFromID)
	})

	t.Run("CrashBetweenCursorsRepeatsOnlyWhatFollowsTheLast", func(t *testing.T) {
		t.Parallel()
		conf := dbtest.NewConfig(t)
		var seen visits[int]
		crashed := false
		many := seq(0, 39)
		wf := worker.NewWorkflow("Crashing", nil).
			ResumableStep("work", func(ctx context.Context, it *worker.Iteration) error {
				return worker.Iterate(ctx, it, many, func(ctx context.Context, item int) error {
					seen.add(item)
					if item == 25 && !crashed {
						crashed = true
						runtime.Goexit() // the process dies mid-item: nothing more is written
					}
					time.Sleep(2 * time.Millisecond)
					return nil
				})
			}, &worker.ResumableOpts{CheckpointInterval: 15 * time.Millisecond}) // a write every ~6 items
		h := workertest.New(t, dbtest.NewConn(t, conf), &worker.Config{Workflows: []*worker.Workflow{wf}})
		id := h.Create(ctx, "Crashing", "Job", "1")
		execution := h.History(ctx, id)[0]

		// the dying worker, on its own connection
		runner, err := worker.NewRunner(&worker.Config{Workflows: []*worker.Workflow{wf}})
		require.NoError(t, err)
		crashConn := dbtest.NewConn(t, conf)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = runner.Perform(ctx, crashConn, execution.ID)
		}()
		<-done
		var written int
		require.NoError(t, jsonUnmarshal(h.History(ctx, id)[0].Cursor, &written))
		require.Greater(t, written, 0, "some cursor was written")
		require.LessOrEqual(t, written, 25)

		// housekeeping finds it silent for over an hour and recovers it
		h.SetNow(ctx, time.Now().Add(2*time.Hour))
		_, err = h.Client().Housekeep(ctx, nil)
		require.NoError(t, err)
		cursor := fmt.Sprint(written)
		require.Equal(t, []string{"work recovered " + cursor, "work scheduled " + cursor}, chain(t, h, id))
		h.SpeedrunCurrentStep(ctx, id, 10)

		require.Equal(t, append(seq(0, 25), seq(written, 39)...), seen.list(),
			"only the items after the last written cursor (%d) are repeated", written)
	})
}

func TestResumableOptions(t *testing.T) {
	t.Parallel()

	t.Run("HasEveryStepOption", func(t *testing.T) {
		t.Parallel()
		stepFields := reflectFields(worker.StepOpts{})
		resumableFields := reflectFields(worker.ResumableOpts{})
		for name, typ := range stepFields {
			if name == "HTTP" {
				continue // an HTTP step's endpoint resumes itself (a cursor in its reply)
			}
			require.Equal(t, typ, resumableFields[name], "ResumableOpts lacks StepOpts.%s", name)
		}
	})

	// (with an interval of an hour, so that the count does not depend on
	// the machine's speed)
	t.Run("TightLoopWritesTheCursorOncePerInterval", func(t *testing.T) {
		t.Parallel()
		conf := dbtest.NewConfig(t)
		connConfig, err := pgx.ParseConfig(conf.URL())
		require.NoError(t, err)
		tracer := &checkpointCounter{}
		connConfig.Tracer = tracer
		conn, err := pgx.ConnectConfig(context.Background(), connConfig)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close(context.Background()) })
		const n = 100000
		wf := worker.NewWorkflow("Tight", nil).
			ResumableStep("loop", func(ctx context.Context, it *worker.Iteration) error {
				for i := 1; i <= n; i++ {
					if err := it.Set(ctx, i); err != nil {
						return err
					}
				}
				return nil
			}, &worker.ResumableOpts{CheckpointInterval: time.Hour})
		h := workertest.New(t, conn, &worker.Config{Workflows: []*worker.Workflow{wf}})
		id := h.Create(context.Background(), "Tight", "Job", "1")

		h.PerformNextStep(context.Background(), id)

		h.AssertCursor(context.Background(), id, n)
		require.Equal(t, int64(2), tracer.n.Load(), "two writes for %d Sets: the first Set's (it asks at once) and the end's", n)
	})

	t.Run("Validates", func(t *testing.T) {
		t.Parallel()
		noop := func(ctx context.Context, it *worker.Iteration) error { return nil }
		for _, opts := range []*worker.ResumableOpts{{MaxIterations: -1}, {MaxRuntime: -time.Second}, {CheckpointInterval: -2}} {
			require.Error(t, worker.NewWorkflow("W", nil).ResumableStep("a", noop, opts).Validate())
		}
		require.Error(t, worker.NewWorkflow("W", nil).ResumableStep("a", nil, nil).Validate())
		wf := worker.NewWorkflow("W", nil).Step("b", ok, nil).ResumableStep("a", noop, &worker.ResumableOpts{Before: "b"})
		require.NoError(t, wf.Validate())
		definition, err := wf.Definition()
		require.NoError(t, err)
		require.JSONEq(t, `{"steps": [{"name": "a"}, {"name": "b"}]}`, string(definition), "placed before b")
	})
}

func toInt64(ints []int) []int64 {
	out := make([]int64, len(ints))
	for i, n := range ints {
		out[i] = int64(n)
	}
	return out
}

func jsonUnmarshal(raw []byte, v any) error { return json.Unmarshal(raw, v) }

// reflectFields maps a struct's field names to their types.
func reflectFields(v any) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	typ := reflect.TypeOf(v)
	for i := 0; i < typ.NumField(); i++ {
		fields[typ.Field(i).Name] = typ.Field(i).Type
	}
	return fields
}

// checkpointCounter counts the geneva.checkpoint_step calls on a connection.
type checkpointCounter struct{ n atomic.Int64 }

func (c *checkpointCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if strings.Contains(data.SQL, "checkpoint_step") {
		c.n.Add(1)
	}
	return ctx
}

func (c *checkpointCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestResumableCheckpointAsks: a step that only calls Checkpoint (no cursor
// yet, or one it does not change) learns of an operator's pause or cancel:
// the first Checkpoint of an execution asks the database (whatever
// CheckpointInterval says), and so do the later ones, once per interval.
func TestResumableCheckpointAsks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const bound = 500 // Checkpoint calls before the step gives up waiting

	cases := []struct {
		name     string
		action   string        // the operator's: pause or cancel
		interval time.Duration // CheckpointInterval
		at       int           // the Checkpoint calls made before the request
		handOver bool          // the first execution hands over cursor 41: the request reaches its successor
		stopsAt  int           // the call that stops the step; 0: any call after the request
	}{
		{name: "PauseBeforeTheFirstCheckpoint", action: "pause", interval: time.Hour, stopsAt: 1},
		{name: "CancelBeforeTheFirstCheckpoint", action: "cancel", interval: time.Hour, stopsAt: 1},
		{name: "PauseWithAnUnchangedCursor", action: "pause", interval: time.Hour, handOver: true, stopsAt: 1},
		{name: "PauseBetweenThrottledCheckpoints", action: "pause", interval: 20 * time.Millisecond, at: 1},
		{name: "CancelBetweenThrottledCheckpoints", action: "cancel", interval: 20 * time.Millisecond, at: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			conf := dbtest.NewConfig(t)
			operator := dbtest.NewConnAs(t, conf, dbtest.Operator)
			observer := dbtest.NewConn(t, conf)
			var (
				id       int64
				runs     atomic.Int64
				calls    atomic.Int64
				stopped  atomic.Pointer[worker.StopError]
				resumeAt visits[string] // what each later run found
			)
			wf := worker.NewWorkflow("Watching", nil).
				ResumableStep("watch", func(ctx context.Context, it *worker.Iteration) error {
					run := runs.Add(1)
					if c.handOver && run == 1 {
						return it.SkipTo(ctx, 41, 0)
					}
					if run > 1 && (!c.handOver || run != 2) {
						var cursor int
						found, err := it.Cursor(&cursor)
						resumeAt.add(fmt.Sprintf("resumed=%v cursor=%v,%d", it.Resumed(), found, cursor))
						return err
					}
					for n := 0; n < bound; n++ {
						if n == c.at {
							_, err := operator.Exec(ctx, "select geneva."+c.action+"_workflow($1)", id)
							require.NoError(t, err)
						}
						calls.Add(1)
						if err := it.Checkpoint(ctx); err != nil {
							var stop *worker.StopError
							if errors.As(err, &stop) {
								stopped.Store(stop)
							}
							return err
						}
						time.Sleep(2 * time.Millisecond)
					}
					return nil
				}, &worker.ResumableOpts{CheckpointInterval: c.interval}).
				Step("after", ok, nil)
			h := workertest.New(t, dbtest.NewConn(t, conf), &worker.Config{Workflows: []*worker.Workflow{wf}})
			id = h.Create(ctx, "Watching", "Job", "1")
			if c.handOver {
				h.PerformNextStep(ctx, id)
			}

			h.PerformNextStep(ctx, id)

			require.NotNil(t, stopped.Load(), "the step learnt of the %s at a checkpoint (%d calls)", c.action, calls.Load())
			require.Equal(t, worker.StopRequested, stopped.Load().Reason)
			if c.stopsAt > 0 {
				require.EqualValues(t, c.stopsAt, calls.Load(), "the first Checkpoint asked")
			}
			var state string
			var requested *string
			require.NoError(t, observer.QueryRow(ctx,
				"select state, requested_action from geneva.workflows where id = $1", id).Scan(&state, &requested))
			want := map[string]string{"pause": "paused", "cancel": "canceled"}[c.action]
			require.Equal(t, want, state)
			require.Nil(t, requested)

			rows, err := observer.Query(ctx, `
				select step_name || ' ' || state || ' ' || coalesce(outcome, '-') || ' ' || coalesce(cursor, 'null')::text
				from geneva.step_executions where workflow_id = $1 order by id`, id)
			require.NoError(t, err)
			executions, err := pgx.CollectRows(rows, pgx.RowTo[string])
			require.NoError(t, err)
			cursor := "null"
			if c.handOver {
				cursor = "41"
			}
			var expected []string
			if c.handOver {
				expected = append(expected, "watch completed suspended 41")
			}
			expected = append(expected, "watch completed suspended "+cursor)
			if c.action == "pause" {
				expected = append(expected, "watch scheduled - "+cursor)
			} else {
				expected = append(expected, "watch canceled canceled_externally "+cursor)
			}
			require.Equal(t, expected, executions, "handed over at the request, not run to its end")

			if c.action == "pause" {
				_, err := operator.Exec(ctx, "select geneva.resume_workflow($1)", id)
				require.NoError(t, err)
				h.Speedrun(ctx, id, nil)
				h.AssertWorkflowState(ctx, id, goclient.StateFinished)
				if c.handOver {
					require.Equal(t, []string{"resumed=true cursor=true,41"}, resumeAt.list())
				} else {
					require.Equal(t, []string{"resumed=false cursor=false,0"}, resumeAt.list(), "no cursor yet: the successor starts from nothing")
				}
			}
		})
	}

	t.Run("StepCheckpointIsTheIterationsCursor", func(t *testing.T) {
		t.Parallel()
		var found visits[string]
		wf := worker.NewWorkflow("Plumbing", nil).
			ResumableStep("work", func(ctx context.Context, it *worker.Iteration) error {
				if _, err := it.Step.Checkpoint(ctx, 5); err != nil {
					return err
				}
				var cursor int
				ok, err := it.Cursor(&cursor)
				found.add(fmt.Sprintf("%v %d", ok, cursor))
				if err != nil {
					return err
				}
				return it.Checkpoint(ctx) // writes 5 again, not "no cursor"
			}, &worker.ResumableOpts{CheckpointInterval: -1})
		h := resumableHarness(t, wf)
		id := h.Create(ctx, "Plumbing", "Job", "1")

		h.PerformNextStep(ctx, id)

		require.Equal(t, []string{"true 5"}, found.list())
		h.AssertCursor(ctx, id, 5)
	})
}
