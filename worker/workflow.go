package worker

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// StepFunc is a step's code. It returns nil when the step is done, a
// flow-control value (Reattempt, Skip, Cancel, Pause, Finished, Suspend) to
// steer the workflow, or any other error, which goes through the exception
// policies. It runs outside any transaction, at least once: make it
// idempotent.
type StepFunc func(ctx context.Context, step *Step) error

// Condition decides a workflow's cancel_if or a step's skip_if. It runs just
// before the step would start. An error goes through the step's exception
// policies.
type Condition func(ctx context.Context, step *Step) (bool, error)

// WorkflowOpts are options for NewWorkflow.
type WorkflowOpts struct {
	// Queue is the River queue of the workflow's steps.
	//
	// Defaults to "default".
	Queue string

	// Priority is the River priority of the workflow's steps, 1 (first) to 4.
	//
	// Defaults to 1.
	Priority int

	// MayProceedWithoutHero lets steps run when the hero is gone (see
	// HeroMissing).
	//
	// Defaults to false: the workflow is canceled (canceled_hero_missing).
	MayProceedWithoutHero bool

	// HeroMissing tells whether the workflow's hero no longer exists. It runs
	// before each step, before the cancel_if conditions.
	//
	// Defaults to nil: heroes are not checked by the worker (geneva.track_hero
	// can cancel workflows when a hero row is deleted).
	HeroMissing Condition

	// LoadHero loads the workflow's hero before each step, before the
	// HeroMissing check and the cancel_if and skip_if conditions; the step,
	// its conditions, handlers and hooks get it with Step.Hero. It returns
	// ErrHeroMissing (or wraps it) when the hero is gone: the worker reports
	// the hero missing and SQL applies the type's policy (the workflow is
	// canceled, canceled_hero_missing, unless MayProceedWithoutHero: then
	// the step runs with a nil Hero and Step.HeroMissing set). Any other
	// error (or a panic) is the step's failure, a *ConditionError named
	// "load_hero", through the step's exception policies. Steps of a type
	// with a loader never run inline (Config.InlineSteps): each is claimed
	// after its hero is loaded.
	//
	// Defaults to nil: Step.Hero is nil.
	LoadHero HeroLoader

	// Hooks wrap the events of this type's steps (as Config.Hooks do every
	// type's), inside the worker's hooks, the first outermost: a type's
	// own instrumentation, or its before-step code (at EventStep, before
	// next).
	//
	// Defaults to none.
	Hooks []Hook

	// Concurrency bounds how many of the type's step executions are in
	// progress at once per group, hero, type or parent (the definition's
	// "concurrency"), decided in SQL when a step is claimed: one over it
	// waits, without a River job, for a slot of its key.
	//
	// Defaults to nil: no bound.
	Concurrency *Concurrency

	// RateLimit bounds how many of the type's step executions start per
	// window per group, hero, type or parent (the definition's
	// "rate_limit"): one over it is scheduled for the next window with room.
	//
	// Defaults to nil: no bound.
	RateLimit *RateLimit

	// IdempotencyTTL is how long a key given to create_workflow
	// (goclient.CreateWorkflowOpts.IdempotencyKey) returns the workflow it
	// first created (the definition's "idempotency_ttl"): 0 to 100 years.
	//
	// Defaults to 0: SQL's default, 24 hours.
	IdempotencyTTL time.Duration

	// CancelOn names events that cancel a workflow of the type when sent to
	// it (the definition's "cancel_on"): a ready or paused one at once, in
	// the sender's transaction; a performing one when its running step ends,
	// instead of moving on. The execution it stops ends canceled_by_event.
	// This is how an application, which may send events but not cancel,
	// ends its own workflows.
	//
	// Defaults to none.
	CancelOn []string
}

