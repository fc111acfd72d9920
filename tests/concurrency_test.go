package tests

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// session is one connection of a scripted interleaving.
type session struct {
	conn *pgx.Conn
	pid  uint32
}

func (b *testBundle) session(t *testing.T) *session {
	t.Helper()
	conn := dbtest.NewConn(t, b.conf)
	return &session{conn: conn, pid: conn.PgConn().PID()}
}

// inBackground runs f on another goroutine; the returned channel yields its
// error.
func inBackground(f func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	return done
}

// waitBlocked waits until the session waits for a lock.
func (b *testBundle) waitBlocked(t *testing.T, s *session) {
	t.Helper()
	require.Eventually(t, func() bool {
		var waiting bool
		err := b.conn.QueryRow(b.ctx,
			"select coalesce(wait_event_type = 'Lock', false) from pg_stat_activity where pid = $1", s.pid).Scan(&waiting)
		return err == nil && waiting
	}, 10*time.Second, 5*time.Millisecond, "session %d never waited for a lock", s.pid)
}

// notDone asserts that a background call has not returned.
func notDone(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("returned while it should wait: %v", err)
	default:
	}
}

func receive(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("still waiting after 10s")
		return nil
	}
}

func TestConcurrency(t *testing.T) {
	t.Parallel()

	t.Run("CreateWorkflowRaceForHeroHasOneWinner", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)

		const racers = 8
		var (
			wg      sync.WaitGroup
			start   = make(chan struct{})
			results = make(chan error, racers)
		)
		for i := 0; i < racers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := b.pool.Exec(b.ctx, "select geneva.create_workflow('ThreeSteps', 'User', '1')")
				results <- err
			}()
		}
		close(start)
		wg.Wait()
		close(results)

		wins := 0
		for err := range results {
			if err == nil {
				wins++
				continue
			}
			pgErr := requireCode(t, err, "23505")
			require.Equal(t, "workflows_one_ongoing_per_hero", pgErr.ConstraintName)
		}
		require.Equal(t, 1, wins)
		var workflows, executions int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.workflows").Scan(&workflows))
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.step_executions").Scan(&executions))
		require.Equal(t, 1, workflows)
		require.Equal(t, 1, executions, "the losers left nothing behind")
	})

	t.Run("CreateWorkflowWaitsForUncommittedRival", func(t *testing.T) {
		t.Parallel()
		for _, commit := range []bool{true, false} {
			t.Run(fmt.Sprintf("Commit%v", commit), func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				b.defineThreeSteps(t)
				first, second := b.session(t), b.session(t)

				tx, err := first.conn.Begin(b.ctx)
				require.NoError(t, err)
				_, err = tx.Exec(b.ctx, "select geneva.create_workflow('ThreeSteps', 'User', '1')")
				require.NoError(t, err)

				done := inBackground(func() error {
					_, err := second.conn.Exec(b.ctx, "select geneva.create_workflow('ThreeSteps', 'User', '1')")
					return err
				})
				b.waitBlocked(t, second)
				notDone(t, done)

				if commit {
					require.NoError(t, tx.Commit(b.ctx))
					requireCode(t, receive(t, done), "23505")
				} else {
					require.NoError(t, tx.Rollback(b.ctx))
					require.NoError(t, receive(t, done))
				}
				var workflows int
				require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.workflows").Scan(&workflows))
				require.Equal(t, 1, workflows)
			})
		}
	})

	// Two lists that share a hero: the second waits for the first's
	// transaction, and is refused whole when it commits (none of its own
	// heroes is created), or creates all of its list when it rolls back.
	t.Run("CreateWorkflowsWaitsForARivalListWithTheSameHero", func(t *testing.T) {
		t.Parallel()
		for _, commit := range []bool{true, false} {
			t.Run(fmt.Sprintf("Commit%v", commit), func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				b.defineThreeSteps(t)
				first, second := b.session(t), b.session(t)

				tx, err := first.conn.Begin(b.ctx)
				require.NoError(t, err)
				_, err = tx.Exec(b.ctx, "select geneva.create_workflows('ThreeSteps', 'User', array['1', '2'])")
				require.NoError(t, err)

				done := inBackground(func() error {
					_, err := second.conn.Exec(b.ctx, "select geneva.create_workflows('ThreeSteps', 'User', array['3', '2', '4'])")
					return err
				})
				b.waitBlocked(t, second)
				notDone(t, done)

				var heroes []string
				if commit {
					require.NoError(t, tx.Commit(b.ctx))
					pgErr := requireCode(t, receive(t, done), "23505")
					require.Contains(t, pgErr.Message, "User 2")
					heroes = []string{"1", "2"}
				} else {
					require.NoError(t, tx.Rollback(b.ctx))
					require.NoError(t, receive(t, done))
					heroes = []string{"2", "3", "4"}
				}
				var got []string
				require.NoError(t, b.conn.QueryRow(b.ctx,
					"select array_agg(hero_id order by hero_id) from geneva.workflows").Scan(&got))
				require.Equal(t, heroes, got)
				var executions int
				require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.step_executions").Scan(&executions))
				require.Equal(t, len(heroes), executions)
			})
		}
	})

	t.Run("LocksWorkflowBeforeExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		execution := b.active(t, id)
		operator, worker := b.session(t), b.session(t)

		// The operator holds only the workflow row; the worker's start_step,
		// which takes the workflow row first, waits for it without having
		// locked the execution.
		tx, err := operator.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "select geneva.pause_workflow($1)", id)
		require.NoError(t, err)

		done := inBackground(func() error {
			_, ok, err := startStepOn(b.ctx, worker.conn, execution.ID, nil)
			if err == nil && ok {
				return errors.New("started a step of a paused workflow")
			}
			return err
		})
		b.waitBlocked(t, worker)
		var executionLocked bool
		require.NoError(t, b.conn.QueryRow(b.ctx, `
			select exists (
			  select 1 from pg_locks l
			  join pg_class c on c.oid = l.relation
			  where l.pid = $1 and c.relname = 'step_executions' and l.mode = 'RowShareLock' and l.granted
			)`, worker.pid).Scan(&executionLocked))
		require.False(t, executionLocked, "start_step locked the execution before the workflow")
		require.NoError(t, tx.Commit(b.ctx))
		require.NoError(t, receive(t, done))
		require.Equal(t, "scheduled", b.execution(t, execution.ID).State)
		require.Equal(t, "paused", b.workflow(t, id).State)
	})

	t.Run("PauseRacingCompleteStep", func(t *testing.T) {
		t.Parallel()

		// Whichever takes the workflow row first, the workflow ends paused with
		// the step after the completed one kept scheduled.
		check := func(t *testing.T, b *testBundle, id int64, completedID int64) {
			t.Helper()
			require.Equal(t, "success", deref(b.execution(t, completedID).Outcome))
			wf := b.workflow(t, id)
			require.Equal(t, "paused", wf.State)
			require.Nil(t, wf.RequestedAction)
			require.Equal(t, "b", b.active(t, id).StepName)
		}

		t.Run("CompleteFirst", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.defineThreeSteps(t)
			id := b.create(t, "ThreeSteps", "1")
			started := b.run(t, id)
			worker, operator := b.session(t), b.session(t)

			tx, err := worker.conn.Begin(b.ctx)
			require.NoError(t, err)
			_, err = tx.Exec(b.ctx, "select * from geneva.complete_step($1)", started.ExecutionID)
			require.NoError(t, err)
			done := inBackground(func() error {
				_, err := operator.conn.Exec(b.ctx, "select geneva.pause_workflow($1)", id)
				return err
			})
			b.waitBlocked(t, operator)
			notDone(t, done)
			require.NoError(t, tx.Commit(b.ctx))
			require.NoError(t, receive(t, done))

			check(t, b, id, started.ExecutionID)
		})

		t.Run("PauseFirst", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.defineThreeSteps(t)
			id := b.create(t, "ThreeSteps", "1")
			started := b.run(t, id)
			worker, operator := b.session(t), b.session(t)

			tx, err := operator.conn.Begin(b.ctx)
			require.NoError(t, err)
			_, err = tx.Exec(b.ctx, "select geneva.pause_workflow($1)", id)
			require.NoError(t, err)
			done := inBackground(func() error {
				_, err := worker.conn.Exec(b.ctx, "select * from geneva.complete_step($1)", started.ExecutionID)
				return err
			})
			b.waitBlocked(t, worker)
			notDone(t, done)
			require.NoError(t, tx.Commit(b.ctx))
			require.NoError(t, receive(t, done))

			check(t, b, id, started.ExecutionID)
		})

		t.Run("FreeRunning", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.defineThreeSteps(t)

			const workflows = 40
			var (
				ids     []int64
				started []int64
			)
			for i := 0; i < workflows; i++ {
				id := b.create(t, "ThreeSteps", fmt.Sprint(i))
				ids = append(ids, id)
				started = append(started, b.run(t, id).ExecutionID)
			}

			var wg sync.WaitGroup
			errs := make(chan error, 2*workflows)
			for i := range ids {
				wg.Add(2)
				go func() {
					defer wg.Done()
					_, err := b.pool.Exec(b.ctx, "select * from geneva.complete_step($1)", started[i])
					errs <- err
				}()
				go func() {
					defer wg.Done()
					_, err := b.pool.Exec(b.ctx, "select geneva.pause_workflow($1)", ids[i])
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				var pgErr *pgconn.PgError
				if errors.As(err, &pgErr) {
					require.NotEqual(t, "40P01", pgErr.Code, "deadlock")
				}
				require.NoError(t, err)
			}
			for i, id := range ids {
				check(t, b, id, started[i])
			}
		})
	})

	t.Run("StartStepRaceHasOneWinner", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)

		const (
			workflows = 20
			racers    = 6
		)
		for i := 0; i < workflows; i++ {
			id := b.create(t, "ThreeSteps", fmt.Sprint(i))
			execution := b.active(t, id)

			var (
				wg    sync.WaitGroup
				start = make(chan struct{})
				mu    sync.Mutex
				wins  int
			)
			for r := 0; r < racers; r++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, ok, err := startStepOn(b.ctx, b.pool, execution.ID, nil)
					require.NoError(t, err)
					if ok {
						mu.Lock()
						wins++
						mu.Unlock()
					}
				}()
			}
			close(start)
			wg.Wait()

			require.Equal(t, 1, wins, "workflow %d", id)
			require.Equal(t, "in_progress", b.execution(t, execution.ID).State)
			require.Equal(t, "performing", b.workflow(t, id).State)
		}
	})

	t.Run("StartStepWaitsForRivalAndThenDoesNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		execution := b.active(t, id)
		first, second := b.session(t), b.session(t)

		tx, err := first.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, ok, err := startStepOn(b.ctx, tx, execution.ID, nil)
		require.NoError(t, err)
		require.True(t, ok)

		done := inBackground(func() error {
			_, ok, err := startStepOn(context.Background(), second.conn, execution.ID, nil)
			if err == nil && ok {
				return errors.New("the second start_step also started the step")
			}
			return err
		})
		b.waitBlocked(t, second)
		notDone(t, done)
		require.NoError(t, tx.Commit(b.ctx))
		require.NoError(t, receive(t, done))

		require.Equal(t, "in_progress", b.execution(t, execution.ID).State)
	})

	// An end locks its workflow, and its execution only by the update that
	// ends it (geneva._lock_executions); a checkpoint writes the execution
	// without the workflow's lock. Each waits for the other's write and
	// builds on it: neither is lost, and they never wait in a cycle.
	t.Run("EndWaitsForACheckpointUnderWayAndKeepsItsCursor", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		step, worker := b.session(t), b.session(t)

		tx, err := step.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, `select geneva.checkpoint_step($1, '{"page": 4}')`, started.ExecutionID)
		require.NoError(t, err)

		done := inBackground(func() error {
			_, err := worker.conn.Exec(context.Background(),
				"select * from geneva.complete_step($1, 'reattempt', null)", started.ExecutionID)
			return err
		})
		b.waitBlocked(t, worker)
		notDone(t, done)
		require.NoError(t, tx.Commit(b.ctx))
		require.NoError(t, receive(t, done))

		ended := b.execution(t, started.ExecutionID)
		require.Equal(t, "reattempted", deref(ended.Outcome))
		require.JSONEq(t, `{"page": 4}`, string(ended.Cursor), "the end kept the checkpoint's cursor")
		next := b.active(t, id)
		require.JSONEq(t, `{"page": 4}`, string(next.Cursor), "and the reattempt continues from it")
	})

	t.Run("CheckpointWaitsForAnEndUnderWayAndFindsItEnded", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		started := b.run(t, id)
		worker, step := b.session(t), b.session(t)

		tx, err := worker.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "select * from geneva.complete_step($1, 'success', null)", started.ExecutionID)
		require.NoError(t, err)

		stop := make(chan bool, 1)
		done := inBackground(func() error {
			var s bool
			err := step.conn.QueryRow(context.Background(),
				`select geneva.checkpoint_step($1, '{"page": 5}')`, started.ExecutionID).Scan(&s)
			stop <- s
			return err
		})
		b.waitBlocked(t, step)
		notDone(t, done)
		require.NoError(t, tx.Commit(b.ctx))
		require.NoError(t, receive(t, done))

		require.True(t, <-stop, "the step is told to stop: its execution ended")
		ended := b.execution(t, started.ExecutionID)
		require.Equal(t, "success", deref(ended.Outcome))
		require.Nil(t, ended.Cursor, "an ended execution's cursor is not saved")
	})
}
