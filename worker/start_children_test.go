package worker_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
	"github.com/geneva-dev/geneva/worker"
)

// A step fans out with StartChildren, in its end's transaction: a
// reattempted or failed run starts none, a later step starting the same
// children again starts only the new key, and the join sees them all.
func TestStartChildren(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const n = 6
	var (
		mu       sync.Mutex
		joined   []worker.ChildCounts
		listed   [][]string
		fanOutOf = func(step *worker.Step) []worker.Child {
			children := make([]worker.Child, n)
			for i := range children {
				children[i] = worker.Child{Type: "Item", HeroType: "Item", HeroID: fmt.Sprintf("%d-%d", step.WorkflowID, i)}
			}
			return children
		}
	)
	b.start(t, &worker.Config{Workflows: []*worker.Workflow{
		worker.NewWorkflow("Run", nil).
			Step("fan_out", func(ctx context.Context, step *worker.Step) error {
				step.StartChildren(fanOutOf(step)...)
				switch step.Attempt {
				case 1:
					return worker.Reattempt(0) // none of them
				case 2:
					return errors.New("flaky") // none of them either
				}
				return nil
			}, &worker.StepOpts{OnException: &worker.ExceptionPolicy{Action: worker.ActionReattempt, MaxReattempts: 3}}).
			Step("again", func(ctx context.Context, step *worker.Step) error {
				// the same children (their keys are taken), and one more
				step.StartChildren(fanOutOf(step)...)
				step.StartChildren(worker.Child{Type: "Item", HeroType: "Item", HeroID: fmt.Sprint(step.WorkflowID), Key: "last", Group: "acme"})
				return nil
			}, nil).
			Step("join", func(ctx context.Context, step *worker.Step) error {
				counts, _, err := worker.EventPayload[worker.ChildCounts](step)
				if err != nil {
					return err
				}
				children, err := step.Children(ctx)
				if err != nil {
					return err
				}
				var seen []string
				for _, c := range children {
					seen = append(seen, fmt.Sprintf("%s %s %s", c.WorkflowType, c.HeroID, c.State))
				}
				mu.Lock()
				defer mu.Unlock()
				joined = append(joined, counts)
				listed = append(listed, seen)
				return nil
			}, &worker.StepOpts{Await: &worker.Await{Children: worker.JoinAll, Timeout: time.Hour}}),
		worker.NewWorkflow("Item", nil).Step("work", ok, nil),
	}})

	var ids []int64
	for range 4 {
		ids = append(ids, b.create(t, "Run"))
	}
	for _, id := range ids {
		b.waitState(t, id, goclient.StateFinished)
		require.Equal(t, []string{"fan_out: reattempted", "fan_out: reattempted_by_exception", "fan_out: success",
			"again: success", "join: success"}, b.outcomes(t, id))
		children, err := b.client.ChildCounts(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, []goclient.ChildCount{{State: goclient.StateFinished, Workflows: n + 1}}, children)
		var last string
		require.NoError(t, b.pool.QueryRow(b.ctx,
			"select group_name from geneva.workflows where parent_id = $1 and child_key = 'last'", id).Scan(&last))
		require.Equal(t, "acme", last)
	}

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, joined, len(ids), "each join ran once")
	for i, counts := range joined {
		require.Equal(t, worker.ChildCounts{Children: n + 1, Ended: n + 1, Finished: n + 1}, counts)
		require.Len(t, listed[i], n+1)
		for _, c := range listed[i] {
			require.Regexp(t, `^Item \d+(-\d)? finished$`, c)
		}
	}
}

// Children refused (a type not defined) fail the step with a
// *worker.ChildrenError, through its policies, and nothing of them is
// created; a Go step's refused children are its error, an HTTP step's
// http.bad_reply.
func TestStartChildrenRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.start(t, &worker.Config{Workflows: []*worker.Workflow{
		worker.NewWorkflow("Bad", nil).
			Step("fan_out", func(ctx context.Context, step *worker.Step) error {
				step.StartChildren(worker.Child{Type: "Nope", HeroType: "Item", HeroID: "1"})
				return nil
			}, nil),
	}})
	id := b.create(t, "Bad")
	b.waitState(t, id, goclient.StatePaused)
	history := b.history(t, id)
	require.Len(t, history, 1)
	require.Equal(t, "*worker.ChildrenError", *history[0].ErrorClassName)
	require.Contains(t, *history[0].ErrorMessage, "unknown child workflow type Nope")
	children, err := b.client.ChildCounts(b.ctx, id)
	require.NoError(t, err)
	require.Empty(t, children)
}

