package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
)

// geneva migrate --cell installs a cell, --router a router onto cells
// (docs/cells.md; the router only where PL/Proxy is installed, and always
// under CI=true); the flags go together or not at all.
func TestMigrateCells(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"migrate", "--cell"}, "need --partitions"},
		{[]string{"migrate", "--partitions", "4"}, "--partitions goes with --cell or --router"},
		{[]string{"migrate", "--router", "--partitions", "4"}, "--router and --cells"},
		{[]string{"migrate", "--cell", "--router", "--partitions", "4"}, "exclude each other"},
		{[]string{"migrate", "--cell", "--partitions", "6"}, "power of two"},
	} {
		_, err := cli(t, empty(t), c.args...)
		require.ErrorContains(t, err, c.want, "%v", c.args)
	}

	ctx := context.Background()
	cells := []string{empty(t), empty(t)}
	for _, cell := range cells {
		out, err := cli(t, cell, "migrate", "--cell", "--partitions", "4")
		require.NoError(t, err)
		require.Contains(t, out, "functions installed")
		conn, err := pgx.Connect(ctx, cell)
		require.NoError(t, err)
		partitions, err := geneva.CellPartitions(ctx, conn)
		require.NoError(t, err)
		require.Equal(t, 4, partitions)
		require.NoError(t, conn.Close(ctx))
	}

	admin, err := pgx.Connect(ctx, dbtest.ServerURL())
	require.NoError(t, err)
	defer admin.Close(ctx)
	var available bool
	require.NoError(t, admin.QueryRow(ctx,
		"select exists (select from pg_available_extensions where name = 'plproxy')").Scan(&available))
	if !available {
		if os.Getenv("CI") == "true" {
			t.Fatal("PL/Proxy is not installed, and CI=true (.ci/run installs Debian's postgresql-15-plproxy)")
		}
		t.Skip("SKIP: PL/Proxy is not installed (apt-get install postgresql-15-plproxy): the router's install is not tested; it fails instead when CI=true")
	}
	router := empty(t)
	out, err := cli(t, router, "migrate", "--router", "--partitions", "4", "--cells", strings.Join(cells, ","))
	require.NoError(t, err)
	require.Contains(t, out, "Router: 4 partitions on 2 cells")
	_, err = cli(t, router, "migrate", "--router", "--partitions", "8", "--cells", strings.Join(cells, ","))
	require.ErrorContains(t, err, "it is a cell of 4 partitions, not 8")

	// the CLI through the router: `geneva ls` (the merged counts and list)
	// and `geneva bulk`, paging across the cells
	routerConn, err := pgx.Connect(ctx, router)
	require.NoError(t, err)
	_, err = routerConn.Exec(ctx, `select geneva.define_workflow('Routed', '{"steps": [{"name": "only"}]}')`)
	require.NoError(t, err)
	_, err = routerConn.Exec(ctx, `select geneva.create_workflows('Routed', 'User', array(select g::text from generate_series(1, 20) g))`)
	require.NoError(t, err)
	require.NoError(t, routerConn.Close(ctx))
	out, err = cli(t, router, "ls", "--json")
	require.NoError(t, err)
	require.Contains(t, out, `"Routed"`)
	out, err = cli(t, router, "bulk", "pause", "--filter", "type=Routed", "--limit", "3", "--json")
	require.NoError(t, err)
	var bulk struct{ Matched, Acted int }
	require.NoError(t, json.Unmarshal([]byte(out), &bulk), out)
	require.Equal(t, 20, bulk.Acted, out)
	require.Equal(t, 20, bulk.Matched, out)
	// the tables of rows from one cell each end with the cell's column
	dbName := func(u string) string { return u[strings.LastIndex(u, "/")+1 : strings.Index(u, "?")] }
	for _, args := range [][]string{{"ls", "--state", "paused"}, {"actions"}} {
		out, err = cli(t, router, args...)
		require.NoError(t, err)
		require.Regexp(t, `(?m)^(id|action) .* cell$`, out, "%v: the header", args)
		for _, cell := range cells {
			require.Contains(t, out, dbName(cell), "%v: the rows of both cells", args)
		}
	}
	out, err = cli(t, cells[0], "actions")
	require.NoError(t, err)
	require.NotRegexp(t, `(?m) cell$`, out, "a cell's own tables have no cell column")

	// partition 1, on the second cell, moves to a third
	third := empty(t)
	_, err = cli(t, third, "migrate", "--cell", "--partitions", "4")
	require.NoError(t, err)
	_, err = cli(t, router, "move-partition", "--partition", "1", "--from", cells[1])
	require.ErrorContains(t, err, "--from URL and --to URL")
	out, err = cli(t, router, "move-partition", "--partition", "1", "--from", cells[1], "--to", third)
	require.NoError(t, err)
	require.Contains(t, out, "Partition 1 moved")
	conn, err := pgx.Connect(ctx, router)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var connstr string
	require.NoError(t, conn.QueryRow(ctx, `select o.option_value
		from pg_foreign_server s, pg_options_to_table(s.srvoptions) o
		where s.srvname = 'geneva' and o.option_name = 'p1'`).Scan(&connstr))
	require.Contains(t, connstr, strings.TrimPrefix(third[strings.LastIndex(third, "/"):strings.Index(third, "?")], "/"))
}

// geneva worker --cells runs a worker for each cell in one process: the
// HTTP steps of both cells' workflows run.
func TestWorkerCells(t *testing.T) {
	t.Setenv("GENEVA_HTTP_SECRET", "")
	t.Setenv("GENEVA_HTTP_SECRET_NEXT", "")
	out, err := cli(t, "", "worker", "--help")
	require.NoError(t, err)
	require.Contains(t, out, "--cells")

	var calls atomic.Int32
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
	}))
	t.Cleanup(endpoint.Close)

	ctx := context.Background()
	urls := []string{migrated(t), migrated(t)}
	clients := make([]*goclient.Client, len(urls))
	ids := make([]int64, len(urls))
	for i, url := range urls {
		conn, err := pgx.Connect(ctx, url)
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Close(ctx) })
		clients[i] = goclient.New(conn)
		require.NoError(t, clients[i].DefineWorkflow(ctx, "Hook", json.RawMessage(
			`{"steps": [{"name": "notify", "http": {"url": "`+endpoint.URL+`/notify", "timeout": 5}}]}`)))
		ids[i], err = clients[i].CreateWorkflow(ctx, "Hook", "Team", fmt.Sprint(i), nil)
		require.NoError(t, err)
	}

	var output lockedBuffer
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- run(runCtx, []string{"worker", "--cells", strings.Join(urls, ","), "--allow-hosts", "127.0.0.1"}, &output, &output)
	}()
	for i, client := range clients {
		require.Eventually(t, func() bool {
			workflow, err := client.GetWorkflow(ctx, ids[i])
			require.NoError(t, err)
			return workflow.State == goclient.StateFinished
		}, 30*time.Second, 20*time.Millisecond, "cell %d's workflow; the worker's output:\n%s", i, &output)
	}
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err, output.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("geneva worker --cells did not stop:\n%s", output.String())
	}
	require.Contains(t, output.String(), "On 2 cells.")
	require.Equal(t, int32(2), calls.Load())
}
