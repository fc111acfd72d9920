package worker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/worker"
)

// WorkflowOpts.Concurrency and RateLimit become the definition's
// "concurrency" and "rate_limit" (per in seconds, as the waits are);
// StepOpts.Limits and ResumableOpts.Limits a step's "limits".
func TestLimitDefinition(t *testing.T) {
	t.Parallel()

	t.Run("BecomesJSON", func(t *testing.T) {
		t.Parallel()
		concurrency := &worker.Concurrency{By: worker.ByGroup, Limit: 2}
		wf := worker.NewWorkflow("TenantSync", &worker.WorkflowOpts{
			Concurrency: concurrency,
			RateLimit:   &worker.RateLimit{By: worker.ByHero, Limit: 100, Per: 1500 * time.Millisecond},
		}).
			Step("fetch", ok, &worker.StepOpts{Limits: []string{"payments_api", "mail"}}).
			ResumableStep("store", func(context.Context, *worker.Iteration) error { return nil }, &worker.ResumableOpts{Limits: []string{"db"}}).
			Step("done", ok, nil)
		concurrency.Limit = 9 // the workflow keeps its own copy

		require.JSONEq(t, `{
			"concurrency": {"by": "group", "limit": 2},
			"rate_limit": {"by": "hero", "limit": 100, "per": 1.5},
			"steps": [
				{"name": "fetch", "limits": ["payments_api", "mail"]},
				{"name": "store", "limits": ["db"]},
				{"name": "done"}
			]}`, string(mustDefinition(t, wf)))
	})

	t.Run("EveryBy", func(t *testing.T) {
		t.Parallel()
		for _, by := range []worker.LimitBy{worker.ByGroup, worker.ByHero, worker.ByType} {
			wf := worker.NewWorkflow("W", &worker.WorkflowOpts{
				Concurrency: &worker.Concurrency{By: by, Limit: 1},
				RateLimit:   &worker.RateLimit{By: by, Limit: 3, Per: time.Minute},
			}).Step("a", ok, nil)
			require.JSONEq(t, `{"concurrency": {"by": "`+string(by)+`", "limit": 1},
				"rate_limit": {"by": "`+string(by)+`", "limit": 3, "per": 60},
				"steps": [{"name": "a"}]}`, string(mustDefinition(t, wf)))
		}
	})

	t.Run("NoLimitsNoKeys", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("W", nil).Step("a", ok, &worker.StepOpts{Limits: []string{}})
		require.JSONEq(t, `{"steps": [{"name": "a"}]}`, string(mustDefinition(t, wf)))
	})

	for name, c := range map[string]struct {
		opts    worker.WorkflowOpts
		limits  []string
		message string
	}{
		"ConcurrencyWithoutBy": {worker.WorkflowOpts{Concurrency: &worker.Concurrency{Limit: 2}},
			nil, "Concurrency: no By (ByGroup, ByHero, ByType or ByParent)"},
		"ConcurrencyUnknownBy": {worker.WorkflowOpts{Concurrency: &worker.Concurrency{By: "tenant", Limit: 2}},
			nil, `Concurrency: unknown By "tenant" (group, hero, type or parent)`},
		"ConcurrencyZero": {worker.WorkflowOpts{Concurrency: &worker.Concurrency{By: worker.ByGroup}},
			nil, "Concurrency: the Limit 0 is not between 1 and 2147483647"},
		"ConcurrencyTooBig": {worker.WorkflowOpts{Concurrency: &worker.Concurrency{By: worker.ByGroup, Limit: 1 << 31}},
			nil, "the Limit 2147483648 is not between"},
		"RateNegative": {worker.WorkflowOpts{RateLimit: &worker.RateLimit{By: worker.ByType, Limit: -1, Per: time.Second}},
			nil, "RateLimit: the Limit -1 is not between"},
		"RateWithoutPer": {worker.WorkflowOpts{RateLimit: &worker.RateLimit{By: worker.ByType, Limit: 5}},
			nil, "RateLimit: the window Per 0s must be at least 1µs"},
		"RatePerTooLong": {worker.WorkflowOpts{RateLimit: &worker.RateLimit{By: worker.ByType, Limit: 5, Per: worker.LongestWait + time.Hour}},
			nil, "is longer than"},
		"EmptyLimitName": {worker.WorkflowOpts{}, []string{"a", ""}, "step a: the name Limits[1] is empty"},
		"LimitNameTwice": {worker.WorkflowOpts{}, []string{"api", "api"}, `step a: the limit "api" is named twice in Limits`},
		"LimitNameTooLong": {worker.WorkflowOpts{}, []string{strings.Repeat("l", 256)},
			"is 256 bytes long; the limit is 255"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			wf := worker.NewWorkflow("W", &c.opts).Step("a", ok, &worker.StepOpts{Limits: c.limits})
			require.ErrorContains(t, wf.Validate(), c.message)
			_, err := worker.New(nil, &worker.Config{Workflows: []*worker.Workflow{wf}})
			require.ErrorContains(t, err, c.message)
		})
	}
}
