package promgeneva_test

import (
	"context"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/promgeneva"
)

// The limit gauges come from geneva.limit_usage in the one scrape query,
// for the owner and for a reader (what a metrics endpoint connects as):
// in progress and waiting for the keys of a concurrency, the window's
// starts for the keys of a rate.
func TestLimitMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conf := dbtest.NewConfig(t)
	conn := dbtest.NewConn(t, conf)
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := conn.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	exec(`select geneva.define_limit('payments_api', p_rate => 100, p_per => '100 days')`)
	exec(`select geneva.define_workflow('TenantSync', '{
		"concurrency": {"by": "group", "limit": 1},
		"steps": [{"name": "charge", "limits": ["payments_api"]}]}')`)

	families := scrape(t, promgeneva.Handler(conn))
	require.Empty(t, samples(families, "geneva_limit_in_progress"))

	// acme: one started, one waiting; globex: one started
	for i, group := range []string{"acme", "acme", "globex"} {
		var id int64
		require.NoError(t, conn.QueryRow(ctx, "select geneva.create_workflow('TenantSync', 'Account', $1, p_group => $2)",
			string(rune('1'+i)), group).Scan(&id))
		exec(`select geneva.start_step(e.id) from geneva.step_executions e where e.workflow_id = $1`, id)
	}

	for _, db := range []promgeneva.DB{conn, dbtest.NewConnAs(t, conf, dbtest.Reader)} {
		families = scrape(t, promgeneva.Handler(db))
		require.Equal(t, map[string]float64{"": 0}, samples(families, "geneva_scrape_error"))
		require.Equal(t, map[string]float64{
			"key=acme,kind=concurrency,limit=TenantSync":   1,
			"key=globex,kind=concurrency,limit=TenantSync": 1,
		}, samples(families, "geneva_limit_in_progress"))
		require.Equal(t, map[string]float64{
			"key=acme,kind=concurrency,limit=TenantSync":   1,
			"key=globex,kind=concurrency,limit=TenantSync": 0,
		}, samples(families, "geneva_limit_waiting"))
		require.Equal(t, map[string]float64{
			"key=,kind=limit,limit=payments_api": 2, // by none: one key
		}, samples(families, "geneva_limit_window_starts"))
		require.Equal(t, dto.MetricType_GAUGE, families["geneva_limit_waiting"].GetType())
	}
}
