package protocol

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/sqlerr"
)

// Client calls the worker protocol's SQL functions. Like a goclient.Client
// it holds nothing but its DB: make one on a transaction to work in it.
type Client struct {
	db goclient.DB
}

// New returns a client that runs on db: a *pgxpool.Pool, a *pgx.Conn or a
// pgx.Tx.
func New(db goclient.DB) *Client {
	return &Client{db: db}
}

// DB is what the client runs on (for the reads a step makes: its
// children).
func (c *Client) DB() goclient.DB { return c.db }

// CheckpointStep saves a resumable step's cursor (geneva.checkpoint_step); a
// nil cursor saves nothing and only asks. It returns true when the step
// should stop now: a pause or cancel was requested, or the execution moved
// on.
//
// Errors: goclient.ErrNotFound.
func (c *Client) CheckpointStep(ctx context.Context, executionID int64, cursor json.RawMessage) (bool, error) {
	var stop bool
	var arg *string
	if cursor != nil {
		s := string(cursor)
		arg = &s
	}
	err := c.db.QueryRow(ctx, "select geneva.checkpoint_step($1, $2::jsonb)", executionID, arg).Scan(&stop)
	return stop, mapError(err)
}

// ParseWait reads a wait given as JSON, a number of seconds or an interval's
// text, as SQL reads a definition's waits (geneva.parse_wait); JSON null or
// nothing is no wait.
//
// Errors: goclient.ErrInvalidArgument (anything else, or a wait outside 0
// to 100 years).
func (c *Client) ParseWait(ctx context.Context, wait json.RawMessage) (time.Duration, error) {
	if len(wait) == 0 {
		return 0, nil
	}
	var seconds float64
	err := c.db.QueryRow(ctx, "select extract(epoch from geneva.parse_wait($1::jsonb))::float8", string(wait)).Scan(&seconds)
	if err != nil {
		return 0, mapError(err)
	}
	return time.Duration(seconds * float64(time.Second)), nil
}

// CompleteStep records how a running step ended without an error: a batch
// of one of CompleteSteps (the SQL of geneva.complete_step, or of
// geneva.complete_and_continue with opts.Continue). wait applies to
// SignalReattempt, SignalReattemptRewind and SignalSuspend.
//
// Errors: goclient.ErrNotFound; goclient.ErrInvalidArgument.
func (c *Client) CompleteStep(ctx context.Context, executionID int64, signal Signal, wait time.Duration, opts *ReportOpts) (*StepResult, error) {
	report := CompleteReport{ExecutionID: executionID, Signal: signal, Wait: wait}
	if opts != nil {
		report.JobID, report.Continue = opts.JobID, opts.Continue
	}
	results, err := c.CompleteSteps(ctx, []CompleteReport{report})
	if err != nil {
		return nil, err
	}
	return results[0], nil
}

