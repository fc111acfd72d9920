// Package worker runs the steps of Geneva workflows.
//
// Workflows are defined in Go ([NewWorkflow], [Workflow.Step]) and registered
// in the database when a [Worker] starts. River delivers a job for each step
// execution that SQL schedules; the worker evaluates the workflow's cancel_if
// and the step's skip_if conditions, claims the execution
// (geneva.start_steps), runs the step function outside any transaction, and
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
// # Heroes, extensions and hooks
//
// A workflow's hero is a record of the application's. [WorkflowOpts].LoadHero
// loads it before each step, before the conditions, and [Step.Hero] returns
// it; a loader returning [ErrHeroMissing] reports the hero missing, and SQL
// applies the type's policy (cancel the workflow, canceled_hero_missing, or
// run the step without its hero when [WorkflowOpts].MayProceedWithoutHero).
// [Workflow.Extend] starts a type from a base, the options it gives
// overriding the base's. [WorkflowOpts].Hooks wrap the type's steps inside
// the worker's [Config].Hooks (the manual's before_step_starts).
//
// # Events
//
// A step may await an event sent to its workflow from any SQL client
// (geneva.send_event, geneva.send_hero_event; goclient's SendEvent): its
// [StepOpts].Await ([Await]: the event's name, a timeout, and what the
// timeout does, [OnTimeout]). SQL makes the step due when the event comes,
// or came before the wait began, and hands the event over when it starts
// the step: [Step.Event] returns it ([Event]: name, JSON payload, when it
// was sent; [Event.Decode], [EventPayload]), nil when the timeout passed with
// [OnTimeoutRun].
//
// # Resumable steps
//
// [Workflow.ResumableStep] adds a step that works through a long collection
// with a cursor ([Iteration]) and hands over to successor executions of
// itself when a budget ([ResumableOpts] MaxRuntime, MaxIterations) is spent,
// the worker stops, or an operator pauses or cancels the workflow. [Iterate],
// [IterateQuery] and [IterateQueryBatches] write the loop. The cursor survives
// every way the step runs again except [ReattemptRewind] and an operator's
// schedule_step or skip_step.
//
// # Transactional steps
//
// A step with [StepOpts].Transactional writes on [Step.Tx], a transaction
// the worker begins on its pool before the step starts: the worker records
// the step's end on it and commits once, so that the step's writes and the
// record of its end commit together, or not at all. An error, a panic or a
// timeout rolls the writes back, and the failure is recorded in a fresh
// transaction ([TransactionError] when the transaction itself could not
// commit). A resumable step cannot be transactional.
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
// The runnable examples show each shape: a step's own policy
// ([ExceptionPolicy] reattempt, terminal action, backoff, handler), a step's
// list ([StepOpts] OnExceptionList), the workflow's policies
// ([Workflow.OnException]); policies_test.go runs every example of the
// GenevaDrive manual in Go and checks the rows it leaves.
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
