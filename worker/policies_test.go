package worker_test

// The exception-handling examples of the GenevaDrive manual, in Go, each run
// through the real SQL functions (workertest runs the worker's executor
// inline, moving the engine's clock over the waits) with real Go errors, and
// asserting the rows they leave.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
	"github.com/geneva-dev/geneva/worker/workertest"
)

// Errors standing in for the manual's Ruby exception classes.
type (
	timeoutError     struct{}
	oauthError       struct{ msg string }
	clientError      struct{}
	rateLimitedError struct{ retryAfter time.Duration }
	throttledError   struct{ retryAfter time.Duration }
)

func (timeoutError) Error() string        { return "timeout" }
func (e *oauthError) Error() string       { return "oauth: " + e.msg }
func (*clientError) Error() string        { return "client error 403" }
func (e *rateLimitedError) Error() string { return "rate limited" }
func (e *throttledError) Error() string   { return "throttled" }

var errConnectionFailed = errors.New("connection failed")

// failing returns a step that fails with errs in turn, then succeeds.
func failing(errs ...error) worker.StepFunc {
	var mu sync.Mutex
	calls := 0
	return func(ctx context.Context, step *worker.Step) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls <= len(errs) {
			return errs[calls-1]
		}
		return nil
	}
}

// always returns a step that always fails with err.
func always(err error) worker.StepFunc {
	return func(ctx context.Context, step *worker.Step) error { return err }
}

// policyHarness runs the workflows inline; reported collects what the
// ErrorReporter got.
func policyHarness(t *testing.T, workflows ...*worker.Workflow) (*workertest.Harness, *[]string) {
	t.Helper()
	var (
		mu       sync.Mutex
		reported []string
	)
	conn := dbtest.NewConnAs(t, dbtest.NewConfig(t), dbtest.Harness)
	h := workertest.New(t, conn, &worker.Config{
		Workflows: workflows,
		ErrorReporter: func(ctx context.Context, step *worker.Step, err error) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, step.Name+": "+err.Error())
		},
	})
	return h, &reported
}

// outcomesOf lists "step: outcome" for each execution of the workflow.
func outcomesOf(ctx context.Context, h *workertest.Harness, id int64) []string {
	var outcomes []string
	for _, e := range h.History(ctx, id) {
		outcomes = append(outcomes, e.StepName+": "+string(*e.Outcome))
	}
	return outcomes
}

func repeat(s string, n int) []string {
	var list []string
	for range n {
		list = append(list, s)
	}
	return list
}

