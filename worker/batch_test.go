package worker_test

// The completer: a Worker records steps that end close together in one
// transaction (geneva.complete_steps), and loses or doubles nothing when a
// batch is refused, its reply is lost, or its worker is killed mid-batch.
// Tests that must know which steps share a batch make them meet (a barrier)
// and give the worker a long window: a batch then closes when it holds every
// running step, whatever the timing.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/worker"
)

// barrier holds the steps of each name until n of them have arrived.
type barrier struct {
	n       int
	mu      sync.Mutex
	arrived map[string]int
	open    map[string]chan struct{}
}

func newBarrier(n int) *barrier {
	return &barrier{n: n, arrived: map[string]int{}, open: map[string]chan struct{}{}}
}

func (b *barrier) step(ctx context.Context, step *worker.Step) error {
	b.mu.Lock()
	ch := b.open[step.Name]
	if ch == nil {
		ch = make(chan struct{})
		b.open[step.Name] = ch
	}
	b.arrived[step.Name]++
	if b.arrived[step.Name] == b.n {
		close(ch)
	}
	b.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-time.After(30 * time.Second):
		return errors.New("barrier: the other steps never came")
	}
}

// logRecords keeps the messages logged at or above a level, with their
// attributes.
type logRecords struct {
	level slog.Level
	mu    sync.Mutex
	lines []string
}

func (l *logRecords) Enabled(_ context.Context, level slog.Level) bool { return level >= l.level }

func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	line := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
	return nil
}

func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }

// matching lists the lines that start with prefix.
func (l *logRecords) matching(prefix string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var found []string
	for _, line := range l.lines {
		if strings.HasPrefix(line, prefix) {
			found = append(found, line)
		}
	}
	return found
}

// countEnds makes the database record, per statement, how many executions
// it ended (left in_progress), in ended_per_statement.
func (b *testBundle) countEnds(t *testing.T) {
	t.Helper()
	_, err := b.pool.Exec(b.ctx, `
		create table ended_per_statement (n int not null, at timestamptz not null default clock_timestamp());
		create function count_ends() returns trigger language plpgsql as $$
		begin
		  insert into public.ended_per_statement (n)
		  select count(*) from old_rows o join new_rows n using (id)
		  where o.state = 'in_progress' and n.state <> 'in_progress'
		  having count(*) > 0;
		  return null;
		end;
		$$;
		create trigger count_ends after update on geneva.step_executions
		  referencing old table as old_rows new table as new_rows
		  for each statement execute function count_ends();`)
	require.NoError(t, err)
}

func (b *testBundle) endsPerStatement(t *testing.T) []int {
	t.Helper()
	rows, err := b.pool.Query(b.ctx, "select n from ended_per_statement order by at")
	require.NoError(t, err)
	ns, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	return ns
}

// unfinishedJobs counts the step jobs River has not finished.
func (b *testBundle) unfinishedJobs(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, b.pool.QueryRow(b.ctx,
		"select count(*) from river_job where kind = 'geneva_step' and state <> 'completed'").Scan(&n))
	return n
}

// startBatching runs a worker with seams set before it starts.
func (b *testBundle) startBatching(t *testing.T, config *worker.Config, seams func(*worker.Worker)) *worker.Worker {
	t.Helper()
	if config.River == nil {
		config.River = fastRiver()
	}
	w, err := worker.New(b.workerPool, config)
	require.NoError(t, err)
	if seams != nil {
		seams(w)
	}
	require.NoError(t, w.Start(b.ctx))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, w.Stop(ctx))
	})
	return w
}

// runCounter counts each execution's runs.
type runCounter struct {
	mu   sync.Mutex
	runs map[int64]int
}

func (c *runCounter) step(ctx context.Context, step *worker.Step) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs == nil {
		c.runs = map[int64]int{}
	}
	c.runs[step.ExecutionID]++
	return nil
}

