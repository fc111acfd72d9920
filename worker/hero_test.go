package worker_test

// The hero loader (WorkflowOpts.LoadHero), options an extension overrides
// (Workflow.Extend) and per-type hooks (WorkflowOpts.Hooks).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/worker"
	"github.com/geneva-dev/geneva/worker/workertest"
)

type account struct {
	Name   string
	Closed bool
}

// accounts loads heroes from a map, counting its calls; a hero not in it is
// missing.
type accounts struct {
	mu    sync.Mutex
	byID  map[string]*account
	loads int
}

func (a *accounts) load(ctx context.Context, step *worker.Step) (any, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.loads++
	if hero, ok := a.byID[step.HeroID]; ok {
		return hero, nil
	}
	return nil, fmt.Errorf("account %s: %w", step.HeroID, worker.ErrHeroMissing)
}

func (a *accounts) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.loads
}

// redefine registers the workflow's definition in the database with changes,
// as a newer worker of a deploy would.
func redefine(ctx context.Context, t *testing.T, h *workertest.Harness, wf *worker.Workflow, change func(map[string]any)) {
	t.Helper()
	raw, err := wf.Definition()
	require.NoError(t, err)
	var definition map[string]any
	require.NoError(t, json.Unmarshal(raw, &definition))
	change(definition)
	raw, err = json.Marshal(definition)
	require.NoError(t, err)
	_, err = h.Conn().Exec(ctx, "select geneva.define_workflow($1, $2)", wf.Type(), raw)
	require.NoError(t, err)
}

