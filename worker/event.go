package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/geneva-dev/geneva/internal/protocol"
)

// Await makes a step wait for an event sent to its workflow
// (geneva.send_event, geneva.send_hero_event), for StepOpts.Await. The
// step's own Wait comes first; then it waits for the event, at most Timeout.
// It runs as soon as the event comes (or came: an event sent before the wait
// began is kept, and the first step awaiting its name consumes it, first in,
// first out), and Step.Event hands it to the step. SQL decides all of it;
// the worker only runs the step when SQL starts it.
//
//	Step("record_payment", recordPayment, &worker.StepOpts{Await: &worker.Await{
//		Event:   "payment_received",
//		Timeout: 72 * time.Hour,
//	}})
//
// With Events instead of Event, it awaits any of several events: the first
// of them to come (or kept) is the step's, and Step.Event().Name says which.
// With Since: SinceWait, it counts only events sent after the step was
// reached, ignoring (and leaving for other steps) those sent before.
//
//	Step("decide", decide, &worker.StepOpts{Await: &worker.Await{
//		Events:  []string{"approved", "rejected"},
//		Since:   worker.SinceWait,
//		Timeout: 48 * time.Hour,
//	}})
//
// With Children instead of Event, the step is a join: it waits for the
// workflow's children (workflows created with it as their parent:
// goclient's CreateWorkflowsOpts.ParentID; docs/children.md), and runs when
// the engine made it due, exactly once, with the counts as its event
// (ChildCounts).
type Await struct {
	// Event is the name of the event awaited (at most 255 bytes).
	Event string

	// Events, instead of Event, are the names of several events the step
	// awaits: any of them (the first to come, or the oldest kept, of any of
	// these names), each at most 255 bytes, each once.
	Events []string

	// Since is which events count: SinceKept (the default: every event of
	// the name not consumed yet, first in, first out, also those sent before
	// the step was reached) or SinceWait (only those sent after).
	Since Since

	// Children makes the step await the workflow's children instead of an
	// event: JoinAll (every child started so far has ended: at once when
	// there is none), JoinAny (one has), or JoinN(n) (n have). A child has
	// ended when it finished or was canceled.
	Children Join

	// Timeout is how long the step waits for the event, from when the wait
	// begins (after the step's Wait); then OnTimeout applies. Required: at
	// least a second is sensible, and at most LongestWait.
	Timeout time.Duration

	// OnTimeout is what happens when the timeout passes with no event.
	//
	// Defaults to OnTimeoutRun: the step runs with no event (Step.Event
	// returns nil).
	OnTimeout OnTimeout
}

// OnTimeout is what happens to a step whose awaited event did not come in
// time (Await.OnTimeout).
type OnTimeout string

const (
	// OnTimeoutRun runs the step with no event: Step.Event returns nil.
	OnTimeoutRun OnTimeout = "run"
	// OnTimeoutCancel cancels the workflow (the execution's outcome is
	// canceled_by_timeout).
	OnTimeoutCancel OnTimeout = "cancel"
	// OnTimeoutPause pauses the workflow for an operator
	// (paused_by_timeout); resuming it waits for the event again, with a
	// fresh timeout.
	OnTimeoutPause OnTimeout = "pause"
	// OnTimeoutSkip skips the step (skipped_by_timeout): the next one runs.
	OnTimeoutSkip OnTimeout = "skip"
)

// Since is which events an await counts (Await.Since).
type Since string

const (
	// SinceKept counts every event of the awaited name the workflow has not
	// consumed yet, the oldest first, also one sent before the step was
	// reached (the default).
	SinceKept Since = "kept"
	// SinceWait counts only events sent after the step was reached (its
	// previous step ended); older ones stay for other steps that await them.
	SinceWait Since = "wait"
)

// Join is what a join awaits of the workflow's children (Await.Children).
type Join string

const (
	// JoinAll: every child started so far has ended.
	JoinAll Join = "all"
	// JoinAny: one child has ended.
	JoinAny Join = "any"
)

// JoinN is a join on n children having ended (n > 0): more than the
// workflow has started waits for more, or for the timeout.
func JoinN(n int) Join { return Join(strconv.Itoa(n)) }

// ChildCounts is a join's event's payload (Await.Children): the workflow's
// children when the join was made due.
//
//	counts, ok, err := worker.EventPayload[worker.ChildCounts](step)
type ChildCounts struct {
	Children int `json:"children"`
	Ended    int `json:"ended"`
	Finished int `json:"finished"`
	Canceled int `json:"canceled"`
}

// name is what the await waits for, for messages.
func (a *Await) name() string {
	if a.Children != "" {
		return "children"
	}
	if len(a.Events) > 0 {
		return strings.Join(a.Events, " | ")
	}
	return a.Event
}