// StepOpts are options for Workflow.Step.
type StepOpts struct {
	// Wait is how long the step waits after its predecessor ends.
	//
	// Defaults to no wait.
	Wait time.Duration

	// AfterStart is the step's offset from the workflow's start (the
	// definition's "after"): the step is due no earlier than the workflow's
	// creation plus AfterStart, at once when that has passed; with a Wait
	// too, the later of the two. Offsets let delays balance out: steps
	// "after 15 days" and "after 30 days" run then, however long the steps
	// before them took. (StepOpts.After places a step after another.)
	//
	// Defaults to none: the step counts from its predecessor only.
	AfterStart time.Duration

	// Skip always skips the step (decided in SQL, as `"skip_if": true`).
	Skip bool

	// SkipIf skips the step when it returns true.
	SkipIf Condition

	// OnException is the step's single exception policy: it applies to every
	// error of the step, whatever the workflow's policies say.
	OnException *ExceptionPolicy

	// OnExceptionList is the step's composable policies: the first specific
	// one (with Matching) that matches in order, else the first blanket one,
	// else the workflow's policies. Not with OnException.
	OnExceptionList []ExceptionPolicy

	// Before places the step before the named step, which must already be
	// defined. Not with After.
	Before string

	// After places the step after the named step, which must already be
	// defined. Not with Before.
	After string

	// HTTP makes the step an HTTP step, run by calling its endpoint (the
	// step is added with a nil function): by this worker when it has
	// Config.HTTP, else by one that does, such as the stock `geneva
	// worker`.
	//
	// Defaults to nil: a Go step.
	HTTP *HTTP

	// Await makes the step wait for an event sent to its workflow
	// (geneva.send_event), after its Wait, at most Await.Timeout; the step
	// sees the event with Step.Event.
	//
	// Defaults to nil: the step awaits nothing.
	Await *Await

	// Limits names the limits the step's executions are held to, besides
	// the type's Concurrency and RateLimit: named limits defined with
	// geneva.define_limit (an operator's, shared by every step of any type
	// that names it), which must exist when the worker registers the
	// definition.
	//
	// Defaults to none.
	Limits []string

	// Transactional runs the step with a transaction (Step.Tx), begun on
	// the worker's DB before it starts: what it writes on that transaction
	// commits together with the record of its end, or not at all. The
	// worker records the end on the transaction (alone, not in a batch of
	// ends) and commits once. A step that returns nil or flow control
	// (Suspend, Reattempt, Skip, Cancel, Pause, Finished) commits its
	// writes with that outcome: it is what the step decided. An error, a
	// panic, the step timeout or a hard stop rolls them back, and the
	// failure (or give-back) is recorded in a fresh transaction, the
	// exception policies applying as usual; a worker that dies before the
	// commit leaves neither, and the step runs again. Each running
	// transactional step holds a connection of the pool: size the pool
	// above the number of such steps that run at once (MaxWorkers).
	// Neither an HTTP step nor a resumable one (its cursor must commit
	// while it runs) can be transactional; Step.Checkpoint fails in one.
	//
	// Defaults to false: the step's writes are its own, and commit on
	// their own.
	Transactional bool
}

// Workflow defines a workflow type: its steps in run order and its settings.
// Build it once, at start-up, and give it to the worker:
//
//	onboarding := worker.NewWorkflow("UserOnboarding", nil).
//		CancelIf("account_closed", accountClosed).
//		Step("send_welcome", sendWelcome, nil).
//		Step("send_reminder", sendReminder, &worker.StepOpts{Wait: 48 * time.Hour}).
//		Step("complete_onboarding", completeOnboarding, nil)
//
// Mistakes (a duplicate step name, Before naming an unknown step, ...) are
// collected and reported by Validate, which the worker calls before it
// registers the definition.
type Workflow struct {
	workflowType string
	opts         WorkflowOpts
	steps        []*stepDef
	stepCount    int // steps ever added, for the names of anonymous steps
	cancelIf     []namedCondition
	onException  []ExceptionPolicy
	errs         []error
}

type stepDef struct {
	name string
	fn   StepFunc
	opts StepOpts
}

type namedCondition struct {
	name string
	fn   Condition
}

// NewWorkflow starts the definition of a workflow type. The type name is what
// geneva.create_workflow takes.
func NewWorkflow(workflowType string, opts *WorkflowOpts) *Workflow {
	w := &Workflow{workflowType: workflowType}
	w.opts.override(opts)
	if workflowType == "" {
		w.errs = append(w.errs, errors.New("a workflow needs a type name"))
	}
	return w
}

// Type is the workflow's type name.
func (w *Workflow) Type() string { return w.workflowType }

