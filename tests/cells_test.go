package tests

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
)

// cellsPartitions is P of the cells test: 4 partitions on 2 cells, so that
// each cell holds 2 (partition p on cell p mod 2).
const cellsPartitions = 4

// cellsSetup makes two cell databases and a router onto them on the test
// server (docs/cells.md), each a fresh database dropped at the test's end,
// and returns their pools: the cells, then the router. Without PL/Proxy
// (Debian's postgresql-15-plproxy) the test skips, or fails under CI=true.
func cellsSetup(t *testing.T) (cells []*pgxpool.Pool, cellURLs []string, router *pgxpool.Pool) {
	t.Helper()
	return cellsSetupOf(t, 2)
}

// cellsSetupOf makes n cells, the router onto the first two only.
func cellsSetupOf(t *testing.T, n int) (cells []*pgxpool.Pool, cellURLs []string, router *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dbtest.ServerURL())
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close(ctx) })

	var available bool
	require.NoError(t, admin.QueryRow(ctx,
		"select exists (select from pg_available_extensions where name = 'plproxy')").Scan(&available))
	if !available {
		if os.Getenv("CI") == "true" {
			t.Fatal("PL/Proxy is not installed, and CI=true: the cells test must run in CI (.ci/run installs Debian's postgresql-15-plproxy)")
		}
		t.Skip("SKIP: PL/Proxy is not installed in the test server's PostgreSQL (apt-get install postgresql-15-plproxy), so the cells test cannot run; it fails instead when CI=true")
	}

	database := func(name string) string {
		name = fmt.Sprintf("geneva_%s_%d", name, os.Getpid())
		_, err := admin.Exec(ctx, "drop database if exists "+pgx.Identifier{name}.Sanitize())
		require.NoError(t, err)
		_, err = admin.Exec(ctx, "create database "+pgx.Identifier{name}.Sanitize())
		require.NoError(t, err)
		t.Cleanup(func() {
			_, _ = admin.Exec(ctx, "drop database if exists "+pgx.Identifier{name}.Sanitize()+" with (force)")
		})
		u, err := url.Parse(dbtest.ServerURL())
		require.NoError(t, err)
		u.Path = "/" + name
		return u.String()
	}
	open := func(dbURL string) *pgxpool.Pool {
		pool, err := pgxpool.New(ctx, dbURL)
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		return pool
	}

	for i := range n {
		cellURL := database("cell" + strconv.Itoa(i))
		pool := open(cellURL)
		_, err := geneva.Migrate(ctx, pool, &geneva.MigrateOpts{CellPartitions: cellsPartitions})
		require.NoError(t, err)
		cells, cellURLs = append(cells, pool), append(cellURLs, cellURL)
	}
	router = open(database("router"))
	require.NoError(t, geneva.MigrateRouter(ctx, router, geneva.RouterOpts{Partitions: cellsPartitions, Cells: cellURLs[:2]}))
	// a definition through the router is every cell's
	_, err = router.Exec(ctx, "select geneva.define_workflow('Onboarding', $1::jsonb)",
		`{"steps": [{"name": "welcome"}, {"name": "nudge", "wait": "1 day"}]}`)
	require.NoError(t, err)
	for _, cell := range cells[:2] {
		var defined bool
		require.NoError(t, cell.QueryRow(ctx,
			"select exists (select from geneva.workflow_definitions where workflow_type = 'Onboarding')").Scan(&defined))
		require.True(t, defined)
	}
	return cells, cellURLs, router
}

