package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/worker"
)

// The claimer: the executions of the River jobs a worker is handed together
// are started with one geneva.start_steps call.
func TestClaiming(t *testing.T) {
	t.Parallel()

	t.Run("JobsFetchedTogetherAreClaimedInOneStatement", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// per statement, how many executions it started (scheduled →
		// in_progress)
		_, err := b.pool.Exec(b.ctx, `
			create table started_per_statement (n int not null, at timestamptz not null default clock_timestamp());
			create function count_starts() returns trigger language plpgsql as $$
			begin
			  insert into public.started_per_statement (n)
			  select count(*) from old_rows o join new_rows n using (id)
			  where o.state = 'scheduled' and n.state = 'in_progress'
			  having count(*) > 0;
			  return null;
			end;
			$$;
			create trigger count_starts after update on geneva.step_executions
			  referencing old table as old_rows new table as new_rows
			  for each statement execute function count_starts();`)
		require.NoError(t, err)
		const workflows = 6
		wf := worker.NewWorkflow("Claimed", nil).Step("a", noop, nil).Step("b", noop, nil)
		// the workflow type is registered, and its jobs wait, before the
		// worker that fetches them all at once starts
		w, err := worker.New(b.workerPool, &worker.Config{Workflows: []*worker.Workflow{wf}, River: fastRiver()})
		require.NoError(t, err)
		require.NoError(t, w.Register(b.ctx))
		var ids []int64
		for range workflows {
			ids = append(ids, b.create(t, "Claimed"))
		}
		b.startBatching(t, &worker.Config{Workflows: []*worker.Workflow{wf}, CompleteBatchSize: 64}, func(w *worker.Worker) {
			worker.SetClaimWindow(w, time.Minute, time.Second)
		})

		for _, id := range ids {
			b.waitState(t, id, "finished")
			require.Equal(t, []string{"a: success", "b: success"}, b.outcomes(t, id))
		}
		var starts []int
		rows, err := b.pool.Query(b.ctx, "select n from started_per_statement order by at")
		require.NoError(t, err)
		for rows.Next() {
			var n int
			require.NoError(t, rows.Scan(&n))
			starts = append(starts, n)
		}
		require.NoError(t, rows.Err())
		require.Equal(t, []int{workflows}, starts, "the six first steps started in one statement")
		require.Zero(t, b.unfinishedJobs(t))
	})
}

func noop(context.Context, *worker.Step) error { return nil }
