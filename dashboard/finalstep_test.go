package dashboard

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The workflow page says when its last step can start at the earliest
// (geneva.final_step_at), and how far away that is; nothing once it ended.
func TestFinalStepShown(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	h := w.newHandler(t, nil)
	w.exec(t, `select geneva.define_workflow('Trial', '{"steps": [{"name": "welcome"}, {"name": "charge", "after": "30 days"}]}')`)
	id := w.create(t, "Trial", "t-1")
	var created time.Time
	require.NoError(t, w.pool.QueryRow(w.ctx, "select created_at from geneva.workflows where id = $1", id).Scan(&created))

	r := get(t, h, fmt.Sprint("/workflows/", id))
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, `<dt>final step</dt><dd id="final-step-at"`)
	require.Contains(t, r.body, `<time datetime="`+created.Add(30*24*time.Hour).UTC().Format(time.RFC3339Nano)+`"`)
	require.Regexp(t, `</time> \(in (30d00h|29d23h)\)</dd>`, r.body)

	w.exec(t, fmt.Sprintf("select geneva.cancel_workflow(%d)", id))
	r = get(t, h, fmt.Sprint("/workflows/", id))
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.NotContains(t, r.body, `id="final-step-at"`)
}