// TestCells: workflows created through a router land in the cell their
// hero's partition is on, their ids carry that partition, calls by id reach
// that cell, lists merge, and a hero's second ongoing workflow is refused
// across the router (docs/cells.md).
func TestCells(t *testing.T) {
	ctx := context.Background()
	cells, cellURLs, router := cellsSetup(t)

	// 3,000 heroes, through the router, in one round trip
	const heroes = 3000
	batch := &pgx.Batch{}
	for i := range heroes {
		batch.Queue("select geneva.create_workflow('Onboarding', 'User', $1)", strconv.Itoa(i))
	}
	results := router.SendBatch(ctx, batch)
	ids := map[int64]bool{}
	for range heroes {
		var id int64
		require.NoError(t, results.QueryRow().Scan(&id))
		ids[id] = true
	}
	require.NoError(t, results.Close())
	require.Len(t, ids, heroes, "every id is new")

	// each cell holds the heroes of its partitions (p mod 2), and each id
	// carries its hero's partition
	total := 0
	for i, cell := range cells {
		var count, misplaced, mislabeled int
		require.NoError(t, cell.QueryRow(ctx, `
			select count(*),
			  count(*) filter (where (hashtext(hero_type || ':' || hero_id) & $1) % 2 <> $2),
			  count(*) filter (where id & $1 <> hashtext(hero_type || ':' || hero_id) & $1)
			from geneva.workflows`, cellsPartitions-1, i).Scan(&count, &misplaced, &mislabeled))
		require.Greater(t, count, heroes/4, "cell %d holds its share", i)
		require.Zero(t, misplaced, "cell %d holds only its partitions' heroes", i)
		require.Zero(t, mislabeled, "cell %d's ids carry their partition", i)
		var executions, wrong int
		require.NoError(t, cell.QueryRow(ctx, `
			select count(*), count(*) filter (where e.id & $1 <> e.workflow_id & $1)
			from geneva.step_executions e`, cellsPartitions-1).Scan(&executions, &wrong))
		require.Equal(t, count, executions, "cell %d: an execution a workflow", i)
		require.Zero(t, wrong, "cell %d: executions carry their workflow's partition", i)
		partitions, err := geneva.CellPartitions(ctx, cell)
		require.NoError(t, err)
		require.Equal(t, cellsPartitions, partitions)
		total += count
	}
	require.Equal(t, heroes, total)

	// lists and counts merge the cells
	var count, newest int64
	require.NoError(t, router.QueryRow(ctx, "select workflows, newest_id from geneva.count_workflows()").Scan(&count, &newest))
	require.EqualValues(t, heroes, count)
	var highest int64
	for id := range ids {
		highest = max(highest, id)
	}
	require.Equal(t, highest, newest)
	listed := map[int64]bool{}
	before := int64(0)
	for page := 0; ; page++ {
		filter := `{}`
		if before != 0 {
			filter = fmt.Sprintf(`{"before_id": %d}`, before)
		}
		rows, err := router.Query(ctx, "select id from geneva.list_workflows($1::jsonb, 700)", filter)
		require.NoError(t, err)
		pageIDs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		require.NoError(t, err)
		if len(pageIDs) == 0 {
			break
		}
		require.LessOrEqual(t, len(pageIDs), 700)
		for j, id := range pageIDs {
			require.False(t, listed[id], "page %d repeats %d", page, id)
			if j > 0 {
				require.Less(t, id, pageIDs[j-1], "newest (highest id) first")
			}
			listed[id] = true
		}
		before = pageIDs[len(pageIDs)-1]
	}
	require.Equal(t, ids, listed, "the pages hold every workflow once")

	// every verb by id reaches the workflow's cell
	cellOf := func(id int64) *pgxpool.Pool { return cells[(id&(cellsPartitions-1))%2] }
	stateIn := func(id int64) string {
		var state string
		require.NoError(t, cellOf(id).QueryRow(ctx, "select state from geneva.workflows where id = $1", id).Scan(&state))
		return state
	}
	for _, hero := range []string{"7", "8", "9", "10"} {
		var id int64
		require.NoError(t, router.QueryRow(ctx,
			"select id from geneva.list_workflows(jsonb_build_object('hero_type', 'User', 'hero_id', $1::text))", hero).Scan(&id))

		var state, heroID string
		require.NoError(t, router.QueryRow(ctx, "select state, hero_id from geneva.get_workflow($1)", id).Scan(&state, &heroID))
		require.Equal(t, "ready", state)
		require.Equal(t, hero, heroID)

		require.NoError(t, router.QueryRow(ctx, "select state from geneva.pause_workflow($1)", id).Scan(&state))
		require.Equal(t, "paused", state)
		require.Equal(t, "paused", stateIn(id))
		require.NoError(t, router.QueryRow(ctx, "select state from geneva.resume_workflow($1)", id).Scan(&state))
		require.Equal(t, "ready", stateIn(id))

		var executionID int64
		var step string
		require.NoError(t, router.QueryRow(ctx, "select id, step_name from geneva.step_history($1)", id).Scan(&executionID, &step))
		require.Equal(t, "welcome", step)
		require.Equal(t, id&(cellsPartitions-1), executionID&(cellsPartitions-1))
		var workflowID int64
		require.NoError(t, router.QueryRow(ctx, "select workflow_id from geneva.get_step_execution($1)", executionID).Scan(&workflowID))
		require.Equal(t, id, workflowID)

		var recorded bool
		require.NoError(t, router.QueryRow(ctx, "select geneva.send_event($1, 'hello')", id).Scan(&recorded))
		require.True(t, recorded)
		var sent int
		require.NoError(t, router.QueryRow(ctx, "select geneva.send_hero_event('User', $1, 'hello again')", hero).Scan(&sent))
		require.Equal(t, 1, sent)
		var events int
		require.NoError(t, cellOf(id).QueryRow(ctx, "select count(*) from geneva.events where workflow_id = $1", id).Scan(&events))
		require.Equal(t, 2, events, "both events reached the workflow's cell")

		// a hero's second ongoing workflow is refused, with the cell's SQLSTATE
		var second int64
		err := router.QueryRow(ctx, "select geneva.create_workflow('Onboarding', 'User', $1)", hero).Scan(&second)
		var pgErr *pgconn.PgError
		require.True(t, errors.As(err, &pgErr), "%v", err)
		require.Equal(t, "23505", pgErr.Code)

		// a child lives in its parent's cell, whatever its hero
		var child int64
		require.NoError(t, router.QueryRow(ctx,
			"select geneva.create_workflow('Onboarding', 'Account', 'child of ' || $1, p_parent_id => $2)", hero, id).Scan(&child))
		require.Equal(t, id&(cellsPartitions-1), child&(cellsPartitions-1))
		var parent int64
		require.NoError(t, cellOf(id).QueryRow(ctx, "select parent_id from geneva.workflows where id = $1", child).Scan(&parent))
		require.Equal(t, id, parent)

		require.NoError(t, router.QueryRow(ctx, "select state from geneva.cancel_workflow($1)", id).Scan(&state))
		require.Equal(t, "canceled", stateIn(id))
	}

	// a list: each cell's share created there, the ids in the list's order
	listHeroes, groups := []string{}, []string{}
	for i := range 50 {
		listHeroes = append(listHeroes, fmt.Sprintf("list-%d", i))
		groups = append(groups, fmt.Sprintf("group-%d", i))
	}
	var listIDs []int64
	require.NoError(t, router.QueryRow(ctx,
		"select geneva.create_workflows('Onboarding', 'Account', $1, p_groups => $2)", listHeroes, groups).Scan(&listIDs))
	require.Len(t, listIDs, len(listHeroes))
	perCell := map[int]int{}
	for i, id := range listIDs {
		var heroID, group string
		var hash int64
		require.NoError(t, cellOf(id).QueryRow(ctx,
			"select hero_id, group_name, hashtext(hero_type || ':' || hero_id) from geneva.workflows where id = $1", id).Scan(&heroID, &group, &hash))
		require.Equal(t, listHeroes[i], heroID)
		require.Equal(t, groups[i], group)
		require.Equal(t, hash&(cellsPartitions-1), id&(cellsPartitions-1))
		perCell[int(id&(cellsPartitions-1))%2]++
	}
	require.Len(t, perCell, 2, "the list spans both cells")
	_, err := router.Exec(ctx, "select geneva.create_workflows('Onboarding', 'Account', $1, p_groups => $2)", listHeroes, groups[:3])
	var lengthErr *pgconn.PgError
	require.True(t, errors.As(err, &lengthErr), "%v", err)
	require.Equal(t, "22023", lengthErr.Code)

	// the router's roles: an application creates and reads, and may not
	// pause
	tx, err := router.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "set local role geneva_app")
	require.NoError(t, err)
	var appID int64
	require.NoError(t, tx.QueryRow(ctx, "select geneva.create_workflow('Onboarding', 'User', 'app')").Scan(&appID))
	require.NoError(t, tx.QueryRow(ctx, "select id from geneva.get_workflow($1)", appID).Scan(&appID))
	_, err = tx.Exec(ctx, "select geneva.pause_workflow($1)", appID)
	var denied *pgconn.PgError
	require.True(t, errors.As(err, &denied), "%v", err)
	require.Equal(t, "42501", denied.Code)
	require.NoError(t, tx.Rollback(ctx))

	// the router's public functions take and return what the cells' do
	rows, err := router.Query(ctx, `
		select p.proname, pg_get_function_arguments(p.oid), pg_get_function_result(p.oid)
		from pg_proc p join pg_namespace n on n.oid = p.pronamespace
		where n.nspname = 'geneva' and p.proname !~ '^(_|cells?_)' order by 1`)
	require.NoError(t, err)
	type signature struct{ Name, Arguments, Result string }
	routed, err := pgx.CollectRows(rows, pgx.RowToStructByPos[signature])
	require.NoError(t, err)
	require.NotEmpty(t, routed)
	for _, s := range routed {
		var arguments, result string
		require.NoError(t, cells[0].QueryRow(ctx, `
			select pg_get_function_arguments(p.oid), pg_get_function_result(p.oid)
			from pg_proc p join pg_namespace n on n.oid = p.pronamespace
			where n.nspname = 'geneva' and p.proname = $1`, s.Name).Scan(&arguments, &result))
		require.Equal(t, arguments, s.Arguments, "geneva.%s's arguments", s.Name)
		require.Equal(t, result, s.Result, "geneva.%s's result", s.Name)
	}

	// the router's views have the cells' columns, and merge the cells' rows
	viewColumns := `
		select c.relname, string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' order by a.attnum)
		from pg_class c join pg_namespace n on n.oid = c.relnamespace
		join pg_attribute a on a.attrelid = c.oid and a.attnum > 0
		where n.nspname = 'geneva' and c.relkind = 'v' and c.relname !~ '^_'
		  and ($1::text[] is null or c.relname = any($1))
		group by c.relname order by 1`
	rows, err = router.Query(ctx, viewColumns, nil)
	require.NoError(t, err)
	type columns struct{ Name, Columns string }
	routerViews, err := pgx.CollectRows(rows, pgx.RowToStructByPos[columns])
	require.NoError(t, err)
	names := []string{}
	for _, v := range routerViews {
		names = append(names, v.Name)
	}
	rows, err = cells[0].Query(ctx, viewColumns, nil)
	require.NoError(t, err)
	cellViews, err := pgx.CollectRows(rows, pgx.RowToStructByPos[columns])
	require.NoError(t, err)
	cellViewNames := []string{}
	for _, v := range cellViews {
		cellViewNames = append(cellViewNames, v.Name)
	}
	require.Equal(t, cellViewNames, names, "the router has every view of a cell")
	// a view whose rows are each one cell's ends with the cell's name
	withCell := map[string]bool{}
	for i, v := range routerViews {
		if v.Columns != cellViews[i].Columns {
			require.Equal(t, cellViews[i].Columns+", cell text", v.Columns, "geneva.%s's columns", v.Name)
			withCell[v.Name] = true
		}
	}
	require.True(t, withCell["stuck_executions"] && withCell["workflow_timeline"] && !withCell["step_throughput"], "%v", withCell)
	// every view reads through the router
	for _, name := range names {
		_, err := router.Exec(ctx, "select * from geneva."+pgx.Identifier{name}.Sanitize())
		require.NoError(t, err, "geneva.%s", name)
	}
	var ready, readyInCells, readyMetric int64
	require.NoError(t, router.QueryRow(ctx,
		"select workflows from geneva.workflow_counts where workflow_type = 'Onboarding' and state = 'ready'").Scan(&ready))
	for _, cell := range cells {
		var n int64
		require.NoError(t, cell.QueryRow(ctx,
			"select count(*) from geneva.workflows where workflow_type = 'Onboarding' and state = 'ready'").Scan(&n))
		readyInCells += n
	}
	require.Equal(t, readyInCells, ready)
	require.NoError(t, router.QueryRow(ctx, `
		select value::bigint from geneva.engine_metrics
		where metric = 'workflows' and workflow_type = 'Onboarding' and label = 'ready'`).Scan(&readyMetric))
	require.Equal(t, readyInCells, readyMetric)
	var cellNames int
	require.NoError(t, router.QueryRow(ctx,
		"select count(distinct cell) from geneva.cells_workflow_counts()").Scan(&cellNames))
	require.Equal(t, 2, cellNames, "each cell's rows apart")

	// a reader reads the views through the router
	tx, err = router.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "set local role geneva_reader")
	require.NoError(t, err)
	require.NoError(t, tx.QueryRow(ctx, "select count(*) from geneva.engine_metrics").Scan(&readyMetric))
	require.NoError(t, tx.Rollback(ctx))

	// a cell stays a cell when migrated again without CellPartitions, and
	// refuses another count
	_, err = geneva.Migrate(ctx, cells[0], nil)
	require.NoError(t, err)
	partitions, err := geneva.CellPartitions(ctx, cells[0])
	require.NoError(t, err)
	require.Equal(t, cellsPartitions, partitions)
	_, err = geneva.Migrate(ctx, cells[0], &geneva.MigrateOpts{CellPartitions: 8})
	require.ErrorContains(t, err, "cell of 4 partitions")
	// and the psql install, which would put back a single database's ids,
	// refuses it
	psql := requirePsql(t)
	out, err := exec.CommandContext(ctx, psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", distFile, "-d", cellURLs[0]).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "this database is a cell")
	partitions, err = geneva.CellPartitions(ctx, cells[0])
	require.NoError(t, err)
	require.Equal(t, cellsPartitions, partitions)
}