// Extend starts a new workflow type with everything w has so far: its steps,
// conditions, policies and options. Later changes to either do not affect
// the other, so a base workflow can carry the settings several types share:
//
//	base := worker.NewWorkflow("Base", &worker.WorkflowOpts{Queue: "billing", Priority: 2}).
//		OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, Matching: transient})
//	invoice := base.Extend("Invoice", nil).Step("send", sendInvoice, nil)
//	refund := base.Extend("Refund", &worker.WorkflowOpts{Queue: "refunds"}).Step("refund", refund, nil)
//
// opts (nil for none) override the base's options: each option opts sets
// (not its zero value) replaces the base's, the others are the base's
// (Refund above runs on queue "refunds" at priority 2). Hooks add to the
// base's, inside them. A zero value cannot unset an option: a base that
// sets what some of its extensions must not should leave it to each.
// Exception policies added to the extension (OnException) are tried before
// the base's, as the most recently added always are: a matching specific
// policy of the extension first, then the base's specific ones, then the
// extension's latest blanket policy (a base's blanket policy applies only
// when the extension adds none). Steps keep their own policies, which come
// before the workflow's.
func (w *Workflow) Extend(workflowType string, opts *WorkflowOpts) *Workflow {
	child := &Workflow{
		workflowType: workflowType,
		stepCount:    w.stepCount,
		cancelIf:     slices.Clone(w.cancelIf),
		onException:  slices.Clone(w.onException),
		errs:         slices.Clone(w.errs),
	}
	child.opts.override(&w.opts)
	child.opts.override(opts)
	for _, step := range w.steps {
		copied := *step
		child.steps = append(child.steps, &copied)
	}
	if workflowType == "" {
		child.errs = append(child.errs, errors.New("a workflow needs a type name"))
	}
	return child
}

// override sets the options with sets (nil for none) over o's: each one
// with gives (not its zero value) replaces o's; with's Hooks are added
// after o's. Nothing of with's is shared: later changes to it do not reach
// o.
func (o *WorkflowOpts) override(with *WorkflowOpts) {
	if with == nil {
		return
	}
	if with.Queue != "" {
		o.Queue = with.Queue
	}
	if with.Priority != 0 {
		o.Priority = with.Priority
	}
	if with.MayProceedWithoutHero {
		o.MayProceedWithoutHero = true
	}
	if with.HeroMissing != nil {
		o.HeroMissing = with.HeroMissing
	}
	if with.LoadHero != nil {
		o.LoadHero = with.LoadHero
	}
	if with.Concurrency != nil {
		concurrency := *with.Concurrency
		o.Concurrency = &concurrency
	}
	if with.RateLimit != nil {
		rateLimit := *with.RateLimit
		o.RateLimit = &rateLimit
	}
	if with.IdempotencyTTL != 0 {
		o.IdempotencyTTL = with.IdempotencyTTL
	}
	if with.CancelOn != nil {
		o.CancelOn = slices.Clone(with.CancelOn)
	}
	if len(with.Hooks) > 0 {
		o.Hooks = append(slices.Clone(o.Hooks), with.Hooks...)
	}
}

// Step adds a step. An empty name makes an anonymous step named step_N, N
// counting every step added so far (so loops can add polling ladders). Steps
// run in the order they are added unless StepOpts.Before or After place them.
func (w *Workflow) Step(name string, fn StepFunc, opts *StepOpts) *Workflow {
	w.stepCount++
	if name == "" {
		name = fmt.Sprintf("step_%d", w.stepCount)
	}
	step := &stepDef{name: name, fn: fn}
	if opts != nil {
		step.opts = *opts
	}
	if step.opts.Await != nil {
		await := *step.opts.Await // (later changes to the caller's do not reach it)
		step.opts.Await = &await
	}
	step.opts.Limits = slices.Clone(step.opts.Limits)

	switch {
	case fn == nil && step.opts.HTTP == nil:
		w.errorf("step %s has no function", name)
	case fn != nil && step.opts.HTTP != nil:
		w.errorf("step %s: an HTTP step has no function (its endpoint runs it)", name)
	case w.stepIndex(name) >= 0:
		w.errorf("duplicate step name %q", name)
	case step.opts.Before != "" && step.opts.After != "":
		w.errorf("step %s: Before and After cannot both be given", name)
	case step.opts.OnException != nil && step.opts.OnExceptionList != nil:
		w.errorf("step %s: OnException and OnExceptionList cannot both be given", name)
	case step.opts.Wait < 0:
		w.errorf("step %s: negative wait %s", name, step.opts.Wait)
	case step.opts.AfterStart < 0:
		w.errorf("step %s: negative AfterStart %s", name, step.opts.AfterStart)
	case step.opts.Transactional && step.opts.HTTP != nil:
		w.errorf("step %s: an HTTP step cannot be transactional (its endpoint writes on its own)", name)
	}

	at := len(w.steps)
	if target := step.opts.Before + step.opts.After; target != "" {
		index := w.stepIndex(target)
		if index < 0 {
			w.errorf("step %s: no step %q to place it before or after (it must be defined first)", name, target)
		} else if step.opts.Before != "" {
			at = index
		} else {
			at = index + 1
		}
	}
	w.steps = slices.Insert(w.steps, at, step)
	return w
}

