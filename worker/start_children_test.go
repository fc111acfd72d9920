package worker_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
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