// TestCellsWorkers: a worker on each cell finishes the workflows created
// through the router; one cell's worker SIGKILLed does not stop the other's,
// and its cell's workflows wait for it (docs/cells.md).
func TestCellsWorkers(t *testing.T) {
	ctx := context.Background()
	cells, cellURLs, router := cellsSetup(t)

	var ran atomic.Int64
	greet := worker.NewWorkflow("Greet", nil).
		Step("hello", func(ctx context.Context, step *worker.Step) error {
			ran.Add(1)
			return nil
		}, nil)
	start := func(cell *pgxpool.Pool) *worker.Worker {
		w, err := worker.New(cell, &worker.Config{Workflows: []*worker.Workflow{greet}, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		require.NoError(t, w.Start(ctx)) // defines Greet in its cell
		t.Cleanup(func() { _ = w.Stop(context.Background()) })
		return w
	}
	workers := []*worker.Worker{start(cells[0]), start(cells[1])}

	create := func(from, to int) {
		batch := &pgx.Batch{}
		for i := from; i < to; i++ {
			batch.Queue("select geneva.create_workflow('Greet', 'User', $1)", strconv.Itoa(i))
		}
		require.NoError(t, router.SendBatch(ctx, batch).Close())
	}
	// counts of finished and of all Greet workflows, through the router and
	// in one cell
	counts := func(db *pgxpool.Pool) (finished, all int64) {
		require.NoError(t, db.QueryRow(ctx, `
			select (select workflows from geneva.count_workflows('{"type": "Greet", "state": "finished"}')),
			       (select workflows from geneva.count_workflows('{"type": "Greet"}'))`).Scan(&finished, &all))
		return finished, all
	}
	waitFor := func(what string, done func() bool) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for !done() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	create(0, 400)
	waitFor("400 workflows finished", func() bool { finished, _ := counts(router); return finished == 400 })
	require.EqualValues(t, 400, ran.Load())

	// cell 0's worker is now a process of its own, whose steps hang, and it
	// is SIGKILLed with steps in progress: cell 1's workflows still finish,
	// cell 0's wait
	require.NoError(t, workers[0].Stop(ctx))
	child := exec.Command(os.Args[0], "-test.run=^TestCellsWorkerChild$", "-test.count=1")
	child.Env = append(os.Environ(), "GENEVA_CELL_CHILD_URL="+cellURLs[0])
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill() }) // if the test fails before it
	_, before0 := counts(cells[0])
	create(400, 600)
	_, all0 := counts(cells[0])
	_, all1 := counts(cells[1])
	require.Greater(t, all0, before0, "some new heroes are cell 0's")
	inProgress := func() (n int) {
		require.NoError(t, cells[0].QueryRow(ctx,
			"select count(*) from geneva.step_executions where state = 'in_progress'").Scan(&n))
		return n
	}
	waitFor("cell 0's child worker running steps", func() bool { return inProgress() > 0 })
	require.NoError(t, child.Process.Kill())
	_ = child.Wait()
	waitFor("cell 1's workflows finished", func() bool { finished, _ := counts(cells[1]); return finished == all1 })
	finished0, _ := counts(cells[0])
	require.Equal(t, before0, finished0, "cell 0's new workflows wait for its worker")
	require.Positive(t, inProgress(), "the killed worker's steps are left in progress")

	// its worker back, housekeeping recovers the killed worker's steps, and
	// everything finishes, each step's success recorded once
	start(cells[0])
	_, err := cells[0].Exec(ctx, "select geneva.housekeep(p_stuck_in_progress_after => interval '0')")
	require.NoError(t, err)
	waitFor("600 workflows finished", func() bool { finished, _ := counts(router); return finished == 600 })
	for _, cell := range cells[:2] {
		var twice int
		require.NoError(t, cell.QueryRow(ctx, `select count(*) from (
			select workflow_id from geneva.step_executions where outcome = 'success'
			group by workflow_id having count(*) > 1) x`).Scan(&twice))
		require.Zero(t, twice)
	}
}

