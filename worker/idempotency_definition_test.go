package worker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/worker"
)

// WorkflowOpts.IdempotencyTTL becomes the definition's "idempotency_ttl"
// (in seconds, as the waits are); none leaves SQL's default.
func TestIdempotencyTTLDefinition(t *testing.T) {
	t.Parallel()
	wf := worker.NewWorkflow("Charge", &worker.WorkflowOpts{IdempotencyTTL: 7 * 24 * time.Hour}).Step("a", ok, nil)
	require.JSONEq(t, `{"idempotency_ttl": 604800, "steps": [{"name": "a"}]}`, string(mustDefinition(t, wf)))
	wf = worker.NewWorkflow("Charge", nil).Step("a", ok, nil)
	require.JSONEq(t, `{"steps": [{"name": "a"}]}`, string(mustDefinition(t, wf)))
}