func TestHeroLoader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("StepsAndConditionsSeeTheHero", func(t *testing.T) {
		t.Parallel()
		heroes := &accounts{byID: map[string]*account{"1": {Name: "Ann"}}}
		var (
			mu   sync.Mutex
			seen []string
		)
		see := func(ctx context.Context, step *worker.Step) error {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, step.Name+" "+step.Hero().(*account).Name)
			return nil
		}
		wf := worker.NewWorkflow("Greeting", &worker.WorkflowOpts{LoadHero: heroes.load}).
			CancelIf("closed", func(ctx context.Context, step *worker.Step) (bool, error) {
				return step.Hero().(*account).Closed, nil
			}).
			Step("a", see, nil).
			Step("b", see, &worker.StepOpts{Wait: time.Hour})
		h := quietHarness(t, nil, wf)
		id := h.Create(ctx, "Greeting", "Account", "1")

		h.Speedrun(ctx, id, nil)

		require.Equal(t, []string{"a: success", "b: success"}, outcomesOf(ctx, h, id))
		require.Equal(t, []string{"a Ann", "b Ann"}, seen)
		require.Equal(t, 2, heroes.count(), "loaded once before each step")
	})

	t.Run("AConditionOnTheHeroCancels", func(t *testing.T) {
		t.Parallel()
		heroes := &accounts{byID: map[string]*account{"1": {Name: "Ann"}}}
		wf := worker.NewWorkflow("Greeting", &worker.WorkflowOpts{LoadHero: heroes.load}).
			CancelIf("closed", func(ctx context.Context, step *worker.Step) (bool, error) {
				return step.Hero().(*account).Closed, nil
			}).
			Step("a", ok, nil).
			Step("b", ok, &worker.StepOpts{Wait: time.Hour})
		h := quietHarness(t, nil, wf)
		id := h.Create(ctx, "Greeting", "Account", "1")
		h.PerformNextStep(ctx, id)
		heroes.mu.Lock()
		heroes.byID["1"].Closed = true
		heroes.mu.Unlock()

		h.Speedrun(ctx, id, nil)

		require.Equal(t, []string{"a: success", "b: canceled_by_condition"}, outcomesOf(ctx, h, id))
	})

	t.Run("AMissingHeroCancelsTheWorkflow", func(t *testing.T) {
		t.Parallel()
		heroes := &accounts{byID: map[string]*account{}}
		var conditions, steps atomic.Int32
		wf := worker.NewWorkflow("Greeting", &worker.WorkflowOpts{LoadHero: heroes.load}).
			CancelIf("closed", func(ctx context.Context, step *worker.Step) (bool, error) {
				conditions.Add(1)
				return step.Hero().(*account).Closed, nil // (would panic on a missing hero)
			}).
			Step("a", func(context.Context, *worker.Step) error { steps.Add(1); return nil }, nil)
		h := quietHarness(t, nil, wf)
		id := h.Create(ctx, "Greeting", "Account", "404")

		h.Speedrun(ctx, id, nil)

		h.AssertWorkflowState(ctx, id, goclient.StateCanceled)
		require.Equal(t, []string{"a: canceled_hero_missing"}, outcomesOf(ctx, h, id))
		require.Zero(t, conditions.Load(), "no condition runs on a missing hero")
		require.Zero(t, steps.Load())
	})

	t.Run("MayProceedWithoutTheHero", func(t *testing.T) {
		t.Parallel()
		heroes := &accounts{byID: map[string]*account{}}
		var (
			conditions atomic.Int32
			sawMissing atomic.Bool
			sawHero    atomic.Value
		)
		wf := worker.NewWorkflow("Erasure", &worker.WorkflowOpts{LoadHero: heroes.load, MayProceedWithoutHero: true}).
			CancelIf("never", func(ctx context.Context, step *worker.Step) (bool, error) {
				conditions.Add(1)
				return false, nil
			}).
			Step("a", func(ctx context.Context, step *worker.Step) error {
				sawMissing.Store(step.HeroMissing)
				sawHero.Store(fmt.Sprint(step.Hero()))
				return nil
			}, nil)
		h := quietHarness(t, nil, wf)
		id := h.Create(ctx, "Erasure", "Account", "404")

		h.Speedrun(ctx, id, nil)

		require.Equal(t, []string{"a: success"}, outcomesOf(ctx, h, id))
		require.True(t, sawMissing.Load())
		require.Equal(t, "<nil>", sawHero.Load())
		require.Equal(t, int32(1), conditions.Load(), "the conditions still run when the type may proceed")
	})

	// Go reports the hero missing; the definition in the database decides
	// (during a deploy the worker's may differ).
	for name, opts := range map[string]*worker.WorkflowOpts{
		"TheDatabaseAppliesThePolicy": {LoadHero: (&accounts{}).load, MayProceedWithoutHero: true},
		"TheDatabaseAppliesThePolicyToAHeroCheck": {
			HeroMissing:           func(context.Context, *worker.Step) (bool, error) { return true, nil },
			MayProceedWithoutHero: true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var ran atomic.Bool
			wf := worker.NewWorkflow("Erasure", opts).
				Step("a", func(context.Context, *worker.Step) error { ran.Store(true); return nil }, nil)
			h := quietHarness(t, nil, wf)
			redefine(ctx, t, h, wf, func(definition map[string]any) { delete(definition, "may_proceed_without_hero") })
			id := h.Create(ctx, "Erasure", "Account", "404")

			h.Speedrun(ctx, id, nil)

			require.Equal(t, []string{"a: canceled_hero_missing"}, outcomesOf(ctx, h, id))
			require.False(t, ran.Load())
		})
	}

	t.Run("ALoaderErrorIsTheStepsFailure", func(t *testing.T) {
		t.Parallel()
		heroes := &accounts{byID: map[string]*account{"1": {Name: "Ann"}}}
		var calls atomic.Int32
		unreachable := errors.New("accounts table unreachable")
		wf := worker.NewWorkflow("Greeting", &worker.WorkflowOpts{
			LoadHero: func(ctx context.Context, step *worker.Step) (any, error) {
				if calls.Add(1) == 1 {
					return nil, unreachable
				}
				return heroes.load(ctx, step)
			},
		}).
			OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, Matching: []worker.Matcher{worker.ErrorIs(unreachable)}}).
			Step("a", ok, nil)
		h := quietHarness(t, nil, wf)
		id := h.Create(ctx, "Greeting", "Account", "1")

		h.Speedrun(ctx, id, nil)

		require.Equal(t, []string{"a: reattempted_by_exception", "a: success"}, outcomesOf(ctx, h, id))
		first := h.History(ctx, id)[0]
		require.Equal(t, "load_hero: accounts table unreachable", *first.ErrorMessage)
	})

	t.Run("ALoaderPanicPauses", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("Greeting", &worker.WorkflowOpts{
			LoadHero: func(context.Context, *worker.Step) (any, error) { panic("no accounts") },
		}).Step("a", ok, nil)
		h := quietHarness(t, nil, wf)
		id := h.Create(ctx, "Greeting", "Account", "1")

		h.Speedrun(ctx, id, nil)

		h.AssertWorkflowState(ctx, id, goclient.StatePaused)
		require.Equal(t, []string{"a: paused_by_exception"}, outcomesOf(ctx, h, id))
	})
}