// CancelIf cancels the workflow before any step when cond returns true
// (canceled_by_condition). Conditions run in the order they are added; name
// identifies the condition in the definition and logs.
func (w *Workflow) CancelIf(name string, cond Condition) *Workflow {
	if cond == nil {
		w.errorf("cancel_if %s has no function", name)
	}
	w.cancelIf = append(w.cancelIf, namedCondition{name: name, fn: cond})
	return w
}

// OnException adds a workflow-level exception policy, for steps whose own
// policies do not decide. The most recently added policies are tried first:
// a specific one (with Matching) that matches, else the most recent blanket
// one.
func (w *Workflow) OnException(policy ExceptionPolicy) *Workflow {
	w.onException = append(w.onException, policy)
	return w
}

// Validate reports the mistakes found while building the workflow, if any:
// among them names longer than their limits (a type or step name of more
// than 255 bytes, a queue of more than 127), waits outside 0 to LongestWait,
// an Await without an event name or a positive timeout (or with an unknown
// OnTimeout), and exception policies that ExceptionPolicy.Validate refuses.
// worker.New calls it for every workflow. The database validates the rest
// when the definition is registered.
func (w *Workflow) Validate() error {
	errs := slices.Clone(w.errs)
	errorf := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("workflow %s: "+format, append([]any{w.workflowType}, args...)...))
	}
	if len(w.workflowType) > maxNameBytes {
		errorf("the type name is %d bytes long; the limit is %d", len(w.workflowType), maxNameBytes)
	}
	if len(w.opts.Queue) > maxQueueBytes {
		errorf("queue %q is %d bytes long; the limit is %d", w.opts.Queue, len(w.opts.Queue), maxQueueBytes)
	}
	if w.opts.Concurrency != nil {
		if err := w.opts.Concurrency.validate(); err != nil {
			errorf("Concurrency: %w", err)
		}
	}
	if w.opts.RateLimit != nil {
		if err := w.opts.RateLimit.validate(); err != nil {
			errorf("RateLimit: %w", err)
		}
	}
	for _, step := range w.steps {
		if len(step.name) > maxNameBytes {
			errorf("step name %.40q... is %d bytes long; the limit is %d", step.name, len(step.name), maxNameBytes)
		}
		if step.opts.Wait > LongestWait {
			errorf("step %s: wait %s is longer than %s", step.name, step.opts.Wait, LongestWait)
		}
		if step.opts.AfterStart > LongestWait {
			errorf("step %s: AfterStart %s is longer than %s", step.name, step.opts.AfterStart, LongestWait)
		}
		if step.opts.Await != nil {
			if err := step.opts.Await.validate(); err != nil {
				errorf("step %s: %w", step.name, err)
			}
		}
		if err := validateLimitNames(step.opts.Limits); err != nil {
			errorf("step %s: %w", step.name, err)
		}
		if step.opts.OnException != nil {
			if err := step.opts.OnException.Validate(); err != nil {
				errorf("step %s: OnException: %w", step.name, err)
			}
		}
		for i, policy := range step.opts.OnExceptionList {
			if err := policy.Validate(); err != nil {
				errorf("step %s: OnExceptionList[%d]: %w", step.name, i, err)
			}
		}
	}
	for i, policy := range w.onException {
		if err := policy.Validate(); err != nil {
			errorf("OnException (the %s policy): %w", ordinal(i+1), err)
		}
	}
	return errors.Join(errs...)
}

// The limits of names, in bytes, as SQL has them (docs/sql-api.md, "Definitions").
const (
	maxNameBytes  = 255
	maxQueueBytes = 127
)

