package promgeneva_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/promgeneva"
)

// geneva_joins_waiting counts, per type, the joins waiting for their
// children, and geneva_join_children_ongoing the children they wait on.
func TestJoinMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conf := dbtest.NewConfig(t)
	conn := dbtest.NewConn(t, conf)
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := conn.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	exec(`select geneva.define_workflow('Run', '{"steps": [
		{"name": "fan"}, {"name": "join", "await": {"children": "all", "timeout": "1 day"}}]}')`)
	exec(`select geneva.define_workflow('Item', '{"steps": [{"name": "work"}]}')`)
	families := scrape(t, promgeneva.Handler(conn))
	require.Empty(t, samples(families, "geneva_joins_waiting"))

	// two parents fan out (3 and 2 children), one of whose children ends
	for hero, n := range map[string]int{"1": 3, "2": 2} {
		var parent int64
		require.NoError(t, conn.QueryRow(ctx, "select geneva.create_workflow('Run', 'User', $1)", hero).Scan(&parent))
		var execution int64
		require.NoError(t, conn.QueryRow(ctx, `select (geneva.start_step(e.id)).execution_id from geneva.step_executions e
			where e.workflow_id = $1 and e.state = 'scheduled'`, parent).Scan(&execution))
		heroes := []string{}
		for i := range n {
			heroes = append(heroes, hero+"-"+string(rune('a'+i)))
		}
		exec(`select * from geneva.complete_steps(array[$1::bigint], array['success'], array[null::interval],
			array[null::bigint], array[false], false, null, array[jsonb_build_object('children', (
				select jsonb_agg(jsonb_build_object('type', 'Item', 'hero_type', 'User', 'hero_id', h)) from unnest($2::text[]) h))])`,
			execution, heroes)
	}
	exec(`select geneva.cancel_workflow(id) from geneva.workflows where hero_id = '1-a'`)

	for _, db := range []promgeneva.DB{conn, dbtest.NewConnAs(t, conf, dbtest.Reader)} {
		families = scrape(t, promgeneva.Handler(db))
		require.Equal(t, map[string]float64{"": 0}, samples(families, "geneva_scrape_error"))
		require.Equal(t, map[string]float64{"workflow_type=Run": 2}, samples(families, "geneva_joins_waiting"))
		require.Equal(t, map[string]float64{"workflow_type=Run": 4}, samples(families, "geneva_join_children_ongoing"))
	}
}