// TestCellsWorkerChild is TestCellsWorkers' worker process on a cell (its
// GENEVA_CELL_CHILD_URL): Greet's steps hang until it is killed.
func TestCellsWorkerChild(t *testing.T) {
	cellURL := os.Getenv("GENEVA_CELL_CHILD_URL")
	if cellURL == "" {
		t.Skip("TestCellsWorkers' worker process")
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, cellURL)
	require.NoError(t, err)
	hang := worker.NewWorkflow("Greet", nil).
		Step("hello", func(ctx context.Context, step *worker.Step) error {
			<-ctx.Done()
			return ctx.Err()
		}, nil)
	w, err := worker.New(pool, &worker.Config{Workflows: []*worker.Workflow{hang}, Logger: slog.New(slog.DiscardHandler),
		StepTimeout: time.Hour})
	require.NoError(t, err)
	require.NoError(t, w.Start(ctx))
	select {} // until killed
}

// TestCellsRefused: a cell's partitions are a power of two, and a database
// that has workflows does not become a cell (their ids carry no partition).
func TestCellsRefused(t *testing.T) {
	b := setup(t)
	_, err := geneva.Migrate(b.ctx, b.pool, &geneva.MigrateOpts{CellPartitions: 3})
	require.ErrorContains(t, err, "power of two")
	b.defineThreeSteps(t)
	b.create(t, "ThreeSteps", "1")
	_, err = geneva.Migrate(b.ctx, b.pool, &geneva.MigrateOpts{CellPartitions: 4})
	require.ErrorContains(t, err, "has workflows")
	partitions, err := geneva.CellPartitions(b.ctx, b.pool)
	require.NoError(t, err)
	require.Zero(t, partitions)
}