func ordinal(n int) string {
	switch n {
	case 1:
		return "1st"
	case 2:
		return "2nd"
	case 3:
		return "3rd"
	}
	return fmt.Sprintf("%dth", n)
}

func (w *Workflow) errorf(format string, args ...any) {
	w.errs = append(w.errs, fmt.Errorf("workflow %s: "+format, append([]any{w.workflowType}, args...)...))
}

func (w *Workflow) stepIndex(name string) int {
	return slices.IndexFunc(w.steps, func(s *stepDef) bool { return s.name == name })
}

func (w *Workflow) step(name string) *stepDef {
	if index := w.stepIndex(name); index >= 0 {
		return w.steps[index]
	}
	return nil
}

// handlerName names the handler of the policy at a place in the definition;
// the worker finds the function again by this name when SQL asks for it.
func handlerName(place string) string { return "handler:" + place }

// handlers maps each handler's name to its function.
func (w *Workflow) handlers() map[string]Handler {
	handlers := map[string]Handler{}
	add := func(place string, policy *ExceptionPolicy) {
		if policy.Handler != nil {
			handlers[handlerName(place)] = policy.Handler
		}
	}
	for _, step := range w.steps {
		if step.opts.OnException != nil {
			add(step.name, step.opts.OnException)
		}
		for i := range step.opts.OnExceptionList {
			add(fmt.Sprintf("%s[%d]", step.name, i), &step.opts.OnExceptionList[i])
		}
	}
	for i := range w.onException {
		add(fmt.Sprintf("workflow[%d]", i), &w.onException[i])
	}
	return handlers
}

// matchers lists every matcher of the workflow's policies.
func (w *Workflow) matchers() []Matcher {
	var matchers []Matcher
	add := func(policies ...ExceptionPolicy) {
		for _, policy := range policies {
			matchers = append(matchers, policy.Matching...)
		}
	}
	for _, step := range w.steps {
		if step.opts.OnException != nil {
			add(*step.opts.OnException)
		}
		add(step.opts.OnExceptionList...)
	}
	add(w.onException...)
	return matchers
}

// Definition returns the workflow's definition as geneva.define_workflow takes
// it.
func (w *Workflow) Definition() (json.RawMessage, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	steps := make([]map[string]any, 0, len(w.steps))
	for _, step := range w.steps {
		s := map[string]any{"name": step.name}
		if step.opts.Wait > 0 {
			s["wait"] = step.opts.Wait.Seconds()
		}
		if step.opts.AfterStart > 0 {
			s["after"] = step.opts.AfterStart.Seconds()
		}
		if step.opts.Await != nil {
			s["await"] = step.opts.Await.json()
		}
		if len(step.opts.Limits) > 0 {
			s["limits"] = step.opts.Limits
		}
		if step.opts.HTTP != nil {
			s["http"] = step.opts.HTTP.json()
		}
		switch {
		case step.opts.Skip:
			s["skip_if"] = true
		case step.opts.SkipIf != nil:
			s["skip_if"] = "condition"
		}
		if step.opts.OnException != nil {
			s["on_exception"] = policyJSON(*step.opts.OnException, step.name)
		}
		if step.opts.OnExceptionList != nil {
			list := make([]map[string]any, len(step.opts.OnExceptionList))
			for i, policy := range step.opts.OnExceptionList {
				list[i] = policyJSON(policy, fmt.Sprintf("%s[%d]", step.name, i))
			}
			s["on_exception"] = list
		}
		steps = append(steps, s)
	}

	definition := map[string]any{"steps": steps}
	if len(w.onException) > 0 {
		list := make([]map[string]any, len(w.onException))
		for i, policy := range w.onException {
			list[i] = policyJSON(policy, fmt.Sprintf("workflow[%d]", i))
		}
		definition["on_exception"] = list
	}
	if w.opts.Queue != "" {
		definition["queue"] = w.opts.Queue
	}
	if w.opts.Priority != 0 {
		definition["priority"] = w.opts.Priority
	}
	if w.opts.MayProceedWithoutHero {
		definition["may_proceed_without_hero"] = true
	}
	if w.opts.Concurrency != nil {
		definition["concurrency"] = w.opts.Concurrency.json()
	}
	if w.opts.RateLimit != nil {
		definition["rate_limit"] = w.opts.RateLimit.json()
	}
	if w.opts.IdempotencyTTL != 0 {
		definition["idempotency_ttl"] = w.opts.IdempotencyTTL.Seconds()
	}
	if w.opts.CancelOn != nil {
		definition["cancel_on"] = w.opts.CancelOn
	}
	if len(w.cancelIf) > 0 {
		names := make([]string, len(w.cancelIf))
		for i, cond := range w.cancelIf {
			names[i] = cond.name
		}
		definition["cancel_if"] = names
	}
	return json.Marshal(definition)
}

