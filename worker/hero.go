package worker

import (
	"context"
	"errors"
	"slices"

	"github.com/geneva-dev/geneva/internal/protocol"
)

// ErrHeroMissing is what a hero loader (WorkflowOpts.LoadHero) returns, or
// wraps (errors.Is), when the workflow's hero no longer exists. The worker
// reports the hero missing and the database applies the type's policy: the
// workflow is canceled (canceled_hero_missing), or, when the type may proceed
// without its hero (WorkflowOpts.MayProceedWithoutHero), the step runs with a
// nil Hero and Step.HeroMissing set.
var ErrHeroMissing = errors.New("geneva: the hero is missing")

// HeroLoader loads a workflow's hero (WorkflowOpts.LoadHero) before each of
// its steps: the record the step works on, found by step.HeroType and
// step.HeroID in the application's own tables. It returns ErrHeroMissing
// (or an error wrapping it) when there is none; any other error is the
// step's failure, through its exception policies.
type HeroLoader func(ctx context.Context, step *Step) (any, error)

// Hero returns what the workflow's hero loader (WorkflowOpts.LoadHero)
// loaded before this step: in the step, its conditions, handlers and hooks.
// Nil without a loader, before it ran, and when the hero is missing.
func (s *Step) Hero() any { return s.hero }

// heroCheck runs the workflow's hero loader, then its HeroMissing check
// (unless the loader found the hero missing), and says whether the hero is
// missing (also in step.HeroMissing). A check that returns Cancel() or
// Skip() decides as a cancel_if or skip_if that holds (decided); an error
// of either is the step's failure.
func heroCheck(ctx context.Context, wf *registeredWorkflow, step *Step) (missing bool, decided protocol.Precondition, err error) {
	if wf.opts.LoadHero != nil {
		hero, err := callLoadHero(ctx, wf.opts.LoadHero, step)
		switch {
		case errors.Is(err, ErrHeroMissing):
			step.HeroMissing = true
			return true, protocol.PreconditionNone, nil
		case err != nil:
			return false, protocol.PreconditionNone, &ConditionError{Condition: "load_hero", Err: err}
		}
		step.hero = hero
	}
	if wf.opts.HeroMissing != nil {
		found, err := evalCondition(ctx, "hero_missing", wf.opts.HeroMissing, protocol.PreconditionHeroMissing, step)
		switch {
		case err != nil || found == protocol.PreconditionCancel || found == protocol.PreconditionSkip:
			return false, found, err
		case found == protocol.PreconditionHeroMissing:
			step.HeroMissing = true
			step.hero = nil
			return true, protocol.PreconditionNone, nil
		}
	}
	return false, protocol.PreconditionNone, nil
}

func callLoadHero(ctx context.Context, load HeroLoader, step *Step) (hero any, err error) {
	defer recoverInto(&err)
	return load(ctx, step)
}

// typeHooks are the hooks of wf's steps: the worker's (outermost), then the
// type's own (WorkflowOpts.Hooks).
func typeHooks(workerHooks []Hook, wf *Workflow) []Hook {
	if len(wf.opts.Hooks) == 0 {
		return workerHooks
	}
	return append(slices.Clip(workerHooks), wf.opts.Hooks...)
}

// hooksOf are the hooks that wrap step's events: the worker's, then its
// workflow type's.
func (e *executor) hooksOf(step *Step) []Hook {
	if wf := e.registry[step.WorkflowType]; wf != nil && wf.hooks != nil {
		return wf.hooks
	}
	return e.hooks
}
