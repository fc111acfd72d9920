package worker

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/protocol"
)

// The event SQL hands over with an execution (start_steps' event_* columns,
// complete_steps' next_event_*) becomes Step.Event.
func TestEventOf(t *testing.T) {
	t.Parallel()
	sent := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	id, name := int64(7), "expense_approved"

	t.Run("NoneWithoutAnID", func(t *testing.T) {
		t.Parallel()
		step := &Step{}
		step.start(&protocol.Execution{})
		require.Nil(t, step.Event())
		_, ok, err := EventPayload[map[string]any](step)
		require.NoError(t, err)
		require.False(t, ok)
	})

	t.Run("AllItsFields", func(t *testing.T) {
		t.Parallel()
		step := &Step{}
		step.start(&protocol.Execution{EventID: &id, EventName: &name,
			EventPayload: json.RawMessage(`{"approved_by": "mia", "amount": 120}`), EventSentAt: &sent})
		event := step.Event()
		require.Equal(t, &Event{ID: 7, Name: "expense_approved", Payload: json.RawMessage(`{"approved_by": "mia", "amount": 120}`), SentAt: sent}, event)

		var approval struct {
			ApprovedBy string `json:"approved_by"`
			Amount     int    `json:"amount"`
		}
		require.NoError(t, event.Decode(&approval))
		require.Equal(t, "mia", approval.ApprovedBy)
		require.Equal(t, 120, approval.Amount)

		typed, ok, err := EventPayload[struct {
			ApprovedBy string `json:"approved_by"`
		}](step)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "mia", typed.ApprovedBy)
	})

	t.Run("ANullPayloadIsNone", func(t *testing.T) {
		t.Parallel()
		for _, payload := range []json.RawMessage{nil, json.RawMessage("null")} {
			step := &Step{}
			step.start(&protocol.Execution{EventID: &id, EventName: &name, EventPayload: payload, EventSentAt: &sent})
			require.NotNil(t, step.Event())
			require.Nil(t, step.Event().Payload)
			v := map[string]any{"kept": true}
			require.NoError(t, step.Event().Decode(&v), "no payload decodes as null")
			require.Equal(t, map[string]any{"kept": true}, v)
			_, ok, err := EventPayload[map[string]any](step)
			require.NoError(t, err)
			require.True(t, ok, "the step has an event, without a payload")
		}
	})

	t.Run("APayloadOfAnotherShapeIsAnError", func(t *testing.T) {
		t.Parallel()
		step := &Step{}
		step.start(&protocol.Execution{EventID: &id, EventName: &name, EventPayload: json.RawMessage(`[1, 2]`), EventSentAt: &sent})
		_, ok, err := EventPayload[struct{ A int }](step)
		require.False(t, ok)
		require.ErrorContains(t, err, "decoding the payload of event expense_approved (7)")
	})
}