// validate checks what Go can: SQL (geneva.define_workflow) is the authority.
func (a *Await) validate() error {
	if a.Event != "" && a.Events != nil {
		return errors.New("await: Await.Event and Await.Events: name one event, or several")
	}
	if a.Events != nil {
		if len(a.Events) == 0 {
			return errors.New("await: Await.Events is empty")
		}
		seen := make(map[string]bool, len(a.Events))
		for _, name := range a.Events {
			switch {
			case name == "":
				return errors.New("await: Await.Events has an empty name")
			case len(name) > maxNameBytes:
				return fmt.Errorf("await: event name %.40q... is %d bytes long; the limit is %d", name, len(name), maxNameBytes)
			case seen[name]:
				return fmt.Errorf("await: Await.Events names %q twice", name)
			}
			seen[name] = true
		}
	}
	switch a.Since {
	case "", SinceKept, SinceWait:
	default:
		return fmt.Errorf("await %s: unknown Since %q (kept or wait)", a.name(), a.Since)
	}
	if a.Children != "" {
		if a.Event != "" || a.Events != nil {
			return errors.New("await: Await.Event and Await.Children: a step awaits one")
		}
		if a.Since != "" {
			return errors.New("await: Await.Since is for events, not children")
		}
		if n, err := strconv.Atoi(string(a.Children)); a.Children != JoinAll && a.Children != JoinAny && (err != nil || n < 1) {
			return fmt.Errorf("await children: %q is not JoinAll, JoinAny or JoinN(n > 0)", a.Children)
		}
	}
	switch {
	case a.Event == "" && a.Events == nil && a.Children == "":
		return errors.New("await: Await.Event names no event")
	case len(a.Event) > maxNameBytes:
		return fmt.Errorf("await: event name %.40q... is %d bytes long; the limit is %d", a.Event, len(a.Event), maxNameBytes)
	case a.Timeout <= 0:
		return fmt.Errorf("await %s: the timeout must be positive (Await.Timeout is %s)", a.name(), a.Timeout)
	case a.Timeout > LongestWait:
		return fmt.Errorf("await %s: timeout %s is longer than %s", a.name(), a.Timeout, LongestWait)
	}
	switch a.OnTimeout {
	case "", OnTimeoutRun, OnTimeoutCancel, OnTimeoutPause, OnTimeoutSkip:
		return nil
	}
	return fmt.Errorf("await %s: unknown OnTimeout %q (run, cancel, pause or skip)", a.name(), a.OnTimeout)
}

// json is the await as the definition format has it: its timeout in seconds,
// as the waits are.
func (a *Await) json() map[string]any {
	await := map[string]any{"timeout": a.Timeout.Seconds()}
	switch n, err := strconv.Atoi(string(a.Children)); {
	case a.Events != nil:
		await["event"] = a.Events
	case a.Children == "":
		await["event"] = a.Event
	case err == nil:
		await["children"] = n
	default:
		await["children"] = string(a.Children)
	}
	if a.OnTimeout != "" {
		await["on_timeout"] = string(a.OnTimeout)
	}
	if a.Since != "" {
		await["since"] = string(a.Since)
	}
	return await
}

// Event is an event sent to a workflow (geneva.send_event), as the step
// that consumed it sees it (Step.Event).
type Event struct {
	// ID is the event's id (geneva.events): the same in every execution that
	// carries it (a reattempt, a resumed pause), so a key for idempotency.
	ID int64
	// Name is the event's name: the one the step awaited, or, of the
	// several it awaited (Await.Events), the one that came.
	Name string
	// Payload is the JSON the sender gave; nil when none (SQL NULL or JSON
	// null).
	Payload json.RawMessage
	// SentAt is when the event was sent (the engine's clock).
	SentAt time.Time
	// SentBy is the database role that sent it (the sender's session_user:
	// an application's role, an operator's, a trigger's caller).
	SentBy string
}

// Decode decodes the payload into v (a pointer), as json.Unmarshal does.
// When the event has no payload (sent with NULL or JSON null), v is left as
// it is.
func (e *Event) Decode(v any) error {
	if len(e.Payload) == 0 {
		return nil
	}
	if err := json.Unmarshal(e.Payload, v); err != nil {
		return fmt.Errorf("geneva: decoding the payload of event %s (%d): %w", e.Name, e.ID, err)
	}
	return nil
}

// EventPayload decodes the payload of the event the step consumed into a T.
// ok is false when the step has no event (it did not await one, or its
// timeout passed with OnTimeoutRun); a payload that does not decode into a T
// is an error.
//
//	approval, ok, err := worker.EventPayload[Approval](step)
func EventPayload[T any](step *Step) (payload T, ok bool, err error) {
	event := step.Event()
	if event == nil {
		return payload, false, nil
	}
	err = event.Decode(&payload)
	return payload, err == nil, err
}

// Event is the event the step consumed: the one it awaited (StepOpts.Await),
// as SQL handed it over when the step started. Nil when there is none: the
// step awaits nothing, its timeout passed (OnTimeoutRun), an operator ran or
// scheduled it without the event, or it has not started (a condition).
func (s *Step) Event() *Event { return s.event }

// eventOf is the event SQL started an execution with, if any.
func eventOf(started *protocol.Execution) *Event {
	if started.EventID == nil {
		return nil
	}
	event := &Event{ID: *started.EventID, Payload: started.EventPayload}
	if started.EventName != nil {
		event.Name = *started.EventName
	}
	if started.EventSentAt != nil {
		event.SentAt = *started.EventSentAt
	}
	if started.EventSentBy != nil {
		event.SentBy = *started.EventSentBy
	}
	if string(event.Payload) == "null" {
		event.Payload = nil
	}
	return event
}