// CompleteSteps records the normal ends of many steps in one call and one
// transaction (geneva.complete_steps): each report is recorded as
// geneva.complete_step (or complete_and_continue, with Continue) records it
// alone. It returns one result per report, in
// the reports' order. One bad report (an unknown execution, a bad signal, a
// job that did not run its execution) fails the whole call and nothing is
// recorded; the caller may then record the reports one by one. A next
// execution whose JSON the worker cannot read comes with Undecodable set,
// as StartSteps'.
//
// Errors: goclient.ErrNotFound; goclient.ErrInvalidArgument. An error after
// the call recorded the ends and started next executions is an
// *UnhandedError, as StartSteps'.
func (c *Client) CompleteSteps(ctx context.Context, reports []CompleteReport) ([]*StepResult, error) {
	if len(reports) == 0 {
		return nil, nil
	}
	var (
		ids       = make([]int64, len(reports))
		signals   = make([]*string, len(reports))
		waits     = make([]*time.Duration, len(reports))
		jobIDs    = make([]*int64, len(reports))
		continues = make([]bool, len(reports))
		failures  []*string // JSON; nil (NULL) when no report fails
		replies   []*string // JSON; nil (NULL) when no report has one
	)
	for i, r := range reports {
		ids[i], continues[i] = r.ExecutionID, r.Continue
		signal, wait := string(r.Signal), r.Wait
		switch {
		case r.Interrupt:
			signal, wait = "interrupt", 0
		case r.Failure != nil:
			signal, wait = string(r.Failure.HandlerSignal), r.Failure.HandlerWait
			encoded, err := r.Failure.encode()
			if err != nil {
				return nil, err
			}
			if failures == nil {
				failures = make([]*string, len(reports))
			}
			failures[i] = &encoded
		}
		signals[i] = nullIfEmpty(signal)
		if wait != 0 {
			waits[i] = &wait
		}
		jobIDs[i] = nullIfZero(r.JobID)
		if len(r.ReplyCursor) > 0 || len(r.ReplyWait) > 0 || len(r.Children) > 0 {
			reply := map[string]json.RawMessage{}
			if len(r.Children) > 0 {
				reply["children"] = r.Children
			}
			if len(r.ReplyCursor) > 0 {
				reply["cursor"] = r.ReplyCursor
			}
			if len(r.ReplyWait) > 0 {
				reply["wait"] = r.ReplyWait
			}
			encoded, err := json.Marshal(reply)
			if err != nil {
				return nil, fmt.Errorf("geneva: encoding a reply: %w", err)
			}
			if replies == nil {
				replies = make([]*string, len(reports))
			}
			replies[i] = ptrTo(string(encoded))
		}
	}
	rows, err := c.db.Query(ctx, `select ordinality, outcome, workflow_state, next_execution_id, next_step_name,
		next_attempt, next_started_at, next_cursor, next_continues_from_id,
		next_event_id, next_event_name, next_event_payload, next_event_sent_at, next_http,
		next_workflow_id, next_workflow_type, next_hero_type, next_hero_id, next_trace_context,
		next_group_name, action, coalesce(report, false), handler, next_event_sent_by
		from geneva.complete_steps($1, $2, $3, $4, $5, true, $6::text[]::jsonb[], $7::text[]::jsonb[])`,
		ids, signals, waits, jobIDs, continues, failures, replies)
	if err != nil {
		return nil, mapError(err)
	}
	defer rows.Close()
	results := make([]*StepResult, len(reports))
	var started []int64 // the next executions it started
	for rows.Next() {
		var (
			ordinality int
			result     StepResult
			next       Execution
			nextID     *int64
			nextName   *string
			attempt    *int
			startedAt  *time.Time
			workflowID *int64
			typ        *string
			heroType   *string
			heroID     *string
		)
		// (the JSON values as bytes, checked one by one: see StartSteps)
		if err := rows.Scan(&ordinality, &result.Outcome, &result.WorkflowState, &nextID, &nextName, &attempt,
			&startedAt, (*[]byte)(&next.Cursor), &next.ContinuesFromID,
			&next.EventID, &next.EventName, (*[]byte)(&next.EventPayload), &next.EventSentAt, (*[]byte)(&next.HTTP),
			&workflowID, &typ, &heroType, &heroID, &next.TraceContext, &next.Group,
			&result.Action, &result.Report, &result.Handler, &next.EventSentBy); err != nil {
			return nil, unhanded(started, mapError(err))
		}
		if nextID != nil {
			started = append(started, *nextID)
		}
		if ordinality < 1 || ordinality > len(reports) || results[ordinality-1] != nil {
			return nil, unhanded(started, fmt.Errorf("geneva: complete_steps returned an unexpected ordinality %d for %d reports", ordinality, len(reports)))
		}
		if nextID != nil {
			// due when it started, in the queue of the step that ended
			next.ExecutionID, next.StepName, next.Attempt = *nextID, deref(nextName), deref(attempt)
			next.ScheduledFor, next.StartedAt = deref(startedAt), deref(startedAt)
			next.WorkflowID, next.WorkflowType = deref(workflowID), deref(typ)
			next.HeroType, next.HeroID = deref(heroType), deref(heroID)
			next.checkJSON()
			result.Next = &next
		}
		results[ordinality-1] = &result
	}
	if err := rows.Err(); err != nil {
		return nil, unhanded(started, mapError(err))
	}
	for i, result := range results {
		if result == nil {
			return nil, fmt.Errorf("geneva: complete_steps returned no row for report %d of %d", i+1, len(reports))
		}
	}
	return results, nil
}

// DefineWorkflow registers or replaces the definition of a workflow type
// (geneva.define_workflow); definition is its JSON. A worker registers its
// workflows at start-up; no role but the worker's (and the schema's owner)
// may.
//
// Errors: goclient.ErrInvalidArgument, naming what is wrong with the definition.
func (c *Client) DefineWorkflow(ctx context.Context, workflowType string, definition json.RawMessage) error {
	_, err := c.db.Exec(ctx, "select geneva.define_workflow($1, $2::jsonb)", workflowType, string(definition))
	return mapError(err)
}