// An HTTP step's reply starts children with its "children", as
// StartChildren does.
func TestHTTPStepStartsChildren(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ep := newEndpoint(t, nil, map[string]http.HandlerFunc{
		"/fan": func(w http.ResponseWriter, r *http.Request) {
			id := requestOf(r).WorkflowID
			fmt.Fprintf(w, `{"signal": "success", "children": [
				{"type": "Item", "hero_type": "Item", "hero_id": "%d-1"},
				{"type": "Item", "hero_type": "Item", "hero_id": "%d-2", "group": "acme", "key": "two"}
			]}`, id, id)
		},
		"/bad": reply(http.StatusOK, `{"children": [{"type": "Nope", "hero_type": "Item", "hero_id": "1"}]}`),
		"/odd": reply(http.StatusOK, `{"children": [{"type": "Item", "hero_type": "Item", "hero_id": "1", "size": 2}]}`),
	})
	step := func(name, path string) string {
		return fmt.Sprintf(`{"name": %q, "http": {"url": %q, "timeout": 1}}`, name, ep.URL+path)
	}
	b.defineHTTP(t, "Fan", `{"steps": [`+step("fan", "/fan")+`, {"name": "join", "http": {"url": "`+ep.URL+`/fan", "timeout": 1}, "await": {"children": "all", "timeout": "1 hour"}}]}`)
	b.defineHTTP(t, "Bad", `{"steps": [`+step("fan", "/bad")+`]}`)
	b.defineHTTP(t, "Odd", `{"steps": [`+step("fan", "/odd")+`]}`)
	b.start(t, &worker.Config{
		HTTP:      &worker.HTTPConfig{AllowHosts: local},
		Workflows: []*worker.Workflow{worker.NewWorkflow("Item", nil).Step("work", ok, nil)},
	})

	id, err := b.client.CreateWorkflow(b.ctx, "Fan", "Run", "1", nil)
	require.NoError(t, err)
	b.waitState(t, id, goclient.StateFinished)
	require.Equal(t, []string{"fan: success", "join: success"}, b.outcomes(t, id))
	children, err := b.client.ChildCounts(b.ctx, id)
	require.NoError(t, err)
	// (the join's reply starts the same two again: their keys are taken)
	require.Equal(t, []goclient.ChildCount{{State: goclient.StateFinished, Workflows: 2}}, children)

	for _, workflowType := range []string{"Bad", "Odd"} {
		id, err := b.client.CreateWorkflow(b.ctx, workflowType, "Run", "1", nil)
		require.NoError(t, err)
		b.waitState(t, id, goclient.StatePaused)
		history := b.history(t, id)
		require.Equal(t, "http.bad_reply", *history[0].ErrorClassName, workflowType)
		children, err := b.client.ChildCounts(b.ctx, id)
		require.NoError(t, err)
		require.Empty(t, children)
	}
}

// fanOutWorkflows are the workflows of TestStartChildrenKilled: each Run's
// fan_out starts 5 Items, its join awaits them.
func fanOutWorkflows() []*worker.Workflow {
	return []*worker.Workflow{
		worker.NewWorkflow("Run", nil).
			Step("fan_out", func(ctx context.Context, step *worker.Step) error {
				for i := range 5 {
					step.StartChildren(worker.Child{Type: "Item", HeroType: "Item", HeroID: fmt.Sprintf("%d-%d", step.WorkflowID, i)})
				}
				return nil
			}, nil).
			Step("join", ok, &worker.StepOpts{Await: &worker.Await{Children: worker.JoinAll, Timeout: time.Hour}}),
		worker.NewWorkflow("Item", nil).Step("work", ok, nil),
	}
}

// TestFanOutChild is the worker process of TestStartChildrenKilled; it does
// nothing in a normal test run.
func TestFanOutChild(t *testing.T) {
	if os.Getenv("GENEVA_FAN_CHILD_URL") == "" {
		t.Skip("run by TestStartChildrenKilled")
	}
	ctx := context.Background()
	pool, _ := childPools(t, "GENEVA_FAN_CHILD")
	w, err := worker.New(pool, &worker.Config{Workflows: fanOutWorkflows(), River: fastRiver(), CompleteBatchSize: 64})
	require.NoError(t, err)
	require.NoError(t, w.Start(ctx))
	require.Eventually(t, func() bool {
		n, err := w.Client().CountWorkflows(ctx, &goclient.WorkflowFilter{WorkflowType: "Run", State: goclient.StateOngoing})
		return err == nil && n.Workflows == 0
	}, time.Minute, 10*time.Millisecond)
	require.NoError(t, w.Stop(ctx))
}

