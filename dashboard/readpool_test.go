package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// TestReadPool: with Config.ReadPool, the pages read through it and the
// actions go through the pool given to New. The read pool here is another
// database, whose sessions are read-only as a hot standby's are, so that
// every page shows it reads there, and writes nothing.
func TestReadPool(t *testing.T) {
	t.Parallel()
	w := newWorld(t) // the primary
	ctx := context.Background()
	conf := dbtest.NewConfig(t)
	owner := dbtest.NewPoolConfig(t, conf)
	var standbyOnly int64
	require.NoError(t, owner.QueryRow(ctx, `select geneva.define_workflow('Onboarding', '{"steps": [{"name": "welcome"}]}')`).Scan(new(any)))
	require.NoError(t, owner.QueryRow(ctx, `select geneva.create_workflow('Onboarding', 'Customer', 'standby-only')`).Scan(&standbyOnly))
	for _, pool := range []*pgxpool.Pool{w.pool, owner} {
		_, err := pool.Exec(ctx, "select geneva.create_schedule('digest', '* * * * *', 'Onboarding', 'Team', 'ops')")
		require.NoError(t, err)
	}
	readConfig, err := pgxpool.ParseConfig(conf.URL())
	require.NoError(t, err)
	readConfig.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	read, err := pgxpool.NewWithConfig(ctx, readConfig)
	require.NoError(t, err)
	t.Cleanup(read.Close)

	h := w.newHandler(t, &Config{ReadPool: read})
	csrf := url.Values{"csrf": {h.csrf}}

	// every page reads the read pool, read-only
	for _, path := range []string{"/", "/workflows", "/paused", "/waiting", "/limits", "/stuck", "/definitions", "/stats", "/schedules",
		fmt.Sprint("/workflows/", standbyOnly)} {
		r := get(t, h, path)
		require.Equal(t, http.StatusOK, r.status, "%s: %s", path, r.body)
	}
	require.Equal(t, ids(standbyOnly), rowsOf(get(t, h, "/workflows").body))
	require.Equal(t, http.StatusNotFound, get(t, h, fmt.Sprint("/workflows/", w.ready[0])).status, "the primary's workflow is not read")

	// the actions act on the primary
	id := w.gatewayTimeout[0]
	r := post(t, h, fmt.Sprintf("/workflows/%d/resume", id), csrf)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.Equal(t, "ready", w.state(t, id))
	r = post(t, h, fmt.Sprintf("/workflows/%d/send-event", w.ready[0]), url.Values{"csrf": {h.csrf}, "event": {"nudged"}})
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	var events int
	require.NoError(t, w.pool.QueryRow(ctx, "select count(*) from geneva.events where workflow_id = $1", w.ready[0]).Scan(&events))
	require.Equal(t, 1, events)
	r = post(t, h, "/schedules/digest/pause", csrf)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	for pool, paused := range map[*pgxpool.Pool]bool{w.pool: true, owner: false} {
		var state bool
		require.NoError(t, pool.QueryRow(ctx, "select paused_at is not null from geneva.schedules where name = 'digest'").Scan(&state))
		require.Equal(t, paused, state)
	}
}
