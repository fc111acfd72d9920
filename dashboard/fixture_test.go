package dashboard

import (
	"context"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// world is a database with workflows in every state, for the pages to show.
type world struct {
	ctx  context.Context
	pool *pgxpool.Pool
	// paused by GatewayTimeout at capture (authorize succeeded)
	gatewayTimeout []int64
	// paused by CardDeclined at authorize
	cardDeclined []int64
	finished     []int64
	ready        []int64 // Onboarding, first step due
	canceled     int64
	// cellOf, through a cells' router, is the pool of the cell a
	// workflow lives in, where its steps run (the worker protocol is a
	// cell's); nil: pool
	cellOf func(workflowID int64) *pgxpool.Pool
}

// newWorld fills a fresh database: Payment (authorize, capture, receipt;
// errors pause) and Onboarding (welcome, then nudge a day later).
func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{ctx: context.Background(), pool: dbtest.NewPool(t)}
	fillWorld(t, w)
	return w
}

// fillWorld defines the types and creates the workflows of newWorld.
func fillWorld(t *testing.T, w *world) {
	t.Helper()
	w.exec(t, `select geneva.define_workflow('Payment', '{"steps": [{"name": "authorize"}, {"name": "capture"}, {"name": "receipt"}]}')`)
	w.exec(t, `select geneva.define_workflow('Onboarding', '{"steps": [{"name": "welcome"}, {"name": "nudge", "wait": "1 day"}], "queue": "mail"}')`)

	for i := range 3 {
		id := w.create(t, "Payment", "gw-"+string(rune('a'+i)))
		w.step(t, id, "")
		w.step(t, id, "GatewayTimeout")
		w.gatewayTimeout = append(w.gatewayTimeout, id)
	}
	for i := range 2 {
		id := w.create(t, "Payment", "card-"+string(rune('a'+i)))
		w.step(t, id, "CardDeclined")
		w.cardDeclined = append(w.cardDeclined, id)
	}
	for i := range 2 {
		id := w.create(t, "Payment", "done-"+string(rune('a'+i)))
		for range 3 {
			w.step(t, id, "")
		}
		w.finished = append(w.finished, id)
	}
	for i := range 2 {
		w.ready = append(w.ready, w.create(t, "Onboarding", "new-"+string(rune('a'+i))))
	}
	w.canceled = w.create(t, "Onboarding", "gone")
	w.exec(t, "select geneva.cancel_workflow($1)", w.canceled)
}

func (w *world) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	_, err := w.pool.Exec(w.ctx, sql, args...)
	require.NoError(t, err)
}

func (w *world) create(t *testing.T, workflowType, heroID string) int64 {
	t.Helper()
	var id int64
	require.NoError(t, w.pool.QueryRow(w.ctx, "select geneva.create_workflow($1, 'Customer', $2)", workflowType, heroID).Scan(&id))
	return id
}

// step runs the workflow's scheduled step: it succeeds, or fails with the
// error class given.
func (w *world) step(t *testing.T, workflowID int64, errorClass string) {
	t.Helper()
	pool := w.pool
	if w.cellOf != nil {
		pool = w.cellOf(workflowID)
	}
	var executionID int64
	require.NoError(t, pool.QueryRow(w.ctx,
		"select id from geneva.step_history($1) where state = 'scheduled'", workflowID).Scan(&executionID))
	var started int
	require.NoError(t, pool.QueryRow(w.ctx, "select count(*) from geneva.start_step($1)", executionID).Scan(&started))
	require.Equal(t, 1, started, "execution %d did not start", executionID)
	if errorClass == "" {
		_, err := pool.Exec(w.ctx, "select geneva.complete_step($1)", executionID)
		require.NoError(t, err)
		return
	}
	_, err := pool.Exec(w.ctx, "select geneva.fail_step($1, $2, $3, $4)", executionID, []string{errorClass, "*url.Error"},
		"the gateway said: "+errorClass, "goroutine 1 [running]:\nmain.charge()\n\tpayments.go:42")
	require.NoError(t, err)
}

func (w *world) state(t *testing.T, workflowID int64) string {
	t.Helper()
	var state string
	require.NoError(t, w.pool.QueryRow(w.ctx, "select state from geneva.get_workflow($1)", workflowID).Scan(&state))
	return state
}

// newHandler is the dashboard over the world's database.
func (w *world) newHandler(t *testing.T, cfg *Config) *handler {
	t.Helper()
	h, err := New(w.pool, cfg)
	require.NoError(t, err)
	return h.(*handler)
}

var _ http.Handler = (*handler)(nil)