func TestManualExceptionPolicies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// "By default, unhandled exceptions pause the workflow. The step execution
	// records the error message and backtrace."
	t.Run("DefaultPauses", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("Risky", nil).
			Step("risky_operation", always(fmt.Errorf("calling service: %w", errConnectionFailed)), nil)
		h, reported := policyHarness(t, wf)
		id := h.Create(ctx, "Risky", "User", "1")

		h.Speedrun(ctx, id, nil)

		h.AssertWorkflowState(ctx, id, goclient.StatePaused)
		execution := h.History(ctx, id)[0]
		require.Equal(t, goclient.OutcomePausedByException, *execution.Outcome)
		require.Equal(t, "*errors.errorString", *execution.ErrorClassName)
		require.Equal(t, "calling service: connection failed", *execution.ErrorMessage)
		require.Equal(t, []string{"risky_operation: calling service: connection failed"}, *reported)
	})

	// step :call_external_api, on_exception: :reattempt!
	t.Run("StepLevelReattempt", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("ResilientApi", nil).
			Step("call_external_api", failing(timeoutError{}, timeoutError{}, timeoutError{}), &worker.StepOpts{
				OnException: &worker.ExceptionPolicy{Action: worker.ActionReattempt},
			})
		h, _ := policyHarness(t, wf)
		id := h.Create(ctx, "ResilientApi", "User", "1")

		h.Speedrun(ctx, id, nil)

		require.Equal(t, append(repeat("call_external_api: reattempted_by_exception", 3), "call_external_api: success"), outcomesOf(ctx, h, id))
	})

	// on_exception :reattempt!, max_reattempts: 5 (class level), with
	// step :send_email, on_exception: :skip! overriding it.
	t.Run("WorkflowLevelWithStepOverride", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("Resilient", nil).
			OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, MaxReattempts: 5}).
			Step("fetch_data", failing(timeoutError{}, timeoutError{}), nil).
			Step("send_email", always(errors.New("smtp down")), &worker.StepOpts{
				OnException: &worker.ExceptionPolicy{Action: worker.ActionSkip},
			})
		h, _ := policyHarness(t, wf)
		id := h.Create(ctx, "Resilient", "User", "1")

		h.Speedrun(ctx, id, nil)

		h.AssertWorkflowState(ctx, id, goclient.StateFinished)
		require.Equal(t, []string{
			"fetch_data: reattempted_by_exception", "fetch_data: reattempted_by_exception", "fetch_data: success",
			"send_email: skipped_by_exception",
		}, outcomesOf(ctx, h, id))
	})

	// OAuthWorkflow: specific policies for OAuth2::Error (reattempt, 15 s) and
	// Google::Apis::ClientError (cancel), and a blanket reattempt (max 3).
	t.Run("SeveralWorkflowLevelPolicies", func(t *testing.T) {
		t.Parallel()
		oauth := func() *worker.Workflow {
			return worker.NewWorkflow("OAuth", nil).
				OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, Wait: 15 * time.Second,
					Matching: []worker.Matcher{worker.ErrorAs[*oauthError]()}}).
				OnException(worker.ExceptionPolicy{Action: worker.ActionCancel,
					Matching: []worker.Matcher{worker.ErrorAs[*clientError]()}}).
				OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, MaxReattempts: 3})
		}
		h, _ := policyHarness(t,
			oauth().Step("sync", failing(&oauthError{"token expired"}, fmt.Errorf("listing: %w", &clientError{})), nil),
			oauth().Extend("OAuthFlaky", nil).Step("sync", always(timeoutError{}), nil))
		id := h.Create(ctx, "OAuth", "User", "1")
		flaky := h.Create(ctx, "OAuthFlaky", "User", "1")

		h.Speedrun(ctx, id, nil)
		h.Speedrun(ctx, flaky, nil)

		require.Equal(t, []string{"sync: reattempted_by_exception", "sync: canceled_by_exception"}, outcomesOf(ctx, h, id))
		history := h.History(ctx, id)
		require.Equal(t, 15*time.Second, history[1].ScheduledFor.Sub(*history[0].FinishedAt))
		require.Equal(t, append(repeat("sync: reattempted_by_exception", 3), "sync: reattempts_exhausted"), outcomesOf(ctx, h, flaky))
		h.AssertWorkflowState(ctx, flaky, goclient.StatePaused)
	})

	// step :sync_to_crm, on_exception: :reattempt!, max_reattempts: 5; and
	// step :flaky_api, ..., max_reattempts: 10, terminal_action: :cancel!
	t.Run("LimitedReattemptsAndTerminalAction", func(t *testing.T) {
		t.Parallel()
		h, _ := policyHarness(t,
			worker.NewWorkflow("ExternalApi", nil).Step("sync_to_crm", always(timeoutError{}), &worker.StepOpts{
				OnException: &worker.ExceptionPolicy{Action: worker.ActionReattempt, MaxReattempts: 5},
			}),
			worker.NewWorkflow("Flaky", nil).Step("flaky_api", always(timeoutError{}), &worker.StepOpts{
				OnException: &worker.ExceptionPolicy{Action: worker.ActionReattempt, MaxReattempts: 10, TerminalAction: worker.ActionCancel},
			}),
			worker.NewWorkflow("Skippy", nil).
				Step("optional", always(timeoutError{}), &worker.StepOpts{
					OnException: &worker.ExceptionPolicy{Action: worker.ActionReattempt, MaxReattempts: 1, TerminalAction: worker.ActionSkip},
				}).
				Step("after", failing(), nil))
		crm := h.Create(ctx, "ExternalApi", "User", "1")
		flaky := h.Create(ctx, "Flaky", "User", "1")
		skippy := h.Create(ctx, "Skippy", "User", "1")

		h.Speedrun(ctx, crm, nil)
		h.Speedrun(ctx, flaky, nil)
		h.Speedrun(ctx, skippy, nil)

		require.Equal(t, append(repeat("sync_to_crm: reattempted_by_exception", 5), "sync_to_crm: reattempts_exhausted"), outcomesOf(ctx, h, crm))
		h.AssertWorkflowState(ctx, crm, goclient.StatePaused)
		require.Len(t, h.History(ctx, flaky), 11)
		h.AssertWorkflowState(ctx, flaky, goclient.StateCanceled)
		require.Equal(t, []string{"optional: reattempted_by_exception", "optional: reattempts_exhausted", "after: success"}, outcomesOf(ctx, h, skippy))
	})

	// TRANSIENT_RETRY = ExceptionPolicy.new(:reattempt!, wait: 30.seconds,
	// max_reattempts: 5, terminal_action: :cancel!), shared by OrderWorkflow
	// and ShippingWorkflow.
	t.Run("ReusablePolicy", func(t *testing.T) {
		t.Parallel()
		transientRetry := worker.ExceptionPolicy{
			Action: worker.ActionReattempt, Wait: 30 * time.Second, MaxReattempts: 5, TerminalAction: worker.ActionCancel,
		}
		h, _ := policyHarness(t,
			worker.NewWorkflow("Order", nil).Step("charge_card", always(timeoutError{}), &worker.StepOpts{OnException: &transientRetry}),
			worker.NewWorkflow("Shipping", nil).Step("book_courier", failing(timeoutError{}), &worker.StepOpts{OnException: &transientRetry}))
		order := h.Create(ctx, "Order", "Order", "1")
		shipping := h.Create(ctx, "Shipping", "Order", "1")

		h.Speedrun(ctx, order, nil)
		h.Speedrun(ctx, shipping, nil)

		h.AssertWorkflowState(ctx, order, goclient.StateCanceled)
		require.Len(t, h.History(ctx, order), 6)
		require.Equal(t, []string{"book_courier: reattempted_by_exception", "book_courier: success"}, outcomesOf(ctx, h, shipping))
	})

	// TIMEOUT_RETRY (matching: Net::OpenTimeout) and OAUTH_CANCEL (matching:
	// [OAuth2::Error, "Faraday::ConnectionFailed"]): matching by type, by
	// sentinel, and by name.
	t.Run("MatchingPolicies", func(t *testing.T) {
		t.Parallel()
		timeoutRetry := worker.ExceptionPolicy{
			Action: worker.ActionReattempt, Matching: []worker.Matcher{worker.ErrorAs[timeoutError]()},
			Wait: 10 * time.Second, MaxReattempts: 5,
		}
		oauthCancel := worker.ExceptionPolicy{
			Action:   worker.ActionCancel,
			Matching: []worker.Matcher{worker.ErrorAs[*oauthError](), worker.ErrorIs(errConnectionFailed), worker.ClassName("*net.OpError")},
		}
		policies := []worker.ExceptionPolicy{timeoutRetry, oauthCancel}
		h, _ := policyHarness(t,
			worker.NewWorkflow("Wrapped", nil).Step("a", failing(fmt.Errorf("step: %w", timeoutError{}), fmt.Errorf("step: %w", errConnectionFailed)),
				&worker.StepOpts{OnExceptionList: policies}),
			worker.NewWorkflow("Joined", nil).Step("a", always(errors.Join(errors.New("first"), &oauthError{"revoked"})),
				&worker.StepOpts{OnExceptionList: policies}),
			worker.NewWorkflow("Panicking", nil).Step("a", func(ctx context.Context, step *worker.Step) error {
				panic(timeoutError{}) // a panic with an error value matches like the error
			}, &worker.StepOpts{OnExceptionList: []worker.ExceptionPolicy{{Action: worker.ActionSkip, Matching: []worker.Matcher{worker.ErrorAs[timeoutError]()}}}}))
		wrapped := h.Create(ctx, "Wrapped", "User", "1")
		joined := h.Create(ctx, "Joined", "User", "1")
		panicking := h.Create(ctx, "Panicking", "User", "1")

		h.Speedrun(ctx, wrapped, nil)
		h.Speedrun(ctx, joined, nil)
		h.Speedrun(ctx, panicking, nil)

		require.Equal(t, []string{"a: reattempted_by_exception", "a: canceled_by_exception"}, outcomesOf(ctx, h, wrapped))
		require.Equal(t, []string{"a: canceled_by_exception"}, outcomesOf(ctx, h, joined))
		require.Equal(t, []string{"a: skipped_by_exception"}, outcomesOf(ctx, h, panicking))
		execution := h.History(ctx, wrapped)[1]
		require.Equal(t, []any{"*fmt.wrapError", "*errors.errorString", "connection failed"}, execution.Metadata["error_classes"],
			"the chain's types, then the matchers that matched")
	})

	// ApiWorkflow: on_exception Timeout::Error, action: :reattempt!, wait: 10,
	// max_reattempts: 3; on_exception :cancel! for everything else.
	t.Run("SpecificThenBlanketAtWorkflowLevel", func(t *testing.T) {
		t.Parallel()
		api := worker.NewWorkflow("Api", nil).
			OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, Matching: []worker.Matcher{worker.ErrorAs[timeoutError]()},
				Wait: 10 * time.Second, MaxReattempts: 3}).
			OnException(worker.ExceptionPolicy{Action: worker.ActionCancel})
		h, _ := policyHarness(t, api.Step("call_api", failing(timeoutError{}, errors.New("500")), nil))
		id := h.Create(ctx, "Api", "User", "1")

		h.Speedrun(ctx, id, nil)

		require.Equal(t, []string{"call_api: reattempted_by_exception", "call_api: canceled_by_exception"}, outcomesOf(ctx, h, id))
	})

	// CalendarSyncWorkflow: a composable list [reattempt Net::OpenTimeout
	// (10 s, max 5), cancel OAuth2::Error, skip (blanket)] on step
	// sync_events; send_confirmation runs after a skip.
	t.Run("ComposableStepPolicies", func(t *testing.T) {
		t.Parallel()
		calendar := func(name string, sync worker.StepFunc) *worker.Workflow {
			return worker.NewWorkflow(name, nil).
				Step("sync_events", sync, &worker.StepOpts{OnExceptionList: []worker.ExceptionPolicy{
					{Action: worker.ActionReattempt, Matching: []worker.Matcher{worker.ErrorAs[timeoutError]()}, Wait: 10 * time.Second, MaxReattempts: 5},
					{Action: worker.ActionCancel, Matching: []worker.Matcher{worker.ErrorAs[*oauthError]()}},
					{Action: worker.ActionSkip},
				}}).
				Step("send_confirmation", failing(), nil)
		}
		h, _ := policyHarness(t,
			calendar("CalendarTimeout", failing(timeoutError{})),
			calendar("CalendarOAuth", always(&oauthError{"revoked"})),
			calendar("CalendarOther", always(errors.New("unexpected"))))
		timeout := h.Create(ctx, "CalendarTimeout", "User", "1")
		oauth := h.Create(ctx, "CalendarOAuth", "User", "1")
		other := h.Create(ctx, "CalendarOther", "User", "1")

		h.Speedrun(ctx, timeout, nil)
		h.Speedrun(ctx, oauth, nil)
		h.Speedrun(ctx, other, nil)

		require.Equal(t, []string{"sync_events: reattempted_by_exception", "sync_events: success", "send_confirmation: success"}, outcomesOf(ctx, h, timeout))
		require.Equal(t, []string{"sync_events: canceled_by_exception"}, outcomesOf(ctx, h, oauth))
		require.Equal(t, []string{"sync_events: skipped_by_exception", "send_confirmation: success"}, outcomesOf(ctx, h, other))
	})

	// RobustApiWorkflow: on_exception :pause! at class level; a step list with
	// only [reattempt Timeout::Error, max 3]: unmatched errors fall through.
	t.Run("StepListFallsThroughToWorkflow", func(t *testing.T) {
		t.Parallel()
		wf := worker.NewWorkflow("RobustApi", nil).
			OnException(worker.ExceptionPolicy{Action: worker.ActionPause}).
			Step("call_api", failing(timeoutError{}, errors.New("bad request")), &worker.StepOpts{OnExceptionList: []worker.ExceptionPolicy{
				{Action: worker.ActionReattempt, Matching: []worker.Matcher{worker.ErrorAs[timeoutError]()}, MaxReattempts: 3},
			}})
		h, _ := policyHarness(t, wf)
		id := h.Create(ctx, "RobustApi", "User", "1")

		h.Speedrun(ctx, id, nil)

		require.Equal(t, []string{"call_api: reattempted_by_exception", "call_api: paused_by_exception"}, outcomesOf(ctx, h, id))
		require.Equal(t, "workflow", h.History(ctx, id)[1].Metadata["policy"].(map[string]any)["level"])
	})

	// The global reattempt cap: [reattempt Timeout::Error (max 10), reattempt
	// RateLimitError (max 3, terminal cancel)] caps at 3 when the errors
	// alternate; the 4th failure's own policy decides the terminal action.
	t.Run("GlobalReattemptCap", func(t *testing.T) {
		t.Parallel()
		policies := []worker.ExceptionPolicy{
			{Action: worker.ActionReattempt, Matching: []worker.Matcher{worker.ErrorAs[timeoutError]()}, MaxReattempts: 10},
			{Action: worker.ActionReattempt, Matching: []worker.Matcher{worker.ErrorAs[*rateLimitedError]()}, MaxReattempts: 3, TerminalAction: worker.ActionCancel},
		}
		h, _ := policyHarness(t,
			worker.NewWorkflow("CapTimeout", nil).Step("sync",
				failing(timeoutError{}, &rateLimitedError{}, timeoutError{}, timeoutError{}), &worker.StepOpts{OnExceptionList: policies}),
			worker.NewWorkflow("CapRateLimit", nil).Step("sync",
				failing(timeoutError{}, &rateLimitedError{}, timeoutError{}, &rateLimitedError{}), &worker.StepOpts{OnExceptionList: policies}),
			worker.NewWorkflow("AllTimeouts", nil).Step("sync", always(timeoutError{}), &worker.StepOpts{OnExceptionList: policies}))
		byTimeout := h.Create(ctx, "CapTimeout", "User", "1")
		byRateLimit := h.Create(ctx, "CapRateLimit", "User", "1")
		allTimeouts := h.Create(ctx, "AllTimeouts", "User", "1")

		h.Speedrun(ctx, byTimeout, nil)
		h.Speedrun(ctx, byRateLimit, nil)
		h.Speedrun(ctx, allTimeouts, nil)

		exhausted := append(repeat("sync: reattempted_by_exception", 3), "sync: reattempts_exhausted")
		require.Equal(t, exhausted, outcomesOf(ctx, h, byTimeout))
		h.AssertWorkflowState(ctx, byTimeout, goclient.StatePaused)
		require.Equal(t, exhausted, outcomesOf(ctx, h, byRateLimit))
		h.AssertWorkflowState(ctx, byRateLimit, goclient.StateCanceled)
		require.Equal(t, exhausted, outcomesOf(ctx, h, allTimeouts), "even Timeout::Error's own 10 is capped at 3")
	})

	// SmartRetryWorkflow: imperative handlers; a handler that decides nothing
	// pauses.
	t.Run("ImperativeHandlers", func(t *testing.T) {
		t.Parallel()
		smart := worker.NewWorkflow("SmartRetryBase", nil).
			OnException(worker.ExceptionPolicy{Matching: []worker.Matcher{worker.ErrorAs[*rateLimitedError]()},
				Handler: func(ctx context.Context, step *worker.Step, err error) error {
					var limited *rateLimitedError
					errors.As(err, &limited)
					return worker.Reattempt(limited.retryAfter)
				}}).
			OnException(worker.ExceptionPolicy{Handler: func(ctx context.Context, step *worker.Step, err error) error {
				switch {
				case strings.Contains(err.Error(), "temporary"):
					return worker.Reattempt(0)
				case strings.Contains(err.Error(), "fatal"):
					return worker.Cancel()
				}
				return nil
			}})
		h, _ := policyHarness(t,
			smart.Extend("SmartRetry", nil).Step("call_api", failing(&rateLimitedError{retryAfter: 2 * time.Minute}, errors.New("temporary glitch"), errors.New("fatal: gone")), nil),
			smart.Extend("Undecided", nil).Step("call_api", always(errors.New("who knows")), nil))
		id := h.Create(ctx, "SmartRetry", "User", "1")
		undecided := h.Create(ctx, "Undecided", "User", "1")

		h.Speedrun(ctx, id, nil)
		h.Speedrun(ctx, undecided, nil)

		require.Equal(t, []string{
			"call_api: reattempted_by_exception", "call_api: reattempted_by_exception", "call_api: canceled_by_exception",
		}, outcomesOf(ctx, h, id))
		history := h.History(ctx, id)
		require.Equal(t, 2*time.Minute, history[1].ScheduledFor.Sub(*history[0].FinishedAt))
		require.Equal(t, []string{"call_api: paused_by_exception"}, outcomesOf(ctx, h, undecided))
	})

	// "Imperative handlers cannot be combined with max_reattempts:, wait:, or
	// terminal_action:" — refused before anything reaches the database, and
	// by the database for definitions written by hand.
	t.Run("HandlerWithLimitsIsRefused", func(t *testing.T) {
		t.Parallel()
		_, err := worker.NewRunner(&worker.Config{Workflows: []*worker.Workflow{
			worker.NewWorkflow("Bad", nil).OnException(worker.ExceptionPolicy{
				Handler:       func(ctx context.Context, step *worker.Step, err error) error { return nil },
				MaxReattempts: 3,
			}).Step("a", failing(), nil),
		}})
		require.ErrorContains(t, err, "a Handler cannot be combined with MaxReattempts")

		conn := dbtest.NewConnAs(t, dbtest.NewConfig(t), dbtest.Harness)
		_, err = conn.Exec(ctx, `select geneva.define_workflow('Bad', '{"steps": [], "on_exception": {"handler": "h", "max_reattempts": 3}}')`)
		require.ErrorContains(t, err, "a handler cannot be combined with wait, max_reattempts")
	})

	// Error reporting control: report: :never on a handler for
	// Pecorino::Throttle::Throttled; report: :terminal_only on a reattempt
	// that ends in cancel; the blanket pause of a list reports by default.
	t.Run("ErrorReporting", func(t *testing.T) {
		t.Parallel()
		h, reported := policyHarness(t,
			worker.NewWorkflow("CalendarSync", nil).
				OnException(worker.ExceptionPolicy{Matching: []worker.Matcher{worker.ErrorAs[*throttledError]()}, Report: worker.ReportNever,
					Handler: func(ctx context.Context, step *worker.Step, err error) error {
						var throttled *throttledError
						errors.As(err, &throttled)
						return worker.Reattempt(min(max(throttled.retryAfter, 10*time.Second), 600*time.Second))
					}}).
				OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, Matching: []worker.Matcher{worker.ErrorAs[timeoutError]()},
					Wait: 10 * time.Second, MaxReattempts: 2, TerminalAction: worker.ActionCancel, Report: worker.ReportTerminalOnly}).
				Step("sync_events", failing(&throttledError{retryAfter: time.Second}, timeoutError{}, timeoutError{}, timeoutError{}), nil),
			worker.NewWorkflow("CallApi", nil).Step("call_api", failing(timeoutError{}, &rateLimitedError{}), &worker.StepOpts{
				OnExceptionList: []worker.ExceptionPolicy{
					{Action: worker.ActionReattempt, Matching: []worker.Matcher{worker.ErrorAs[timeoutError]()}, Report: worker.ReportNever, MaxReattempts: 3},
					{Action: worker.ActionPause},
				},
			}))
		calendar := h.Create(ctx, "CalendarSync", "User", "1")
		api := h.Create(ctx, "CallApi", "User", "1")

		h.Speedrun(ctx, calendar, nil)
		h.Speedrun(ctx, api, nil)

		// The handler's reattempt counts among the consecutive exception
		// reattempts too, so the second timeout meets the cap of 2.
		require.Equal(t, []string{
			"sync_events: reattempted_by_exception", // throttled: never reported
			"sync_events: reattempted_by_exception", // a timeout: not yet reported
			"sync_events: reattempts_exhausted",     // a timeout: reported now
		}, outcomesOf(ctx, h, calendar))
		history := h.History(ctx, calendar)
		require.Equal(t, 10*time.Second, history[1].ScheduledFor.Sub(*history[0].FinishedAt), "the handler clamps the wait")
		require.Equal(t, []string{"call_api: reattempted_by_exception", "call_api: paused_by_exception"}, outcomesOf(ctx, h, api))
		require.Equal(t, []string{"sync_events: timeout", "call_api: rate limited"}, *reported)
	})

	// Errors of cancel_if and skip_if go through the same policies, with the
	// reattempt reason "precondition".
	t.Run("PreconditionErrors", func(t *testing.T) {
		t.Parallel()
		var calls int
		wf := worker.NewWorkflow("Guarded", nil).
			CancelIf("account_closed", func(ctx context.Context, step *worker.Step) (bool, error) {
				calls++
				if calls == 1 {
					return false, timeoutError{}
				}
				return false, nil
			}).
			Step("a", failing(), &worker.StepOpts{OnException: &worker.ExceptionPolicy{Action: worker.ActionReattempt}})
		h, _ := policyHarness(t, wf)
		id := h.Create(ctx, "Guarded", "User", "1")

		h.Speedrun(ctx, id, nil)

		require.Equal(t, []string{"a: reattempted_by_exception", "a: success"}, outcomesOf(ctx, h, id))
		first := h.History(ctx, id)[0]
		require.Equal(t, "precondition", first.Metadata["reattempt_reason"])
		require.Nil(t, first.StartedAt)
		require.Equal(t, "*worker.ConditionError", *first.ErrorClassName)
		require.Contains(t, first.Metadata["error_classes"], "worker_test.timeoutError")
	})
}