// A worker SIGKILLed while parents fan out loses nothing and starts
// nothing twice: at every instant a parent has its children iff its step's
// success is recorded (one transaction), and a new worker finishes them all.
func TestStartChildrenKilled(t *testing.T) {
	t.Parallel()
	b, conf := setupWithConfig(t)
	for _, wf := range fanOutWorkflows() {
		definition, err := wf.Definition()
		require.NoError(t, err)
		require.NoError(t, protocol.New(b.workerPool).DefineWorkflow(b.ctx, wf.Type(), definition))
	}
	const parents = 40
	var ids []int64
	for range parents {
		ids = append(ids, b.create(t, "Run"))
	}
	// children iff success, for every parent
	check := func() {
		t.Helper()
		rows, err := b.pool.Query(b.ctx, `select w.id,
				(select count(*) from geneva.step_executions e where e.workflow_id = w.id and e.step_name = 'fan_out' and e.outcome = 'success'),
				(select count(*) from geneva.workflows c where c.parent_id = w.id), w.children
			from geneva.workflows w where w.id = any ($1)`, ids)
		require.NoError(t, err)
		for rows.Next() {
			var id, successes, children, counted int64
			require.NoError(t, rows.Scan(&id, &successes, &children, &counted))
			require.Contains(t, []int64{0, 1}, successes)
			require.Equal(t, successes*5, children, "workflow %d: children iff its fan_out's success", id)
			require.Equal(t, children, counted, "workflow %d: its count", id)
		}
		require.NoError(t, rows.Err())
	}

	first := startChild(t, "TestFanOutChild", "GENEVA_FAN_CHILD", conf)
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, b.pool.QueryRow(b.ctx, "select count(*) from geneva.workflows where parent_id is not null").Scan(&n))
		return n > 0
	}, 30*time.Second, time.Millisecond)
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	// (the dead worker's backends end their transactions: committed or not)
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, b.pool.QueryRow(b.ctx,
			"select count(*) from pg_stat_activity where datname = current_database() and state like 'idle in%'").Scan(&n))
		return n == 0
	}, 30*time.Second, 10*time.Millisecond)
	check()

	// Housekeeping (with a threshold of zero rather than an hour) gives back
	// what the dead worker left in_progress, and River's rescuer the jobs it
	// had fetched and not claimed (done here at once: it waits an hour)
	_, err := b.client.Housekeep(b.ctx, &goclient.HousekeepParams{StuckInProgressAfter: new(time.Nanosecond)})
	require.NoError(t, err)
	_, err = b.pool.Exec(b.ctx, "update river_job set state = 'available', scheduled_at = now() where state = 'running'")
	require.NoError(t, err)
	second := startChild(t, "TestFanOutChild", "GENEVA_FAN_CHILD", conf)
	if err := second.Wait(); err != nil {
		rows, qerr := b.pool.Query(b.ctx, `select w.workflow_type, w.state, coalesce(e.step_name, ''), coalesce(e.state, ''), count(*)
			from geneva.workflows w left join geneva.step_executions e on e.workflow_id = w.id and e.state in ('scheduled', 'in_progress')
			group by 1, 2, 3, 4`)
		require.NoError(t, qerr)
		for rows.Next() {
			var a, b2, c, d string
			var n int
			require.NoError(t, rows.Scan(&a, &b2, &c, &d, &n))
			t.Logf("%s %s %s %s: %d", a, b2, c, d, n)
		}
		t.Fatalf("the second worker did not see the parents finish: %v", err)
	}
	check()
	for _, id := range ids {
		require.Equal(t, "finished", string(b.waitState(t, id, goclient.StateFinished).State))
		children, err := b.client.ChildCounts(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, []goclient.ChildCount{{State: goclient.StateFinished, Workflows: 5}}, children, "workflow %d", id)
	}
	var twice int
	require.NoError(t, b.pool.QueryRow(b.ctx, `select count(*) from (select workflow_id from geneva.step_executions e
		join geneva.workflows w on w.id = e.workflow_id where w.parent_id = any ($1) and e.outcome = 'success'
		group by workflow_id having count(*) > 1) x`, ids).Scan(&twice))
	require.Zero(t, twice, "each child's step succeeded once")
}
