package protocol

import (
	"context"
	"encoding/json"
	"fmt"
)

// Claim is one element of StartSteps: an execution and the outcome of the
// worker's preconditions for it (PreconditionNone to run it).
type Claim struct {
	ExecutionID  int64
	Precondition Precondition
}

// StartSteps claims many executions in one call (geneva.start_steps), each as
// geneva.start_step would alone. The result has one element per claim, by
// position: the execution to run, or nil when the worker should not run it.
// An execution whose JSON the worker cannot read comes with Undecodable set
// (see Execution.Undecodable): it is claimed like the others, and the others
// are not held up by it.
//
// Errors: goclient.ErrNotFound; goclient.ErrInvalidArgument, for any claim;
// then nothing is recorded. An error after the call started executions (its
// result could not be read to the end: a connection lost) is an
// *UnhandedError naming those it read, which no one will run unless the
// caller gives them back.
func (c *Client) StartSteps(ctx context.Context, claims []Claim) ([]*Execution, error) {
	ids := make([]int64, len(claims))
	preconditions := make([]*string, len(claims))
	for i, claim := range claims {
		ids[i] = claim.ExecutionID
		if claim.Precondition != PreconditionNone {
			p := string(claim.Precondition)
			preconditions[i] = &p
		}
	}
	rows, err := c.db.Query(ctx, `select ordinality, execution_id, workflow_id, workflow_type, hero_type, hero_id,
		step_name, attempt, scheduled_for, started_at, cursor, continues_from_id, queue, trace_context,
		event_id, event_name, event_payload, event_sent_at, group_name, http, idempotency_key, event_sent_by
		from geneva.start_steps($1, $2)`, ids, preconditions)
	if err != nil {
		return nil, mapError(err)
	}
	defer rows.Close()
	out := make([]*Execution, len(claims))
	var started []int64
	for rows.Next() {
		var (
			ordinality int
			e          Execution
		)
		// the JSON values are taken as bytes (pgx would decode them, and fail
		// the whole result for one it cannot read), then checked one by one
		if err := rows.Scan(&ordinality, &e.ExecutionID, &e.WorkflowID, &e.WorkflowType, &e.HeroType, &e.HeroID,
			&e.StepName, &e.Attempt, &e.ScheduledFor, &e.StartedAt, (*[]byte)(&e.Cursor), &e.ContinuesFromID, &e.Queue,
			&e.TraceContext, &e.EventID, &e.EventName, (*[]byte)(&e.EventPayload), &e.EventSentAt, &e.Group,
			(*[]byte)(&e.HTTP), &e.IdempotencyKey, &e.EventSentBy); err != nil {
			return nil, unhanded(started, mapError(err))
		}
		started = append(started, e.ExecutionID)
		if ordinality < 1 || ordinality > len(claims) || out[ordinality-1] != nil {
			return nil, unhanded(started, fmt.Errorf("geneva: start_steps returned element %d of %d", ordinality, len(claims)))
		}
		e.checkJSON()
		out[ordinality-1] = &e
	}
	if err := rows.Err(); err != nil {
		return nil, unhanded(started, mapError(err))
	}
	return out, nil
}

// UnhandedError is the error of a call that started executions and could not
// hand them all over: its result could not be read to the end (a connection
// lost, say) once the statement had run. Started lists the executions it did
// read, each in progress with no one to run it: the caller gives them back
// (InterruptStep) rather than leave them for housekeeping to take for stuck.
type UnhandedError struct {
	Started []int64
	Err     error
}

func (e *UnhandedError) Error() string {
	return fmt.Sprintf("%v (%d executions started and not handed over)", e.Err, len(e.Started))
}

// Unwrap returns the error that cut the result short.
func (e *UnhandedError) Unwrap() error { return e.Err }

// unhanded is err, as an *UnhandedError when executions were started.
func unhanded(started []int64, err error) error {
	if len(started) == 0 {
		return err
	}
	return &UnhandedError{Started: started, Err: err}
}

// UndecodableError says which of an execution's JSON values the worker
// cannot read, and why (encoding/json's error).
type UndecodableError struct {
	// Input names the value: "cursor", "event payload" or "http".
	Input string
	Err   error
}

func (e *UndecodableError) Error() string {
	return fmt.Sprintf("geneva: the execution's %s cannot be decoded: %v", e.Input, e.Err)
}

// Unwrap returns encoding/json's error.
func (e *UndecodableError) Unwrap() error { return e.Err }

// checkJSON sets Undecodable, and clears the value, when one of e's JSON
// values is not JSON that encoding/json reads: PostgreSQL takes JSON nested
// deeper than encoding/json's limit of 10,000 levels (Geneva refuses JSON
// nested over 64 deep since, but a database may hold older values).
func (e *Execution) checkJSON() {
	for _, v := range []struct {
		input string
		value *json.RawMessage
	}{{"cursor", &e.Cursor}, {"event payload", &e.EventPayload}, {"http", &e.HTTP}} {
		if len(*v.value) == 0 || json.Valid(*v.value) {
			continue
		}
		var raw json.RawMessage
		err := json.Unmarshal(*v.value, &raw) // (for its error)
		*v.value = nil
		if e.Undecodable == nil {
			e.Undecodable = &UndecodableError{Input: v.input, Err: err}
		}
	}
}
