package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// readViews and readFunctions are all the dashboard reads; operateFunctions
// all it calls to act.
var (
	readViews = []string{
		"workflow_counts", "paused_workflows", "stuck_executions", "step_stats", "workflow_list",
		"step_errors", "definition_steps", "step_throughput", "queue_lag",
	}
	readFunctions    = []string{"now()", "get_workflow(bigint)", "step_history(bigint)"}
	operateFunctions = []string{
		"pause_workflow(bigint)", "resume_workflow(bigint)", "cancel_workflow(bigint)", "skip_step(bigint)",
		"schedule_step(bigint, text)",
	}
)

// TestLeastPrivilege runs the dashboard as a role that may read only the
// views and read functions (and then also call the operator's functions),
// with no grant on any table and EXECUTE revoked from PUBLIC: every page and
// action works, so the dashboard needs nothing else.
func TestLeastPrivilege(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conf := dbtest.NewConfig(t)
	w := &world{ctx: ctx, pool: dbtest.NewPoolConfig(t, conf)}
	fillWorld(t, w)

	// a login role, created by the server's superuser
	role := fmt.Sprintf("dashboard_reader_%d", time.Now().UnixNano())
	super, err := pgx.Connect(ctx, dbtest.ServerURL())
	require.NoError(t, err)
	defer super.Close(ctx)
	_, err = super.Exec(ctx, fmt.Sprintf("create role %s login password 'pw'", role))
	require.NoError(t, err)
	t.Cleanup(func() {
		superURL, _ := url.Parse(dbtest.ServerURL())
		superURL.Path = "/" + conf.Database
		if conn, err := pgx.Connect(ctx, superURL.String()); err == nil {
			_, _ = conn.Exec(ctx, "drop owned by "+role)
			conn.Close(ctx)
		}
		if conn, err := pgx.Connect(ctx, dbtest.ServerURL()); err == nil {
			_, _ = conn.Exec(ctx, "drop role if exists "+role)
			conn.Close(ctx)
		}
	})

	// as the schema's owner: the public API runs as its owner (security
	// definer, as the security model has it); nobody else may call anything
	w.exec(t, "revoke execute on all functions in schema geneva from public")
	for _, fn := range append(append([]string{}, readFunctions[1:]...), operateFunctions...) {
		w.exec(t, "alter function geneva."+fn+" security definer")
	}
	w.exec(t, "grant usage on schema geneva to "+role)
	for _, view := range readViews {
		w.exec(t, fmt.Sprintf("grant select on geneva.%s to %s", view, role))
	}
	for _, fn := range readFunctions {
		w.exec(t, fmt.Sprintf("grant execute on function geneva.%s to %s", fn, role))
	}

	roleURL, err := url.Parse(conf.URL())
	require.NoError(t, err)
	roleURL.User = url.UserPassword(role, "pw")
	pool, err := pgxpool.New(ctx, roleURL.String())
	require.NoError(t, err)
	defer pool.Close()
	_, err = pool.Exec(ctx, "select from geneva.workflows limit 1")
	require.ErrorContains(t, err, "permission denied", "the role must not read the tables")

	reader, err := New(pool, &Config{ReadOnly: true})
	require.NoError(t, err)
	for _, path := range scalePaths(w, w.finished[0]) {
		if strings.HasPrefix(path, "/bulk/") {
			continue // refused when read-only
		}
		r := get(t, reader, path)
		require.Equal(t, http.StatusOK, r.status, "%s: %s", path, r.body)
	}

	// an operator: also the operator's functions
	for _, fn := range operateFunctions {
		w.exec(t, fmt.Sprintf("grant execute on function geneva.%s to %s", fn, role))
	}
	operator := reader.(*handler)
	operator.cfg.ReadOnly = false
	csrf := url.Values{"csrf": {operator.csrf}}
	for _, action := range []string{"pause", "resume", "skip", "run-now", "cancel"} {
		r := post(t, operator, fmt.Sprintf("/workflows/%d/%s", w.ready[0], action), csrf)
		require.Equal(t, http.StatusSeeOther, r.status, "%s: %s", action, r.body)
	}
	r := get(t, operator, "/bulk/cancel?state=paused")
	require.Contains(t, r.body, `<strong id="bulk-count">5</strong>`)
	r = post(t, operator, "/bulk/cancel", url.Values{"csrf": {operator.csrf}, "state": {"paused"}, "upto": {fmt.Sprint(w.canceled)}})
	require.Contains(t, r.body, `<strong id="acted">5</strong> acted on, <strong id="refused">0</strong> refused`)
}