// FailStep records an error of a step, or of its preconditions
// (geneva.fail_step). SQL resolves the exception policy and tells whether to
// report the error; when the policy names a handler, the result's Action is
// "handler" and nothing is recorded until FailStep is called again with the
// handler's decision in failure.HandlerSignal.
//
// Errors: goclient.ErrNotFound; goclient.ErrInvalidArgument.
func (c *Client) FailStep(ctx context.Context, executionID int64, failure *Failure) (*FailResult, error) {
	var handlerWait *time.Duration
	if failure.HandlerWait != 0 {
		handlerWait = &failure.HandlerWait
	}
	var waitAtLeast *time.Duration
	if failure.WaitAtLeast > 0 {
		waitAtLeast = &failure.WaitAtLeast
	}
	rows, err := c.db.Query(ctx, `select action, outcome, report, workflow_state, handler
		from geneva.fail_step($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		executionID, failure.Classes, failure.Message, nullIfEmpty(failure.Backtrace),
		nullIfEmpty(string(failure.HandlerSignal)), handlerWait, failure.Precondition, nullIfZero(failure.JobID),
		failure.Chain, waitAtLeast)
	if err != nil {
		return nil, mapError(err)
	}
	result, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByName[FailResult])
	return result, mapError(err)
}

// encode is the failure as an element of geneva.complete_steps' p_errors:
// fail_step's arguments as an object (its handler's decision goes in the
// element's signal and wait).
func (f *Failure) encode() (string, error) {
	// (a nil list is NULL, as FailStep passes it; an empty one is empty)
	element := struct {
		Classes     *[]string `json:"classes,omitempty"`
		Chain       *[]string `json:"chain,omitempty"`
		Message     string    `json:"message"`
		Backtrace   string    `json:"backtrace,omitempty"`
		WaitAtLeast string    `json:"wait_at_least,omitempty"`
	}{Message: f.Message, Backtrace: f.Backtrace}
	if f.Classes != nil {
		element.Classes = &f.Classes
	}
	if f.Chain != nil {
		element.Chain = &f.Chain
	}
	if f.WaitAtLeast > 0 {
		element.WaitAtLeast = fmt.Sprintf("%d microseconds", f.WaitAtLeast.Microseconds())
	}
	out, err := json.Marshal(element)
	return string(out), err
}

// HeartbeatStep is a running step's sign of life (geneva.heartbeat_step):
// housekeeping recovers in_progress executions silent for too long. It
// returns false when the execution is no longer in_progress.
//
// Errors: goclient.ErrInvalidArgument.
func (c *Client) HeartbeatStep(ctx context.Context, executionID int64) (bool, error) {
	var running bool
	err := c.db.QueryRow(ctx, "select geneva.heartbeat_step($1)", executionID).Scan(&running)
	return running, mapError(err)
}

// InterruptStep gives back a running step that a shutting-down worker could
// not finish; it is scheduled again now (geneva.interrupt_step).
//
// Errors: goclient.ErrNotFound.
func (c *Client) InterruptStep(ctx context.Context, executionID int64, opts *ReportOpts) (*StepResult, error) {
	rows, err := c.db.Query(ctx, "select outcome, workflow_state from geneva.interrupt_step($1, $2)", executionID, jobIDOf(opts))
	return collectStepResult(rows, err)
}

// StartStep claims a step execution for a worker, or records the precondition
// the worker found: a batch of one of StartSteps (the SQL of
// geneva.start_step). It returns the execution to run, or nil when there is
// nothing to run: the execution was a duplicate, early, late, its workflow is
// paused, or the precondition was recorded.
//
// Errors: goclient.ErrNotFound; goclient.ErrInvalidArgument.
func (c *Client) StartStep(ctx context.Context, executionID int64, precondition Precondition) (*Execution, error) {
	started, err := c.StartSteps(ctx, []Claim{{ExecutionID: executionID, Precondition: precondition}})
	if err != nil {
		return nil, err
	}
	return started[0], nil
}

// StepDefined reports whether the registered definition of a workflow type
// has the named step (geneva.step_defined).
func (c *Client) StepDefined(ctx context.Context, workflowType, stepName string) (bool, error) {
	var defined bool
	err := c.db.QueryRow(ctx, "select geneva.step_defined($1, $2)", workflowType, stepName).Scan(&defined)
	return defined, mapError(err)
}

func collectStepResult(rows pgx.Rows, err error) (*StepResult, error) {
	if err != nil {
		return nil, mapError(err)
	}
	result, err := pgx.CollectExactlyOneRow(rows, pgx.RowToAddrOfStructByName[StepResult])
	return result, mapError(err)
}

func deref[T any](p *T) T {
	var zero T
	if p != nil {
		return *p
	}
	return zero
}

func jobIDOf(opts *ReportOpts) *int64 {
	if opts == nil || opts.JobID == 0 {
		return nil
	}
	return &opts.JobID
}

// mapError is goclient's error mapping, package sqlerr: the protocol's
// errors match goclient's sentinels and *goclient.Error.
func mapError(err error) error { return sqlerr.Map(err) }

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func ptrTo[T any](v T) *T { return &v }

func nullIfZero(n int64) *int64 {
	if n == 0 {
		return nil
	}
	return &n
}