func TestExtendOverrides(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("OptionsGivenReplaceTheBases", func(t *testing.T) {
		t.Parallel()
		base := worker.NewWorkflow("Billing", &worker.WorkflowOpts{Queue: "billing", Priority: 3, IdempotencyTTL: time.Hour}).
			Step("a", ok, nil)
		invoice := base.Extend("Invoice", nil)
		refundOpts := &worker.WorkflowOpts{
			Queue:       "refunds",
			Concurrency: &worker.Concurrency{By: worker.ByHero, Limit: 1},
		}
		refund := base.Extend("Refund", refundOpts)
		urgent := refund.Extend("UrgentRefund", &worker.WorkflowOpts{Priority: 1, IdempotencyTTL: 2 * time.Hour})
		refundOpts.Queue = "changed later" // (reaches no workflow)
		h := quietHarness(t, nil, base, invoice, refund, urgent)

		rows, err := h.Conn().Query(ctx, `
			select format('%s %s %s %s %s', workflow_type, queue, priority, idempotency_ttl,
			  coalesce(definition -> 'concurrency' ->> 'by', '-'))
			from geneva.workflow_definitions order by workflow_type`)
		require.NoError(t, err)
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		require.Equal(t, []string{
			"Billing billing 3 01:00:00 -",
			"Invoice billing 3 01:00:00 -",
			"Refund refunds 3 01:00:00 hero",
			"UrgentRefund refunds 1 02:00:00 hero",
		}, got)
	})

	t.Run("TheExtensionsPoliciesComeFirst", func(t *testing.T) {
		t.Parallel()
		declined := errors.New("card declined")
		base := worker.NewWorkflow("Base", nil).
			OnException(worker.ExceptionPolicy{Action: worker.ActionSkip, Matching: []worker.Matcher{worker.ErrorIs(declined)}}).
			OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, MaxReattempts: 1})
		billing := base.Extend("Billing", nil).Step("charge", always(errors.New("timeout")), nil)
		strict := base.Extend("Strict", nil).
			OnException(worker.ExceptionPolicy{Action: worker.ActionCancel}).
			Step("charge", always(errors.New("timeout")), nil)
		declining := base.Extend("Declining", nil).
			OnException(worker.ExceptionPolicy{Action: worker.ActionCancel}).
			Step("charge", always(declined), nil)
		h := quietHarness(t, nil, billing, strict, declining)
		ids := map[string]int64{}
		for _, wf := range []string{"Billing", "Strict", "Declining"} {
			ids[wf] = h.Create(ctx, wf, "Account", "1")
			h.Speedrun(ctx, ids[wf], nil)
		}

		require.Equal(t, []string{"charge: reattempted_by_exception", "charge: reattempts_exhausted"}, outcomesOf(ctx, h, ids["Billing"]))
		require.Equal(t, []string{"charge: canceled_by_exception"}, outcomesOf(ctx, h, ids["Strict"]),
			"the extension's blanket policy before the base's")
		require.Equal(t, []string{"charge: skipped_by_exception"}, outcomesOf(ctx, h, ids["Declining"]),
			"the base's specific policy before the extension's blanket one")
	})
}

func TestTypeHooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	var (
		mu     sync.Mutex
		events []string
	)
	record := func(who string) worker.Hook {
		return func(ctx context.Context, event worker.HookEvent, step *worker.Step, next func(context.Context) error) error {
			mu.Lock()
			events = append(events, fmt.Sprintf("%s> %s %s %s", who, step.WorkflowType, step.Name, event))
			mu.Unlock()
			err := next(ctx)
			mu.Lock()
			events = append(events, fmt.Sprintf("<%s", who))
			mu.Unlock()
			return err
		}
	}
	heroes := &accounts{byID: map[string]*account{"1": {Name: "Ann"}}}
	// before_step_starts: sees the hero, and may decide the step's error
	declined := errors.New("card declined")
	skipDeclined := func(ctx context.Context, event worker.HookEvent, step *worker.Step, next func(context.Context) error) error {
		if event == worker.EventStep && step.Hero().(*account).Name != "Ann" {
			return errors.New("not Ann's")
		}
		if err := next(ctx); event == worker.EventStep && errors.Is(err, declined) {
			return worker.Skip()
		}
		return nil
	}
	base := worker.NewWorkflow("Hooked", &worker.WorkflowOpts{LoadHero: heroes.load, Hooks: []worker.Hook{record("type")}}).
		Step("a", always(declined), nil)
	extended := base.Extend("Extended", &worker.WorkflowOpts{Hooks: []worker.Hook{record("extension"), skipDeclined}})
	plain := worker.NewWorkflow("Plain", nil).Step("a", always(declined), nil)
	h := quietHarness(t, []worker.Hook{record("worker")}, base, extended, plain)

	for _, wf := range []string{"Hooked", "Extended", "Plain"} {
		id := h.Create(ctx, wf, "Account", "1")
		h.Speedrun(ctx, id, nil)
		switch wf {
		case "Extended":
			require.Equal(t, []string{"a: skipped_by_flow_control"}, outcomesOf(ctx, h, id), "its hook turned the error into Skip")
		default:
			require.Equal(t, []string{"a: paused_by_exception"}, outcomesOf(ctx, h, id), wf)
		}
	}

	var want []string
	for _, event := range []worker.HookEvent{worker.EventPreconditions, worker.EventStep, worker.EventFinalize} {
		want = append(want, "worker> Hooked a "+string(event), "type> Hooked a "+string(event), "<type", "<worker")
	}
	for _, event := range []worker.HookEvent{worker.EventPreconditions, worker.EventStep, worker.EventFinalize} {
		want = append(want, "worker> Extended a "+string(event), "type> Extended a "+string(event),
			"extension> Extended a "+string(event), "<extension", "<type", "<worker")
	}
	for _, event := range []worker.HookEvent{worker.EventPreconditions, worker.EventStep, worker.EventFinalize} {
		want = append(want, "worker> Plain a "+string(event), "<worker")
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, want, events)
}

// docs/workflows.md quotes the examples of example_hero_test.go between
// their docs:NAME:begin and docs:NAME:end markers, one tab less indented.
func TestDocsQuoteHeroExamples(t *testing.T) {
	t.Parallel()
	example, err := os.ReadFile("example_hero_test.go")
	require.NoError(t, err)
	page, err := os.ReadFile("../docs/workflows.md")
	require.NoError(t, err)
	for _, name := range []string{"hero", "extend", "hooks"} {
		text := string(example)
		begin := strings.Index(text, "// docs:"+name+":begin\n")
		end := strings.Index(text, "\t// docs:"+name+":end")
		require.True(t, begin >= 0 && end > begin, "no docs:%s markers", name)
		var lines []string
		for _, line := range strings.Split(strings.TrimRight(text[begin+len("// docs:"+name+":begin\n"):end], "\n"), "\n") {
			lines = append(lines, strings.TrimPrefix(line, "\t"))
		}
		require.Contains(t, string(page), "```go\n"+strings.Join(lines, "\n")+"\n```",
			"docs/workflows.md no longer quotes example_hero_test.go's %s", name)
	}
}
