package goclient

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// SendEventOpts are SendEvent's options.
type SendEventOpts struct {
	// Key is the sender's name for the event (a webhook's delivery id, up to
	// 255 bytes): when the workflow already has an event sent with it
	// (consumed or not, kept as long as the workflow), SendEvent records
	// nothing and returns false, even when deliveries race. Keys are each
	// workflow's own.
	//
	// Defaults to none: every send is recorded.
	Key string
}

// SendEvent sends the event named event to a workflow (geneva.send_event):
// when the workflow's next step awaits it, that step becomes due now;
// otherwise the event is kept, and the first step that awaits its name
// consumes it (first in, first out, once each). It returns false, and
// records nothing, when the workflow has ended, or already has the event's
// key (SendEventOpts.Key). At most one opts is taken.
//
// payload is encoded with encoding/json (a json.RawMessage goes as it is,
// once checked); nil, or a value that encodes to JSON null, sends no payload
// (SQL NULL). The step that consumes the event reads it (worker's
// Step.Event).
//
// Call it on a pgx.Tx (goclient.New(tx)) to send the event in the same
// commit as the application's own writes.
//
// Errors: ErrNotFound for an unknown workflow; ErrInvalidArgument for an
// empty event name, a name or key over 255 bytes, a payload over 1 MiB, a
// payload that does not encode to JSON, or more than one opts.
func (c *Client) SendEvent(ctx context.Context, workflowID int64, event string, payload any, opts ...SendEventOpts) (bool, error) {
	if len(opts) > 1 {
		return false, fmt.Errorf("geneva: SendEvent takes at most one SendEventOpts: %w", ErrInvalidArgument)
	}
	var o SendEventOpts
	if len(opts) == 1 {
		o = opts[0]
	}
	encoded, err := encodePayload(payload)
	if err != nil {
		return false, err
	}
	var sent bool
	err = c.db.QueryRow(ctx, "select geneva.send_event($1, $2, $3::jsonb, $4)",
		workflowID, event, encoded, nullIfZero(o.Key)).Scan(&sent)
	if err != nil {
		return false, mapError(err)
	}
	return sent, nil
}

// SendHeroEventOpts are SendHeroEvent's options.
type SendHeroEventOpts struct {
	// Key is as SendEventOpts.Key, per workflow: a workflow that already has
	// it records nothing and is not counted.
	//
	// Defaults to none.
	Key string

	// Start is a workflow type to start on the event: when the hero has no
	// ongoing workflow of that type, one is created in the same transaction
	// and receives the event (counted). With Key, a workflow of that type
	// and hero that already has the key (ongoing or ended) starts none.
	// Senders racing to start it create one.
	//
	// Defaults to none: only the ongoing workflows receive the event.
	Start string
}

// SendHeroEvent sends the event to every ongoing workflow of the hero
// (geneva.send_hero_event), awaiting that event now or not: each keeps its
// own copy, consumed as SendEvent's. It returns how many workflows it
// reached (0 when the hero has none ongoing), the one it started
// (SendHeroEventOpts.Start) included. payload is encoded as SendEvent's. At
// most one opts is taken.
//
// Errors: ErrInvalidArgument, as SendEvent's; ErrUnknownWorkflowType for a
// Start type that is not defined.
func (c *Client) SendHeroEvent(ctx context.Context, heroType, heroID, event string, payload any, opts ...SendHeroEventOpts) (int, error) {
	if len(opts) > 1 {
		return 0, fmt.Errorf("geneva: SendHeroEvent takes at most one SendHeroEventOpts: %w", ErrInvalidArgument)
	}
	var o SendHeroEventOpts
	if len(opts) == 1 {
		o = opts[0]
	}
	encoded, err := encodePayload(payload)
	if err != nil {
		return 0, err
	}
	var reached int
	err = c.db.QueryRow(ctx, "select geneva.send_hero_event($1, $2, $3, $4::jsonb, $5, $6)",
		heroType, heroID, event, encoded, nullIfZero(o.Key), nullIfZero(o.Start)).Scan(&reached)
	if err != nil {
		return 0, mapError(err)
	}
	return reached, nil
}

// encodePayload is an event's payload as JSON text, or nil (SQL NULL) for
// none: nil, or a value that encodes to JSON null.
func encodePayload(payload any) (*string, error) {
	if payload == nil {
		return nil, nil
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("geneva: the event's payload does not encode to JSON (%w): %w", ErrInvalidArgument, err)
	}
	if string(b) == "null" {
		return nil, nil
	}
	s := string(b)
	return &s, nil
}