// TestCellsMove: a partition moved to a third cell (rows copied, the map
// changed) loses nothing: its workflows, events and idempotency keys answer
// through the router from the new cell, their pending jobs run there, and
// new workflows of the partition are made there (docs/cells.md).
func TestCellsMove(t *testing.T) {
	ctx := context.Background()
	cells, cellURLs, router := cellsSetupOf(t, 3)
	const partition = 1 // on cell 1 (partition p on cell p mod 2)

	greet := worker.NewWorkflow("Greet", nil).
		Step("hello", func(ctx context.Context, step *worker.Step) error { return nil }, nil)
	definition, err := greet.Definition()
	require.NoError(t, err)
	_, err = router.Exec(ctx, "select geneva.define_workflow('Greet', $1)", definition)
	require.NoError(t, err)
	_, err = cells[2].Exec(ctx, "select geneva.define_workflow('Greet', $1)", definition)
	require.NoError(t, err)

	// 300 workflows, no worker yet: their jobs wait
	const heroes = 300
	batch := &pgx.Batch{}
	for i := range heroes {
		batch.Queue("select geneva.create_workflow('Greet', 'User', $1, p_idempotency_key => 'order-' || $1)", strconv.Itoa(i))
	}
	require.NoError(t, router.SendBatch(ctx, batch).Close())
	rows, err := cells[1].Query(ctx, "select id from geneva.workflows where id & $1 = $2 order by id", cellsPartitions-1, partition)
	require.NoError(t, err)
	moving, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	require.NotEmpty(t, moving)
	var recorded bool
	require.NoError(t, router.QueryRow(ctx, "select geneva.send_event($1, 'hello', p_key => 'k1')", moving[0]).Scan(&recorded))
	require.True(t, recorded)

	require.NoError(t, geneva.MovePartition(ctx, geneva.MoveOpts{
		Router: router, From: cells[1], To: cells[2], ToURL: cellURLs[2], Partition: partition,
	}))

	countIn := func(cell *pgxpool.Pool, query string) int {
		var n int
		require.NoError(t, cell.QueryRow(ctx, query, cellsPartitions-1, partition).Scan(&n))
		return n
	}
	require.Zero(t, countIn(cells[1], "select count(*) from geneva.workflows where id & $1 = $2"))
	require.Equal(t, len(moving), countIn(cells[2], "select count(*) from geneva.workflows where id & $1 = $2"))
	require.Equal(t, len(moving), countIn(cells[2], "select count(*) from geneva.step_executions where workflow_id & $1 = $2 and job_id is not null"))
	require.Equal(t, len(moving), countIn(cells[2], `select count(*) from public.river_job j
		join geneva.step_executions e on e.job_id = j.id where e.workflow_id & $1 = $2`))

	// through the router, from the new cell: the workflow, its event (its
	// key recorded), its idempotency key
	var heroID string
	require.NoError(t, router.QueryRow(ctx, "select hero_id from geneva.get_workflow($1)", moving[0]).Scan(&heroID))
	require.NoError(t, router.QueryRow(ctx, "select geneva.send_event($1, 'hello', p_key => 'k1')", moving[0]).Scan(&recorded))
	require.False(t, recorded, "the event's key moved with it")
	var again int64
	require.NoError(t, router.QueryRow(ctx,
		"select geneva.create_workflow('Greet', 'User', $1, p_idempotency_key => 'order-' || $1)", heroID).Scan(&again))
	require.Equal(t, moving[0], again, "the idempotency key moved with it")
	var count int64
	require.NoError(t, router.QueryRow(ctx, "select workflows from geneva.count_workflows()").Scan(&count))
	require.EqualValues(t, heroes, count)

	// migrating the router again keeps the moved map, and wants its cells
	err = geneva.MigrateRouter(ctx, router, geneva.RouterOpts{Partitions: cellsPartitions, Cells: cellURLs[:2]})
	require.ErrorContains(t, err, "which --cells does not list")
	require.NoError(t, geneva.MigrateRouter(ctx, router, geneva.RouterOpts{Partitions: cellsPartitions, Cells: cellURLs}))
	require.NoError(t, router.QueryRow(ctx, "select hero_id from geneva.get_workflow($1)", moving[0]).Scan(&heroID))

	// workers on every cell: everything finishes, the moved ones in the new cell
	for _, cell := range cells {
		w, err := worker.New(cell, &worker.Config{Workflows: []*worker.Workflow{greet}, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		require.NoError(t, w.Start(ctx))
		t.Cleanup(func() { _ = w.Stop(context.Background()) })
	}
	require.Eventually(t, func() bool {
		var finished int64
		require.NoError(t, router.QueryRow(ctx,
			`select workflows from geneva.count_workflows('{"state": "finished"}')`).Scan(&finished))
		return finished == heroes
	}, 90*time.Second, 100*time.Millisecond)
	require.Equal(t, len(moving), countIn(cells[2], "select count(*) from geneva.workflows where id & $1 = $2 and state = 'finished'"))

	// a new workflow of the partition is made in the new cell, after the
	// moved ids
	var fresh int64
	for i := 0; ; i++ {
		hero := fmt.Sprintf("new-%d", i)
		var hash int64
		require.NoError(t, router.QueryRow(ctx, "select hashtext('User:' || $1)", hero).Scan(&hash))
		if hash&(cellsPartitions-1) != partition {
			continue
		}
		require.NoError(t, router.QueryRow(ctx, "select geneva.create_workflow('Greet', 'User', $1)", hero).Scan(&fresh))
		break
	}
	require.Greater(t, fresh, moving[len(moving)-1])
	require.Equal(t, 1, countIn(cells[2], fmt.Sprintf("select count(*) from geneva.workflows where id & $1 = $2 and id = %d", fresh)))
}

// TestCellsOperators: through the router, bulk_workflows pages across the
// cells acting on each workflow once, define_limit reaches every cell, a
// schedule lives in its hero's cell and its verbs find it by name, and the
// cells' action log names the router's caller (docs/cells.md).
func TestCellsOperators(t *testing.T) {
	ctx := context.Background()
	cells, _, router := cellsSetup(t)
	cellOf := func(id int64) *pgxpool.Pool { return cells[(id&(cellsPartitions-1))%2] }
	var pgErr *pgconn.PgError

	var ids []int64
	heroes := make([]string, 90)
	for i := range heroes {
		heroes[i] = "bulk-" + strconv.Itoa(i)
	}
	require.NoError(t, router.QueryRow(ctx, "select geneva.create_workflows('Onboarding', 'User', $1)", heroes).Scan(&ids))

	// bulk: pages of 25 across both cells, each workflow paused once, as
	// `geneva bulk` goes on (after_id = last_id while more)
	type bulkResult struct {
		Matched, Acted int
		More           bool
		LastID         *int64 `json:"last_id"`
		Refused        []any
		ActionIDs      []int64 `json:"action_ids"`
	}
	var login string
	require.NoError(t, router.QueryRow(ctx, "select session_user").Scan(&login))
	filter := map[string]any{"type": "Onboarding", "state": "ready"}
	acted, calls := 0, 0
	var lastIDs []int64
	for {
		var result bulkResult
		tx, err := router.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, "set local geneva.actor = 'carol'")
		require.NoError(t, err)
		require.NoError(t, tx.QueryRow(ctx, "select geneva.bulk_workflows('pause', $1, 25)", filter).Scan(&result))
		require.NoError(t, tx.Commit(ctx))
		calls++
		require.LessOrEqual(t, result.Matched, 25)
		require.Empty(t, result.Refused, "no workflow is met twice")
		require.Len(t, result.ActionIDs, 2, "a call a cell")
		acted += result.Acted
		if result.LastID != nil {
			lastIDs = append(lastIDs, *result.LastID)
		}
		if !result.More {
			break
		}
		filter["after_id"] = *result.LastID
	}
	require.Equal(t, len(ids), acted)
	require.GreaterOrEqual(t, calls, 4)
	require.IsIncreasing(t, lastIDs)
	for _, id := range ids {
		var state string
		var actors []string
		require.NoError(t, cellOf(id).QueryRow(ctx, `
			select w.state, array(select a.arguments ->> 'actor' from geneva.action_log a where a.workflow_id = w.id)
			from geneva.workflows w where w.id = $1`, id).Scan(&state, &actors))
		require.Equal(t, "paused", state)
		require.Equal(t, []string{login + " as carol"}, actors, "workflow %d: paused once, by the router's caller (its role, then its claim)", id)
	}

	// a verb by id names the caller: the router's login role without an actor
	var resumed int64
	require.NoError(t, router.QueryRow(ctx, "select id from geneva.resume_workflow($1)", ids[0]).Scan(&resumed))
	var actor string
	require.NoError(t, cellOf(ids[0]).QueryRow(ctx, `
		select arguments ->> 'actor' from geneva.action_log
		where workflow_id = $1 and verb = 'resume_workflow'`, ids[0]).Scan(&actor))
	require.Equal(t, login, actor)

	// a limit is every cell's
	_, err := router.Exec(ctx, "select geneva.define_limit('mail', p_concurrency => 3, p_by => 'hero')")
	require.NoError(t, err)
	for i, cell := range cells[:2] {
		var concurrency int
		require.NoError(t, cell.QueryRow(ctx, "select concurrency from geneva.limits where name = 'mail'").Scan(&concurrency))
		require.Equal(t, 3, concurrency, "cell %d", i)
	}
	_, err = router.Exec(ctx, "select geneva.define_limit('mail', p_by => 'nobody')")
	require.True(t, errors.As(err, &pgErr), "%v", err)
	require.Equal(t, "22023", pgErr.Code)

	// a schedule lives in its hero's cell; its verbs find it by name
	var hash int64
	require.NoError(t, router.QueryRow(ctx, "select hashtext('User:sched')").Scan(&hash))
	home, other := cells[(hash&(cellsPartitions-1))%2], cells[1-(hash&(cellsPartitions-1))%2]
	var scheduleID int64
	require.NoError(t, router.QueryRow(ctx,
		"select geneva.create_schedule('nightly', '0 3 * * *', 'Onboarding', 'User', 'sched')").Scan(&scheduleID))
	countIn := func(cell *pgxpool.Pool) (n int) {
		require.NoError(t, cell.QueryRow(ctx, "select count(*) from geneva.schedules where name = 'nightly'").Scan(&n))
		return n
	}
	require.Equal(t, 1, countIn(home))
	require.Equal(t, 0, countIn(other))
	var paused *time.Time
	require.NoError(t, router.QueryRow(ctx, "select paused_at from geneva.pause_schedule('nightly')").Scan(&paused))
	require.NotNil(t, paused)
	require.NoError(t, router.QueryRow(ctx, "select paused_at from geneva.resume_schedule('nightly')").Scan(&paused))
	require.Nil(t, paused)
	// the same name for a hero of the other cell is refused; of this one, replaced
	otherHero := ""
	for i := 0; otherHero == ""; i++ {
		var h int64
		require.NoError(t, router.QueryRow(ctx, "select hashtext('User:' || $1::text)", strconv.Itoa(i)).Scan(&h))
		if (h&(cellsPartitions-1))%2 != (hash&(cellsPartitions-1))%2 {
			otherHero = strconv.Itoa(i)
		}
	}
	_, err = router.Exec(ctx, "select geneva.create_schedule('nightly', '0 3 * * *', 'Onboarding', 'User', $1)", otherHero)
	require.True(t, errors.As(err, &pgErr), "%v", err)
	require.Equal(t, "22023", pgErr.Code)
	var again int64
	require.NoError(t, router.QueryRow(ctx,
		"select geneva.create_schedule('nightly', '0 4 * * *', 'Onboarding', 'User', 'sched')").Scan(&again))
	require.Equal(t, scheduleID, again)
	var deleted int64
	require.NoError(t, router.QueryRow(ctx, "select id from geneva.delete_schedule('nightly')").Scan(&deleted))
	require.Equal(t, scheduleID, deleted)
	require.Equal(t, 0, countIn(home))
	_, err = router.Exec(ctx, "select geneva.pause_schedule('nightly')")
	require.True(t, errors.As(err, &pgErr), "%v", err)
	require.Equal(t, "P0002", pgErr.Code)
	var scheduleActors []string
	require.NoError(t, home.QueryRow(ctx, `
		select array_agg(actor order by action_id) from geneva.action_log where verb like '%schedule'`).Scan(&scheduleActors))
	require.Equal(t, []string{login, login, login, login, login}, scheduleActors)
}

// TestCellsHousekeeping: through the router, the housekeeping settings are
// set in every cell and read back, a housekeeping round runs in every cell
// (its counts added up, each cell logging the router's caller), and
// schedule_step reaches the workflow's cell (docs/cells.md).
func TestCellsHousekeeping(t *testing.T) {
	ctx := context.Background()
	cells, _, router := cellsSetup(t)
	var login string
	require.NoError(t, router.QueryRow(ctx, "select session_user").Scan(&login))

	var retention string
	require.NoError(t, router.QueryRow(ctx,
		"select retention::text from geneva.set_housekeeping_settings(p_retention => '7 days', p_batch_size => 50)").Scan(&retention))
	require.Equal(t, "7 days", retention)
	for i, cell := range cells {
		var batch int
		require.NoError(t, cell.QueryRow(ctx, "select retention::text, batch_size from geneva.get_housekeeping_settings()").Scan(&retention, &batch))
		require.Equal(t, "7 days", retention, "cell %d", i)
		require.Equal(t, 50, batch, "cell %d", i)
	}
	require.NoError(t, router.QueryRow(ctx, "select batch_size from geneva.get_housekeeping_settings()").Scan(new(int)))

	// a canceled workflow in each cell, deleted by one round through the router
	inCell := map[int]int64{}
	for i := 0; len(inCell) < 2; i++ {
		var id int64
		require.NoError(t, router.QueryRow(ctx, "select geneva.create_workflow('Onboarding', 'User', $1)", strconv.Itoa(i)).Scan(&id))
		if _, ok := inCell[int(id&(cellsPartitions-1))%2]; ok {
			continue
		}
		inCell[int(id&(cellsPartitions-1))%2] = id
		_, err := router.Exec(ctx, "select geneva.cancel_workflow($1)", id)
		require.NoError(t, err)
	}
	// retention 0 moves an ended workflow into history at once (its
	// partition is dropped after its day: docs/history.md)
	var result struct {
		More  bool `json:"more"`
		Moved int  `json:"workflows_moved"`
	}
	require.NoError(t, router.QueryRow(ctx, "select geneva.housekeep(p_retention => '0s')").Scan(&result))
	require.Equal(t, 2, result.Moved)
	require.False(t, result.More)
	for i, cell := range cells {
		var left int
		var actor string
		require.NoError(t, cell.QueryRow(ctx, "select count(*) from geneva.workflows where id = $1", inCell[i]).Scan(&left))
		require.Zero(t, left, "cell %d", i)
		require.NoError(t, cell.QueryRow(ctx,
			"select actor from geneva.action_log where verb = 'housekeep' order by action_id desc limit 1").Scan(&actor))
		require.Equal(t, login, actor, "cell %d", i)
	}

	// schedule_step by id: the nudge a day away, due now in its cell
	var id int64
	require.NoError(t, router.QueryRow(ctx, "select geneva.create_workflow('Onboarding', 'User', 'soon')").Scan(&id))
	cell := cells[(id&(cellsPartitions-1))%2]
	var executionID int64
	require.NoError(t, cell.QueryRow(ctx, "select id from geneva.step_history($1) where state = 'scheduled'", id).Scan(&executionID))
	_, err := cell.Exec(ctx, "select geneva.start_step($1)", executionID)
	require.NoError(t, err)
	_, err = cell.Exec(ctx, "select geneva.complete_step($1)", executionID)
	require.NoError(t, err)
	var due bool
	require.NoError(t, cell.QueryRow(ctx,
		"select scheduled_for <= now() from geneva.step_executions where workflow_id = $1 and state = 'scheduled'", id).Scan(&due))
	require.False(t, due, "the nudge waits a day")
	var state string
	require.NoError(t, router.QueryRow(ctx, "select state from geneva.schedule_step($1)", id).Scan(&state))
	require.Equal(t, "ready", state)
	require.NoError(t, cell.QueryRow(ctx,
		"select scheduled_for <= now() from geneva.step_executions where workflow_id = $1 and state = 'scheduled'", id).Scan(&due))
	require.True(t, due, "scheduled now, in the workflow's cell")
}

// TestCellsDefine: through the router an operator defines an HTTP-only type
// in every cell, and is refused (42501) a Go step or replacing a type that
// has one, as in one database; a worker defines any (docs/cells.md).
func TestCellsDefine(t *testing.T) {
	ctx := context.Background()
	cellURLs, router := dbtest.Cells(t, 2, cellsPartitions)
	_, err := router.Exec(ctx, "select geneva.define_workflow('Onboarding', $1::jsonb)", `{"steps": [{"name": "welcome"}]}`)
	require.NoError(t, err)
	// the login roles of the test server (the cells see the router's user;
	// the router, its caller's login role)
	as := func(role dbtest.Role, sql string, args ...any) error {
		u, err := url.Parse(router.Config().ConnString())
		require.NoError(t, err)
		u.User = url.UserPassword(string(role), "geneva_test")
		conn, err := pgx.Connect(ctx, u.String())
		require.NoError(t, err)
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql, args...)
		return err
	}
	hook := `{"steps": [{"name": "notify", "http": {"url": "https://example.com/hook"}}]}`
	require.NoError(t, as(dbtest.Operator, "select geneva.define_workflow('Hook', $1::jsonb)", hook))
	for i, cellURL := range cellURLs {
		conn, err := pgx.Connect(ctx, cellURL)
		require.NoError(t, err)
		var defined bool
		require.NoError(t, conn.QueryRow(ctx,
			"select exists (select from geneva.workflow_definitions where workflow_type = 'Hook')").Scan(&defined))
		require.NoError(t, conn.Close(ctx))
		require.True(t, defined, "cell %d", i)
	}
	var pgErr *pgconn.PgError
	err = as(dbtest.Operator, "select geneva.define_workflow('Mixed', $1::jsonb)", `{"steps": [{"name": "go"}]}`)
	require.True(t, errors.As(err, &pgErr), "%v", err)
	require.Equal(t, "42501", pgErr.Code, "an operator's Go step")
	err = as(dbtest.Operator, "select geneva.define_workflow('Onboarding', $1::jsonb)", hook)
	require.True(t, errors.As(err, &pgErr), "%v", err)
	require.Equal(t, "42501", pgErr.Code, "an operator replacing a type with Go steps")
	require.NoError(t, as(dbtest.Worker, "select geneva.define_workflow('Mixed', $1::jsonb)", `{"steps": [{"name": "go"}]}`))
}
