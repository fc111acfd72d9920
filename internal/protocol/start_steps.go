package protocol

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
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
//
// Errors: goclient.ErrNotFound; goclient.ErrInvalidArgument, for any claim;
// then nothing is recorded.
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
		event_id, event_name, event_payload, event_sent_at, group_name, http, idempotency_key
		from geneva.start_steps($1, $2)`, ids, preconditions)
	if err != nil {
		return nil, mapError(err)
	}
	type row struct {
		Ordinality int `db:"ordinality"`
		Execution
	}
	started, err := pgx.CollectRows(rows, pgx.RowToStructByName[row])
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]*Execution, len(claims))
	for _, r := range started {
		if r.Ordinality < 1 || r.Ordinality > len(claims) {
			return nil, fmt.Errorf("geneva: start_steps returned element %d of %d", r.Ordinality, len(claims))
		}
		step := r.Execution
		out[r.Ordinality-1] = &step
	}
	return out, nil
}
