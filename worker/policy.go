package worker

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Action is what an exception policy does with a failed step.
type Action string

const (
	// ActionPause pauses the workflow (the default when no policy applies).
	ActionPause Action = "pause"
	// ActionCancel cancels the workflow.
	ActionCancel Action = "cancel"
	// ActionSkip skips the step; the next one runs.
	ActionSkip Action = "skip"
	// ActionReattempt runs the step again after the policy's Wait, up to
	// MaxReattempts consecutive times.
	ActionReattempt Action = "reattempt"
)

// Report says when a failed step's error goes to the ErrorReporter.
type Report string

const (
	// ReportAlways reports every error (the default).
	ReportAlways Report = "always"
	// ReportNever reports none: the error is expected.
	ReportNever Report = "never"
	// ReportTerminalOnly reports an error only when the step is not
	// reattempted (e.g. when reattempts run out).
	ReportTerminalOnly Report = "terminal_only"
)

// Unlimited, as an ExceptionPolicy's MaxReattempts, sets no limit.
const Unlimited = -1

// LongestWait is the longest wait Geneva takes: 100 years (a year of 365.25
// days), as SQL bounds every wait. Validate refuses longer waits in a
// definition; a longer Reattempt or Suspend wait (or a handler's) waits
// LongestWait.
const LongestWait = 3_155_760_000 * time.Second

// Handler decides what to do with a step's error, for an ExceptionPolicy. It
// returns a flow-control value (Reattempt, Skip, Cancel, Pause, Finished); nil
// pauses the workflow.
type Handler func(ctx context.Context, step *Step, err error) error

// ExceptionPolicy says what happens when a step returns an error (or panics).
// It is a plain value: store it in a variable and share it across workflow
// types.
//
//	var TransientRetry = worker.ExceptionPolicy{
//		Action:         worker.ActionReattempt,
//		Wait:           30 * time.Second,
//		MaxReattempts:  5,
//		TerminalAction: worker.ActionCancel,
//	}
//
// SQL resolves which policy applies (docs/workflows.md, "Exception policies"): a step's own single
// policy wins outright; a step's list tries its specific policies (those with
// Matching) in order, then its first blanket one; then the workflow's
// policies, most recent first; then pause.
type ExceptionPolicy struct {
	// Action is what to do. Leave it empty when Handler decides.
	Action Action

	// Matching restricts the policy to errors one of these matchers matches.
	//
	// Defaults to none: a blanket policy that applies to every error.
	Matching []Matcher

	// Wait is how long a reattempt waits. Only for ActionReattempt.
	Wait time.Duration

	// MaxReattempts caps consecutive exception reattempts of the step (a
	// success resets the count; Reattempt signals do not count): N allows N
	// reattempts. Only for ActionReattempt.
	//
	// Defaults (0) to 100 for a step's policy and to no limit for a workflow's;
	// Unlimited sets no limit.
	MaxReattempts int

	// Backoff makes each consecutive reattempt wait longer: the k-th
	// consecutive exception reattempt of the step waits Wait * Backoff^(k-1),
	// at most MaxWait. A number from 1 to 100; 2 doubles the wait each time.
	// Only for ActionReattempt.
	//
	// Defaults to 0: every reattempt waits Wait.
	Backoff float64

	// MaxWait caps the waits a Backoff grows.
	//
	// Defaults to one day.
	MaxWait time.Duration

	// TerminalAction applies when reattempts run out: ActionPause,
	// ActionCancel or ActionSkip. Only for ActionReattempt.
	//
	// Defaults to ActionPause.
	TerminalAction Action

	// Report says when the error goes to the ErrorReporter.
	//
	// Defaults to ReportAlways.
	Report Report

	// Handler decides instead of Action; it cannot be combined with Action,
	// Wait, MaxReattempts, Backoff, MaxWait or TerminalAction (Validate
	// refuses them).
	Handler Handler
}

// Validate reports what makes the policy unusable, if anything: a Handler
// combined with Action, Wait, MaxReattempts, Backoff, MaxWait or
// TerminalAction (a handler decides those itself), or a Wait or MaxWait
// outside 0 to LongestWait. Workflow.Validate, and so worker.New, calls it for
// every policy of a workflow; the database checks the rest of a policy when
// the definition is registered.
func (p ExceptionPolicy) Validate() error {
	var errs []error
	if p.Handler != nil {
		var with []string
		for _, field := range []struct {
			name string
			set  bool
		}{
			{"Action", p.Action != ""},
			{"Wait", p.Wait != 0},
			{"MaxReattempts", p.MaxReattempts != 0},
			{"Backoff", p.Backoff != 0},
			{"MaxWait", p.MaxWait != 0},
			{"TerminalAction", p.TerminalAction != ""},
		} {
			if field.set {
				with = append(with, field.name)
			}
		}
		if len(with) > 0 {
			errs = append(errs, fmt.Errorf("a Handler cannot be combined with %s: the handler decides", strings.Join(with, ", ")))
		}
	}
	for _, wait := range []struct {
		name  string
		value time.Duration
	}{{"Wait", p.Wait}, {"MaxWait", p.MaxWait}} {
		switch {
		case wait.value < 0:
			errs = append(errs, fmt.Errorf("%s %s is negative", wait.name, wait.value))
		case wait.value > LongestWait:
			errs = append(errs, fmt.Errorf("%s %s is longer than %s", wait.name, wait.value, LongestWait))
		}
	}
	return errors.Join(errs...)
}

// Matcher tells whether an exception policy applies to an error. The worker
// sends SQL the names of the matchers that match a step's error, besides the
// error's type names, and SQL matches the names listed in a policy.
type Matcher interface {
	// MatcherName is the name stored in the definition's "matching" list.
	MatcherName() string
	// MatchError reports whether err matches.
	MatchError(err error) bool
}

// ErrorAs matches errors with an E in their chain (errors.As), e.g.
// worker.ErrorAs[*net.OpError](). Its name is E's type name.
func ErrorAs[E error]() Matcher {
	return errorAsMatcher[E]{}
}

type errorAsMatcher[E error] struct{}

func (errorAsMatcher[E]) MatcherName() string { return typeName(reflect.TypeFor[E]()) }

func (errorAsMatcher[E]) MatchError(err error) bool {
	var target E
	return errors.As(err, &target)
}

// ErrorIs matches errors with target in their chain (errors.Is), e.g. a
// sentinel error. Its name is target's text.
func ErrorIs(target error) Matcher {
	return errorIsMatcher{target: target}
}

type errorIsMatcher struct{ target error }

func (m errorIsMatcher) MatcherName() string {
	if m.target == nil {
		return "<nil>"
	}
	return m.target.Error()
}

func (m errorIsMatcher) MatchError(err error) bool {
	return m.target != nil && errors.Is(err, m.target)
}

// ClassName matches errors with a type of that name in their chain, e.g.
// worker.ClassName("*net.OpError"): names in definitions written by hand, or
// for other languages, match the same way.
func ClassName(name string) Matcher {
	return classNameMatcher(name)
}

type classNameMatcher string

func (m classNameMatcher) MatcherName() string { return string(m) }

func (m classNameMatcher) MatchError(err error) bool {
	for _, name := range errorTypeNames(err) {
		if name == string(m) {
			return true
		}
	}
	return false
}
