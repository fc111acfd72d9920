// Package worker runs the steps of Geneva workflows.
//
// Workflows are defined in Go ([NewWorkflow], [Workflow.Step]) and registered
// in the database when a [Worker] starts. River delivers a job for each step
// execution that SQL schedules; the worker evaluates the workflow's cancel_if
// and the step's skip_if conditions, claims the execution
// (geneva.start_step), runs the step function outside any transaction, and
// reports what it returned in the transaction that completes the River job.
// Every decision about the workflow's state — what an outcome does, which
// exception policy applies, whether reattempts ran out, what runs next and
// when — is made by SQL.
//
// # Steps and flow control
//
// A [StepFunc] returns nil when the step is done, or a flow-control value:
// [Reattempt], [Skip], [Cancel], [Pause], [Finished], [Suspend]. Any other
// error, and a panic (recovered, with its stack, as a [*PanicError]), goes
// through the exception policies.
//
// # Exception policies
//
// An [ExceptionPolicy] is a plain value. SQL resolves which applies: a step's
// single policy ([StepOpts].OnException) wins outright; a step's list
// ([StepOpts].OnExceptionList) tries its specific policies (with Matching) in
// order, then its first blanket one; then the workflow's policies
// ([Workflow.OnException]), the most recently added first, specific before
// blanket; then pause. Matchers are Go error types ([ErrorAs]), sentinel
// errors ([ErrorIs]) and type names ([ClassName]); the worker sends SQL the
// type names of the error's whole chain (through %w and errors.Join) and the
// names of the matchers that match.
//
// The GenevaDrive manual's examples, in Go (policies_test.go runs each one
// and checks the rows it leaves):
//
//	// step :call_external_api, on_exception: :reattempt!   (at most 100 in a row)
//	Step("call_external_api", callAPI, &worker.StepOpts{
//		OnException: &worker.ExceptionPolicy{Action: worker.ActionReattempt},
//	})
//
//	// on_exception :reattempt!, max_reattempts: 5   (workflow level),
//	// step :send_email, on_exception: :skip!        (the step's own wins)
//	worker.NewWorkflow("Resilient", nil).
//		OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, MaxReattempts: 5}).
//		Step("fetch_data", fetchData, nil).
//		Step("send_email", sendEmail, &worker.StepOpts{
//			OnException: &worker.ExceptionPolicy{Action: worker.ActionSkip},
//		})
//
//	// on_exception OAuth2::Error, action: :reattempt!, wait: 15.seconds
//	// on_exception Google::Apis::ClientError, action: :cancel!
//	// on_exception :reattempt!, max_reattempts: 3
//	worker.NewWorkflow("OAuth", nil).
//		OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, Wait: 15 * time.Second,
//			Matching: []worker.Matcher{worker.ErrorAs[*oauth2.RetrieveError]()}}).
//		OnException(worker.ExceptionPolicy{Action: worker.ActionCancel,
//			Matching: []worker.Matcher{worker.ErrorAs[*googleapi.Error]()}}).
//		OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, MaxReattempts: 3})
//
//	// step :flaky_api, on_exception: :reattempt!, max_reattempts: 10, terminal_action: :cancel!
//	Step("flaky_api", flakyAPI, &worker.StepOpts{OnException: &worker.ExceptionPolicy{
//		Action: worker.ActionReattempt, MaxReattempts: 10, TerminalAction: worker.ActionCancel,
//	}})
//
//	// TRANSIENT_RETRY = ExceptionPolicy.new(:reattempt!, wait: 30.seconds,
//	//   max_reattempts: 5, terminal_action: :cancel!)   — shared by workflow types
//	var TransientRetry = worker.ExceptionPolicy{
//		Action: worker.ActionReattempt, Wait: 30 * time.Second, MaxReattempts: 5,
//		TerminalAction: worker.ActionCancel,
//	}
//	order.Step("charge_card", chargeCard, &worker.StepOpts{OnException: &TransientRetry})
//	shipping.Step("book_courier", bookCourier, &worker.StepOpts{OnException: &TransientRetry})
//
//	// OAUTH_CANCEL = ExceptionPolicy.new(:cancel!, matching: [OAuth2::Error, "Faraday::ConnectionFailed"])
//	var OAuthCancel = worker.ExceptionPolicy{Action: worker.ActionCancel, Matching: []worker.Matcher{
//		worker.ErrorAs[*oauth2.RetrieveError](), worker.ClassName("*net.OpError"),
//	}}
//
//	// on_exception Timeout::Error, action: :reattempt!, wait: 10.seconds, max_reattempts: 3
//	// on_exception :cancel!
//	OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, Wait: 10 * time.Second,
//		MaxReattempts: 3, Matching: []worker.Matcher{worker.ErrorIs(context.DeadlineExceeded)}}).
//	OnException(worker.ExceptionPolicy{Action: worker.ActionCancel})
//
//	// step :sync_events, on_exception: [reattempt Net::OpenTimeout (10 s, max 5),
//	//   cancel OAuth2::Error, skip]   — a composable list
//	Step("sync_events", syncEvents, &worker.StepOpts{OnExceptionList: []worker.ExceptionPolicy{
//		{Action: worker.ActionReattempt, Matching: timeouts, Wait: 10 * time.Second, MaxReattempts: 5},
//		{Action: worker.ActionCancel, Matching: []worker.Matcher{worker.ErrorAs[*oauth2.RetrieveError]()}},
//		{Action: worker.ActionSkip},
//	}})
//
//	// Global cap: [reattempt Timeout (max 10), reattempt RateLimitError (max 3,
//	// terminal cancel)] — at most 3 in a row whichever errors alternate; the
//	// failing error's own policy picks the terminal action.
//	Step("sync", sync, &worker.StepOpts{OnExceptionList: []worker.ExceptionPolicy{
//		{Action: worker.ActionReattempt, Matching: timeouts, MaxReattempts: 10},
//		{Action: worker.ActionReattempt, Matching: rateLimits, MaxReattempts: 3, TerminalAction: worker.ActionCancel},
//	}})
//
//	// on_exception RateLimitError do |error| reattempt! wait: error.retry_after end
//	OnException(worker.ExceptionPolicy{Matching: rateLimits,
//		Handler: func(ctx context.Context, step *worker.Step, err error) error {
//			var limited *RateLimitError
//			errors.As(err, &limited)
//			return worker.Reattempt(limited.RetryAfter)
//		}})
//
//	// on_exception Net::OpenTimeout, action: :reattempt!, wait: 10.seconds,
//	//   max_reattempts: 5, terminal_action: :cancel!, report: :terminal_only
//	OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, Matching: timeouts,
//		Wait: 10 * time.Second, MaxReattempts: 5, TerminalAction: worker.ActionCancel,
//		Report: worker.ReportTerminalOnly})
//
// Beyond the manual, a reattempt policy can back off:
//
//	worker.ExceptionPolicy{Action: worker.ActionReattempt, Wait: 10 * time.Second,
//		Backoff: 2, MaxWait: 10 * time.Minute}   // 10 s, 20 s, 40 s, ... at most 10 min
//
// Errors a policy says to report go to [Config].ErrorReporter (by default, the
// log).
//
// # Running
//
// [New] checks the definitions; [Worker.Start] registers them
// (geneva.define_workflow) and starts River; [Worker.Stop] stops gracefully.
// Every worker also takes part in housekeeping ([HousekeepingConfig]): the
// first to find a round due runs it, so recovery never waits for one process;
// [HousekeepingConfig] gives the worst-case recovery time. A step's outcome
// that the database cannot take (an outage) is kept and retried until it
// can ([Worker.Stop]). Package workertest runs steps inline for tests.
package worker