// AwaitingEvent is a row of the geneva.awaiting_events view: a workflow's
// scheduled step that awaits an event it has not received yet.
type AwaitingEvent struct {
	WorkflowID    int64         `db:"workflow_id"`
	WorkflowType  string        `db:"workflow_type"`
	HeroType      string        `db:"hero_type"`
	HeroID        string        `db:"hero_id"`
	WorkflowState WorkflowState `db:"workflow_state"`
	ExecutionID   int64         `db:"execution_id"`
	StepName      string        `db:"step_name"`
	// Event is the name of the event the step awaits (the first, for an
	// await of any of several).
	Event string `db:"event"`
	// WaitingSince is when the wait for the event began (after the step's
	// own wait, if it has one).
	WaitingSince time.Time `db:"waiting_since"`
	// TimeoutAt is when the wait times out and OnTimeout applies.
	TimeoutAt *time.Time `db:"timeout_at"`
	// OnTimeout is what a timeout does: "run" (the step runs without an
	// event), "cancel", "pause" or "skip".
	OnTimeout string `db:"on_timeout"`
	// Events are every name the step awaits: any of them (Event alone for
	// an await of one).
	Events []string `db:"events"`
	// Since is which events count: "kept" (every one not consumed yet) or
	// "wait" (only those sent after the step was reached).
	Since string `db:"since"`

	// Cell is the cell the row comes from (its database's name) when read
	// through a cells' router (docs/cells.md); else empty.
	Cell string `db:"cell" json:",omitempty"`
}

// AwaitingEventsParams filters AwaitingEvents and CountAwaitingEvents. A nil
// *AwaitingEventsParams takes every default.
type AwaitingEventsParams struct {
	// WorkflowType keeps the steps of workflows of this type only.
	//
	// Defaults to every type (empty).
	WorkflowType string

	// Event keeps the steps awaiting this event only (among others, for
	// an await of any of several).
	//
	// Defaults to every event (empty).
	Event string

	// WorkflowID keeps this workflow's step only.
	//
	// Defaults to 0: every workflow.
	WorkflowID int64

	// Limit is how many AwaitingEvents returns at most (those whose timeout
	// comes first).
	//
	// Defaults to 0: every one.
	Limit int
}

// AwaitingEvents returns the steps that await an event (the
// geneva.awaiting_events view), the one whose timeout comes first first:
// what an operator's inbox shows, and what SendEvent would wake.
func (c *Client) AwaitingEvents(ctx context.Context, params *AwaitingEventsParams) ([]*AwaitingEvent, error) {
	if params == nil {
		params = &AwaitingEventsParams{}
	}
	from := "geneva.awaiting_events"
	if params.WorkflowID != 0 {
		from = c.oneWorkflow(ctx, "awaiting_events", "$4")
	}
	rows, err := c.db.Query(ctx, `select workflow_id, workflow_type, hero_type, hero_id, workflow_state,
		execution_id, step_name, event, waiting_since, timeout_at, on_timeout, events, since, `+cellColumn("a")+`
		from `+from+` a
		where ($1::text is null or workflow_type = $1) and ($2::text is null or $2 = any (events))
		  and ($4::bigint is null or workflow_id = $4)
		order by timeout_at nulls last, execution_id limit $3`,
		nullIfZero(params.WorkflowType), nullIfZero(params.Event), limitOrAll(params.Limit), nullIfZero(params.WorkflowID))
	return collect[AwaitingEvent](rows, err)
}

// CountAwaitingEvents returns how many steps AwaitingEvents would return
// without a limit.
func (c *Client) CountAwaitingEvents(ctx context.Context, params *AwaitingEventsParams) (int64, error) {
	if params == nil {
		params = &AwaitingEventsParams{}
	}
	from := "geneva.awaiting_events"
	if params.WorkflowID != 0 {
		from = c.oneWorkflow(ctx, "awaiting_events", "$3")
	}
	var n int64
	err := c.db.QueryRow(ctx, `select count(*) from `+from+`
		where ($1::text is null or workflow_type = $1) and ($2::text is null or $2 = any (events))
		  and ($3::bigint is null or workflow_id = $3)`,
		nullIfZero(params.WorkflowType), nullIfZero(params.Event), nullIfZero(params.WorkflowID)).Scan(&n)
	return n, mapError(err)
}

// EventStat is a row of the geneva.event_stats view: the events of one name
// sent to the workflows of one type, among those the database keeps: live,
// or moved into history with their workflow (housekeeping's retention drops
// them with their history partition, so the counts can fall).
type EventStat struct {
	WorkflowType string `db:"workflow_type"`
	Event        string `db:"event"`
	// Sent counts the events kept; Consumed those a step consumed;
	// Pending those no step consumed yet.
	Sent     int64 `db:"sent"`
	Consumed int64 `db:"consumed"`
	Pending  int64 `db:"pending"`
	// LastSentAt is when the newest of them was sent.
	LastSentAt time.Time `db:"last_sent_at"`
}

// EventStats returns, per workflow type and event name, how many events
// were sent, consumed and are pending (the geneva.event_stats view), by type
// and name.
func (c *Client) EventStats(ctx context.Context) ([]*EventStat, error) {
	rows, err := c.db.Query(ctx, `select workflow_type, event, sent, consumed, pending, last_sent_at
		from geneva.event_stats order by workflow_type, event`)
	return collect[EventStat](rows, err)
}