func (c *runCounter) count() (executions, runs int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.runs {
		runs += n
	}
	return len(c.runs), runs
}

func TestBatching(t *testing.T) {
	t.Parallel()

	t.Run("ManyWorkflowsEachStepRecordedOnce", func(t *testing.T) {
		t.Parallel()
		for name, inline := range map[string]int{"Inline": 0, "EveryStepItsOwnJob": -1} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				b.countEnds(t)
				const workflows, steps = 40, 5
				counter := &runCounter{}
				wf := worker.NewWorkflow("Many", nil)
				for i := range steps {
					wf.Step(fmt.Sprint("s", i), counter.step, nil)
				}
				b.startBatching(t, &worker.Config{
					Workflows:         []*worker.Workflow{wf},
					MaxWorkers:        8,
					InlineSteps:       inline,
					CompleteBatchSize: 16,
					Logger:            slog.New(slog.DiscardHandler),
				}, nil)
				var ids []int64
				for range workflows {
					ids = append(ids, b.create(t, "Many"))
				}

				for _, id := range ids {
					b.waitState(t, id, "finished")
				}

				want := []string{"s0: success", "s1: success", "s2: success", "s3: success", "s4: success"}
				for _, id := range ids {
					require.Equal(t, want, b.outcomes(t, id), "workflow %d", id)
				}
				executions, runs := counter.count()
				require.Equal(t, workflows*steps, executions)
				require.Equal(t, workflows*steps, runs, "every execution ran once")
				ends := b.endsPerStatement(t)
				total := 0
				for _, n := range ends {
					total += n
				}
				require.Equal(t, workflows*steps, total, "every execution ended once")
				t.Logf("%d ends in %d statements", total, len(ends))
				require.Zero(t, b.unfinishedJobs(t), "every job completed")
			})
		}
	})

	t.Run("StepsEndingTogetherShareACommit", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.countEnds(t)
		const workflows = 6
		meet := newBarrier(workflows)
		wf := worker.NewWorkflow("Together", nil).
			Step("a", meet.step, nil).Step("b", meet.step, nil).Step("c", meet.step, nil)
		b.startBatching(t, &worker.Config{Workflows: []*worker.Workflow{wf}, CompleteBatchSize: 64}, func(w *worker.Worker) {
			worker.SetCompleteWindow(w, time.Minute)
		})
		var ids []int64
		for range workflows {
			ids = append(ids, b.create(t, "Together"))
		}

		for _, id := range ids {
			b.waitState(t, id, "finished")
			require.Equal(t, []string{"a: success", "b: success", "c: success"}, b.outcomes(t, id))
		}
		require.Equal(t, []int{workflows, workflows, workflows}, b.endsPerStatement(t),
			"each round of steps ended in one statement: one transaction, one commit")
		require.Zero(t, b.unfinishedJobs(t))
	})

	// A step's error rides in the same batch as the others' ends: one
	// statement ends them all (geneva.complete_steps), each by its policy.
	t.Run("FailuresShareACommitWithSuccesses", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.countEnds(t)
		const workflows = 6
		meet := newBarrier(workflows)
		failHalf := func(ctx context.Context, step *worker.Step) error {
			if err := meet.step(ctx, step); err != nil {
				return err
			}
			if step.WorkflowID%2 == 0 {
				return errors.New("boom")
			}
			return nil
		}
		wf := worker.NewWorkflow("Mixed", nil).
			Step("a", failHalf, &worker.StepOpts{OnException: &worker.ExceptionPolicy{Action: worker.ActionSkip}}).
			Step("b", meet.step, nil)
		b.startBatching(t, &worker.Config{Workflows: []*worker.Workflow{wf}, CompleteBatchSize: 64}, func(w *worker.Worker) {
			worker.SetCompleteWindow(w, time.Minute)
		})
		var ids []int64
		for range workflows {
			ids = append(ids, b.create(t, "Mixed"))
		}

		for _, id := range ids {
			b.waitState(t, id, "finished")
			first := "a: success"
			if id%2 == 0 {
				first = "a: skipped_by_exception"
			}
			require.Equal(t, []string{first, "b: success"}, b.outcomes(t, id))
		}
		require.Equal(t, []int{workflows, workflows}, b.endsPerStatement(t),
			"each round of steps, errors and successes, ended in one statement")
		require.Zero(t, b.unfinishedJobs(t))
	})

	t.Run("RefusedBatchIsRecordedOneByOne", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// The database refuses to end the execution of one workflow (named
		// in refused_workflow) as a bad argument; refusals counts the tries.
		_, err := b.pool.Exec(b.ctx, `
			create table refused_workflow (id bigint);
			create sequence refusals;
			create function refuse_end() returns trigger language plpgsql as $$
			begin
			  if new.state <> 'in_progress' and new.workflow_id in (select id from public.refused_workflow) then
			    perform pg_catalog.nextval('public.refusals');
			    raise exception 'refused' using errcode = '22023';
			  end if;
			  return new;
			end;
			$$;
			create trigger refuse_end before update on geneva.step_executions
			  for each row execute function refuse_end();`)
		require.NoError(t, err)
		const workflows = 4
		meet := newBarrier(workflows)
		logs := &logRecords{level: slog.LevelWarn}
		b.startBatching(t, &worker.Config{
			Workflows:         []*worker.Workflow{worker.NewWorkflow("Refused", nil).Step("a", meet.step, nil)},
			Logger:            slog.New(logs),
			CompleteBatchSize: 64, // whatever GENEVA_COMPLETE_BATCH_SIZE says
		}, func(w *worker.Worker) {
			worker.SetCompleteWindow(w, time.Minute)
		})
		var ids []int64
		for range workflows {
			ids = append(ids, b.create(t, "Refused"))
		}
		refused := ids[2]
		_, err = b.pool.Exec(b.ctx, "insert into refused_workflow values ($1)", refused)
		require.NoError(t, err)

		for _, id := range ids {
			if id != refused {
				b.waitState(t, id, "finished")
				require.Equal(t, []string{"a: success"}, b.outcomes(t, id), "recorded one by one")
			}
		}
		require.Eventually(t, func() bool {
			var n int64
			require.NoError(t, b.pool.QueryRow(b.ctx,
				"select case when is_called then last_value else 0 end from refusals").Scan(&n))
			return n == 2
		}, 15*time.Second, 10*time.Millisecond, "refused in the batch, then alone")
		require.Equal(t, []string{"a: in_progress"}, b.outcomes(t, refused), "its own error: nothing recorded")
		warned := logs.matching("WARN geneva: recording a batch of step ends failed; recorded one by one")
		require.Len(t, warned, 1, "%v", logs.lines)
		require.Contains(t, warned[0], fmt.Sprint("batch_size=", workflows))
		require.Contains(t, warned[0], "sqlstate=22023")
	})

	t.Run("UnansweredBatchIsTriedAgain", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.countEnds(t)
		// Every try at ending an execution is rolled back as a
		// serialization failure (an answer that means "try again") until
		// fail_reports is emptied; the sequence counts the refused
		// statements.
		_, err := b.pool.Exec(b.ctx, `
			create table fail_reports ();
			insert into fail_reports default values;
			create sequence refused_reports;
			create function refuse_reports() returns trigger language plpgsql as $$
			begin
			  if new.state <> 'in_progress' and exists (select from public.fail_reports) then
			    perform pg_catalog.nextval('public.refused_reports');
			    raise exception 'try again' using errcode = '40001';
			  end if;
			  return new;
			end;
			$$;
			create trigger refuse_reports before update on geneva.step_executions
			  for each row execute function refuse_reports();`)
		require.NoError(t, err)
		const workflows = 3
		meet := newBarrier(workflows)
		logs := &logRecords{level: slog.LevelWarn}
		b.startBatching(t, &worker.Config{
			Workflows:         []*worker.Workflow{worker.NewWorkflow("Unanswered", nil).Step("a", meet.step, nil)},
			Logger:            slog.New(logs),
			CompleteBatchSize: 64,
		}, func(w *worker.Worker) {
			worker.SetCompleteWindow(w, time.Minute)
		})
		var ids []int64
		for range workflows {
			ids = append(ids, b.create(t, "Unanswered"))
		}

		require.Eventually(t, func() bool {
			var n int64
			require.NoError(t, b.pool.QueryRow(b.ctx,
				"select case when is_called then last_value else 0 end from refused_reports").Scan(&n))
			return n > 5
		}, 20*time.Second, 20*time.Millisecond, "more tries than the five a step used to give up after")
		for _, id := range ids {
			require.Equal(t, []string{"a: in_progress"}, b.outcomes(t, id))
		}
		_, err = b.pool.Exec(b.ctx, "delete from fail_reports")
		require.NoError(t, err)

		for _, id := range ids {
			b.waitState(t, id, "finished")
			require.Equal(t, []string{"a: success"}, b.outcomes(t, id))
		}
		require.Equal(t, []int{workflows}, b.endsPerStatement(t), "tried again as a batch, ended once")
		require.Empty(t, logs.matching("WARN geneva: recording a batch of step ends failed"),
			"no answer is not a refusal: not recorded one by one")
		require.NotEmpty(t, logs.matching("WARN geneva: recording the outcome failed; trying again"))
		require.Zero(t, b.unfinishedJobs(t))
	})

	t.Run("LostReplyRecordsNothingTwice", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		const workflows = 4
		meet := newBarrier(workflows)
		a, bRuns := &runCounter{}, &runCounter{}
		logs := &logRecords{level: slog.LevelInfo}
		lossy := &lossyDB{}
		b.startBatching(t, &worker.Config{
			Workflows: []*worker.Workflow{worker.NewWorkflow("Lossy", nil).
				Step("a", func(ctx context.Context, step *worker.Step) error {
					_ = a.step(ctx, step)
					return meet.step(ctx, step)
				}, nil).
				Step("b", bRuns.step, nil)},
			Logger:            slog.New(logs),
			CompleteBatchSize: 64,
		}, func(w *worker.Worker) {
			worker.SetCompleteWindow(w, time.Minute)
			worker.WrapCompleteDB(w, func(db worker.DB) worker.DB { lossy.DB = db; return lossy })
		})
		var ids []int64
		for range workflows {
			ids = append(ids, b.create(t, "Lossy"))
		}

		for _, id := range ids {
			b.waitState(t, id, "finished")
			require.Equal(t, []string{"a: success", "b: success"}, b.outcomes(t, id))
		}
		require.EqualValues(t, 1, lossy.lost.Load(), "the first batch's reply was lost")
		for _, c := range []*runCounter{a, bRuns} {
			executions, runs := c.count()
			require.Equal(t, workflows, executions)
			require.Equal(t, workflows, runs, "every step ran once")
		}
		require.Len(t, logs.matching("INFO geneva: step ended (recorded by an earlier try)"), workflows,
			"the batch tried again handed over the steps the first one started")
		require.Zero(t, b.unfinishedJobs(t))
	})
}

// lossyDB runs the first geneva.complete_steps call it sees to its end (and
// commit), then answers as if the connection had dropped before the reply.
type lossyDB struct {
	worker.DB
	lost atomic.Int32
}

func (l *lossyDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if !strings.Contains(sql, "geneva.complete_steps(") || l.lost.Load() > 0 {
		return l.DB.Query(ctx, sql, args...)
	}
	rows, err := l.DB.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	l.lost.Add(1)
	return nil, fmt.Errorf("test: the connection dropped before the reply: %w", io.ErrUnexpectedEOF)
}
