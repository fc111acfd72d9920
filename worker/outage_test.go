package worker_test

// What the worker does when the database fails it just after a step ran: it
// keeps the outcome and keeps trying until the database answers, without
// running the step again or waiting for housekeeping.

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/pgtemp"
	"github.com/geneva-dev/geneva/worker"
)

// blockingStep is a step that counts its runs and returns once released.
type blockingStep struct {
	runs    atomic.Int32
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func newBlockingStep() *blockingStep {
	return &blockingStep{started: make(chan struct{}), release: make(chan struct{})}
}

func (s *blockingStep) run(ctx context.Context, step *worker.Step) error {
	s.runs.Add(1)
	s.once.Do(func() { close(s.started) })
	<-s.release
	return nil
}

func TestRecordingOutlivesOutage(t *testing.T) {
	t.Parallel()

	t.Run("ServerDown", func(t *testing.T) {
		t.Parallel()
		// a server of the test's own, to stop and start again
		ctx := context.Background()
		// synchronous commits: an immediate stop must not lose committed rows
		srv, err := pgtemp.Start(ctx, &pgtemp.Options{Settings: map[string]string{"synchronous_commit": "on"}})
		require.NoError(t, err)
		t.Cleanup(func() { _ = srv.Stop() })
		pool, err := pgxpool.New(ctx, srv.URL("postgres"))
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		_, err = geneva.Migrate(ctx, pool, nil)
		require.NoError(t, err)
		b := &testBundle{ctx: ctx, pool: pool, workerPool: pool, client: goclient.New(pool)}

		a := newBlockingStep()
		b.start(t, &worker.Config{
			Workflows:         []*worker.Workflow{worker.NewWorkflow("Outage", nil).Step("a", a.run, nil).Step("b", ok, nil)},
			Logger:            slog.New(slog.DiscardHandler), // the outage makes River and the worker log a lot
			HeartbeatInterval: 200 * time.Millisecond,
		})
		id := b.create(t, "Outage")
		<-a.started

		// The server goes away while step a runs, and stays away longer
		// than the worker used to try (about 7.5 s); then it comes back.
		require.NoError(t, srv.Halt(ctx))
		close(a.release)
		time.Sleep(10 * time.Second)
		require.NoError(t, srv.Resume(ctx))

		// Recorded when the database answers again: not left in_progress
		// for housekeeping (an hour away by default) to run it again.
		b.waitState(t, id, "finished")
		require.Equal(t, []string{"a: success", "b: success"}, b.outcomes(t, id))
		require.EqualValues(t, 1, a.runs.Load(), "step a ran once")
	})

	t.Run("TransientRefusals", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// Every try at recording a's end is rolled back as a serialization
		// failure (a transient answer) until fail_reports is emptied; the
		// sequence counts the tries.
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

		var runs atomic.Int32
		b.start(t, &worker.Config{
			Workflows: []*worker.Workflow{worker.NewWorkflow("Refused", nil).Step("a", func(context.Context, *worker.Step) error {
				runs.Add(1)
				return nil
			}, nil)},
			Logger:            slog.New(slog.DiscardHandler),
			HeartbeatInterval: 100 * time.Millisecond,
		})
		id := b.create(t, "Refused")

		refused := func() int64 {
			var n int64
			require.NoError(t, b.pool.QueryRow(b.ctx,
				"select case when is_called then last_value else 0 end from refused_reports").Scan(&n))
			return n
		}
		updatedAt := func() time.Time {
			var at time.Time
			require.NoError(t, b.pool.QueryRow(b.ctx,
				"select updated_at from geneva.step_executions where workflow_id = $1", id).Scan(&at))
			return at
		}
		// more tries than the five the worker used to give up after
		require.Eventually(t, func() bool { return refused() > 5 }, 20*time.Second, 20*time.Millisecond)
		require.Equal(t, []string{"a: in_progress"}, b.outcomes(t, id))
		// and the execution shows signs of life meanwhile
		before := updatedAt()
		require.Eventually(t, func() bool { return updatedAt().After(before) }, 5*time.Second, 20*time.Millisecond,
			"heartbeats while the outcome waits")

		_, err = b.pool.Exec(b.ctx, "delete from fail_reports")
		require.NoError(t, err)
		b.waitState(t, id, "finished")
		require.Equal(t, []string{"a: success"}, b.outcomes(t, id))
		require.EqualValues(t, 1, runs.Load())
	})
	t.Run("HandlerDecidesOnceAcrossTries", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// The first try at recording the handler's decision is rolled back
		// as a serialization failure; the sequence counts the refusals
		// (nextval is not rolled back).
		_, err := b.pool.Exec(b.ctx, `
			create sequence refused_decisions;
			create function refuse_decision() returns trigger language plpgsql as $$
			begin
			  if new.state <> 'in_progress' and pg_catalog.nextval('public.refused_decisions') = 1 then
			    raise exception 'try again' using errcode = '40001';
			  end if;
			  return new;
			end;
			$$;
			create trigger refuse_decision before update on geneva.step_executions
			  for each row execute function refuse_decision();`)
		require.NoError(t, err)

		var decisions atomic.Int32
		b.start(t, &worker.Config{
			Workflows: []*worker.Workflow{worker.NewWorkflow("DecideOnce", nil).Step("a", failing(errors.New("boom")), &worker.StepOpts{
				OnException: &worker.ExceptionPolicy{Handler: func(context.Context, *worker.Step, error) error {
					decisions.Add(1)
					return worker.Cancel()
				}},
			})},
			Logger: slog.New(slog.DiscardHandler),
		})
		id := b.create(t, "DecideOnce")

		b.waitState(t, id, "canceled")
		var refused int64
		require.NoError(t, b.pool.QueryRow(b.ctx, "select last_value from refused_decisions").Scan(&refused))
		require.GreaterOrEqual(t, refused, int64(2), "the first try was refused, a later one recorded")
		require.EqualValues(t, 1, decisions.Load(), "the handler decided once; the later try passed its decision on")
	})
}