// policyJSON is a policy as the definition format has it. Values SQL would
// refuse are passed on as they are, for SQL to refuse with its message.
func policyJSON(policy ExceptionPolicy, place string) map[string]any {
	p := map[string]any{}
	if policy.Handler != nil {
		p["handler"] = handlerName(place)
	}
	if policy.Action != "" || policy.Handler == nil {
		p["action"] = string(policy.Action)
	}
	if len(policy.Matching) > 0 {
		names := make([]string, 0, len(policy.Matching))
		for _, matcher := range policy.Matching {
			if !slices.Contains(names, matcher.MatcherName()) {
				names = append(names, matcher.MatcherName())
			}
		}
		p["matching"] = names
	}
	if policy.Wait != 0 {
		p["wait"] = policy.Wait.Seconds()
	}
	switch {
	case policy.MaxReattempts == Unlimited:
		p["max_reattempts"] = nil
	case policy.MaxReattempts != 0:
		p["max_reattempts"] = policy.MaxReattempts
	}
	if policy.Backoff != 0 {
		p["backoff"] = policy.Backoff
	}
	if policy.MaxWait != 0 {
		p["max_wait"] = policy.MaxWait.Seconds()
	}
	if policy.TerminalAction != "" {
		p["terminal_action"] = string(policy.TerminalAction)
	}
	if policy.Report != "" {
		p["report"] = string(policy.Report)
	}
	return p
}

// registry is the workflows a worker runs, by type.
type registry map[string]*registeredWorkflow

type registeredWorkflow struct {
	*Workflow
	definition json.RawMessage
	handlers   map[string]Handler
	matchers   []Matcher
	// hooks wrap its steps' events: the worker's, then the type's (nil when
	// neither has any).
	hooks []Hook
}

func newRegistry(workflows []*Workflow) (registry, error) {
	reg := registry{}
	var errs []error
	for _, w := range workflows {
		if w == nil {
			errs = append(errs, errors.New("a nil workflow is given"))
			continue
		}
		// a snapshot: changes to w after this do not reach a running worker
		w = w.Extend(w.workflowType, nil)
		if _, ok := reg[w.workflowType]; ok {
			errs = append(errs, fmt.Errorf("workflow %s is given twice", w.workflowType))
			continue
		}
		definition, err := w.Definition()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		reg[w.workflowType] = &registeredWorkflow{
			Workflow:   w,
			definition: definition,
			handlers:   w.handlers(),
			matchers:   w.matchers(),
		}
	}
	return reg, errors.Join(errs...)
}

func (r registry) types() []string {
	return slices.Sorted(maps.Keys(r))
}

// queues lists the River queues the worker works: its workflows' (those of
// their Go steps), and with http those of HTTP steps (httpQueues).
func (r registry) queues(http *HTTPConfig) []string {
	var queues []string
	for _, w := range r {
		for _, step := range w.steps {
			if step.opts.HTTP == nil {
				queues = append(queues, cmp.Or(w.opts.Queue, "default"))
			}
		}
		if len(w.steps) == 0 {
			queues = append(queues, cmp.Or(w.opts.Queue, "default"))
		}
	}
	if http != nil {
		queues = append(queues, r.httpQueues(http)...)
	}
	slices.Sort(queues)
	return slices.Compact(queues)
}

// httpQueues lists the River queues of the HTTP steps a worker with http
// runs: http.Queues, else DefaultHTTPQueue and the queues of the workflows'
// own HTTP steps.
func (r registry) httpQueues(http *HTTPConfig) []string {
	if len(http.Queues) > 0 {
		return slices.Clone(http.Queues)
	}
	queues := []string{DefaultHTTPQueue}
	for _, w := range r {
		for _, step := range w.steps {
			if step.opts.HTTP != nil && !slices.Contains(queues, step.opts.HTTP.queue()) {
				queues = append(queues, step.opts.HTTP.queue())
			}
		}
	}
	return queues
}
