package geneva

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/tern/v2/migrate"
)

// Cells: Geneva past one primary (docs/cells.md). A cell is a whole Geneva
// in one database whose ids carry their partition (sql/cell/); a router is a
// database of PL/Proxy functions named as Geneva's public ones that call
// them in the cell a hero or an id maps to (sql/router/).

// RouterCluster is the name of the router's PL/Proxy cluster: the foreign
// server of PL/Proxy's foreign data wrapper whose options p0 … p(P-1) map
// each partition onto a cell.
const RouterCluster = "geneva"

// RouterOpts are options for MigrateRouter.
type RouterOpts struct {
	// Partitions is P, the number of partitions (a power of two): every
	// cell must have been installed with the same (MigrateOpts.CellPartitions).
	Partitions int

	// Cells are the cells' URLs (postgres://user:password@host:port/db?…)
	// or libpq connection strings. Partition i goes to cell i mod C. The
	// first URL's user and password become the cluster's user mapping: the
	// router reaches every cell as that user.
	Cells []string

	// Roles names the router's roles, as MigrateOpts.Roles does a cell's.
	Roles Roles
}

// cellLabel matches the comment sql/cell/_workflow_id.sql puts on
// geneva._workflow_id: a cell's record of its partition count.
const cellLabel = `^cell of (\d+) partitions`

// powerOfTwo says whether n is a power of two (PL/Proxy maps a hash to a
// partition with hash & (P - 1)).
func powerOfTwo(n int) bool { return n > 0 && n&(n-1) == 0 }

// CellPartitions reads the partition count the database was installed with
// as a cell, or 0 when it is no cell (or has no Geneva).
func CellPartitions(ctx context.Context, db interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var label *string
	err := db.QueryRow(ctx, `
select pg_catalog.substring(pg_catalog.obj_description(p.oid, 'pg_proc'), $1)
from pg_catalog.pg_proc p
join pg_catalog.pg_namespace n on n.oid = p.pronamespace
where n.nspname = 'geneva' and p.proname = '_workflow_id'`, cellLabel).Scan(&label)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && label == nil) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(*label)
}

// cellPartitions decides the partition count Migrate installs with: the
// one asked for, or the database's own when it is a cell already. A cell's
// count never changes (its ids carry it), and a database with workflows
// does not become a cell (theirs do not).
func cellPartitions(ctx context.Context, conn *pgx.Conn, want int) (int, error) {
	if want != 0 && !powerOfTwo(want) {
		return 0, fmt.Errorf("a cell's partitions must be a power of two, not %d", want)
	}
	recorded, err := CellPartitions(ctx, conn)
	if err != nil {
		return 0, err
	}
	switch {
	case recorded != 0 && want != 0 && recorded != want:
		return 0, fmt.Errorf("the database is a cell of %d partitions, which its ids carry: it cannot become one of %d", recorded, want)
	case recorded != 0:
		return recorded, nil
	case want == 0:
		return 0, nil
	}
	var workflows bool
	if err := conn.QueryRow(ctx, "select exists (select from geneva.workflows)").Scan(&workflows); err != nil {
		return 0, err
	}
	if workflows {
		return 0, errors.New("the database has workflows, whose ids carry no partition: install a cell in a new database and move them (docs/cells.md)")
	}
	return want, nil
}

// installCell installs the code package and, in the same transaction, the
// cell's replacements of the id helpers (sql/cell/), so that no id is ever
// made without its partition.
func installCell(ctx context.Context, conn *pgx.Conn, data map[string]any, code *migrate.CodePackage, partitions int) error {
	sql, err := code.Eval(data)
	if err != nil {
		return err
	}
	cellData := map[string]any{"CellPartitions": partitions, "CellMask": partitions - 1}
	cell, err := renderFolder("cell", "", cellData)
	if err != nil {
		return err
	}
	const flag = "select pg_catalog.set_config('geneva.installing_cell', 'on', true);\n"
	return migrate.LockExecTx(ctx, conn, flag+sql+"\n"+cell)
}

// renderFolder executes sql/<folder>'s files as templates: main, when
// given, is the one executed (it includes the others); else every file, in
// name order.
func renderFolder(folder, main string, data map[string]any) (string, error) {
	names, err := fs.Glob(FS, "sql/"+folder+"/*.sql")
	if err != nil {
		return "", err
	}
	slices.Sort(names)
	tmpl := template.New("")
	for _, name := range names {
		body, err := fs.ReadFile(FS, name)
		if err != nil {
			return "", err
		}
		if _, err := tmpl.New(strings.TrimPrefix(name, "sql/")).Parse(string(body)); err != nil {
			return "", err
		}
	}
	var out bytes.Buffer
	run := []string{folder + "/" + main}
	if main == "" {
		run = run[:0]
		for _, name := range names {
			run = append(run, strings.TrimPrefix(name, "sql/"))
		}
	}
	for _, name := range run {
		if err := tmpl.ExecuteTemplate(&out, name, data); err != nil {
			return "", err
		}
		out.WriteString("\n")
	}
	return out.String(), nil
}

// MigrateRouter installs a router in pool's database (docs/cells.md): the
// extension plproxy; the cluster geneva (a foreign server whose option pI
// is partition I's cell, the cells taken in turn, and a user mapping with
// the first cell URL's user and password); a fresh schema geneva with the
// row types of the first cell's workflows, step_executions and schedules; and the
// functions of sql/router/, granted to the roles. Every cell must be a cell
// of opts.Partitions partitions already. One transaction; safe to run again:
// a router's map is kept then (it changes by MovePartition), and every cell
// it names must be listed.
func MigrateRouter(ctx context.Context, pool *pgxpool.Pool, opts RouterOpts) error {
	switch {
	case !powerOfTwo(opts.Partitions):
		return fmt.Errorf("geneva: migrate router: partitions must be a power of two, not %d", opts.Partitions)
	case len(opts.Cells) == 0:
		return errors.New("geneva: migrate router: no cells")
	case len(opts.Cells) > opts.Partitions:
		return fmt.Errorf("geneva: migrate router: %d cells for %d partitions: a cell holds one partition at least", len(opts.Cells), opts.Partitions)
	}

	connstrs := make([]string, len(opts.Cells))
	var user, password string
	var types []string
	var views map[string][2]string
	for i, cellURL := range opts.Cells {
		connstr, u, p, err := cellConnString(cellURL)
		if err != nil {
			return fmt.Errorf("geneva: migrate router: cell %d: %w", i+1, err)
		}
		connstrs[i] = connstr
		if i == 0 {
			user, password = u, p
		}
		err = func() error {
			conn, err := pgx.Connect(ctx, cellURL)
			if err != nil {
				return err
			}
			defer conn.Close(context.WithoutCancel(ctx))
			partitions, err := CellPartitions(ctx, conn)
			if err != nil {
				return err
			}
			if partitions != opts.Partitions {
				return fmt.Errorf("it is a cell of %d partitions, not %d (geneva migrate --cell --partitions %d)", partitions, opts.Partitions, opts.Partitions)
			}
			if i == 0 {
				if types, err = rowTypes(ctx, conn, "workflows", "step_executions", "schedules"); err != nil {
					return err
				}
				views, err = routerViewColumns(ctx, conn)
			}
			return err
		}()
		if err != nil {
			return fmt.Errorf("geneva: migrate router: cell %d: %w", i+1, err)
		}
	}

	// A router's map changes by moves (MovePartition), not by migrating it
	// again: the map it has is kept, if every cell it names is listed.
	partitionCells := make([]string, opts.Partitions)
	for p := range partitionCells {
		partitionCells[p] = connstrs[p%len(connstrs)]
	}
	existing, err := routerMap(ctx, pool)
	if err != nil {
		return fmt.Errorf("geneva: migrate router: %w", err)
	}
	if len(existing) > 0 {
		if len(existing) != opts.Partitions {
			return fmt.Errorf("geneva: migrate router: the router has %d partitions; they do not change (its cells' ids carry them)", len(existing))
		}
		for p, connstr := range existing {
			if !slices.Contains(connstrs, connstr) {
				return fmt.Errorf("geneva: migrate router: partition %d is on the cell %s, which --cells does not list: move its partitions first", p, connstr)
			}
		}
		partitionCells = existing
	}

	var b strings.Builder
	b.WriteString("create extension if not exists plproxy;\n")
	fmt.Fprintf(&b, "drop server if exists %s cascade;\n", RouterCluster)
	fmt.Fprintf(&b, "create server %s foreign data wrapper plproxy options (", RouterCluster)
	for p := range opts.Partitions {
		if p > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "p%d %s", p, quoteLiteral(partitionCells[p]))
	}
	b.WriteString(");\n")
	mapping := []string{}
	if user != "" {
		mapping = append(mapping, "user "+quoteLiteral(user))
	}
	if password != "" {
		mapping = append(mapping, "password "+quoteLiteral(password))
	}
	fmt.Fprintf(&b, "create user mapping for public server %s", RouterCluster)
	if len(mapping) > 0 {
		fmt.Fprintf(&b, " options (%s)", strings.Join(mapping, ", "))
	}
	b.WriteString(";\n")
	b.WriteString("drop schema if exists geneva cascade;\ncreate schema geneva;\n")
	for _, t := range types {
		b.WriteString(t)
	}
	data := opts.Roles.templateData()
	columns, names := map[string]string{}, map[string]string{}
	for view, c := range views {
		columns[view], names[view] = c[0], c[1]
	}
	data["view_columns"], data["view_names"] = columns, names
	router, err := renderFolder("router", "install.sql", data)
	if err != nil {
		return fmt.Errorf("geneva: migrate router: %w", err)
	}
	b.WriteString(router)

	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("geneva: migrate router: %w", err)
	}
	defer conn.Release()
	if err := migrate.LockExecTx(ctx, conn.Conn(), b.String()); err != nil {
		return fmt.Errorf("geneva: migrate router: %w", describePgError(err))
	}
	return nil
}

// routerMap reads the router's map: partition i's cell's connection string
// at i; none when the database has no cluster yet.
func routerMap(ctx context.Context, pool *pgxpool.Pool) ([]string, error) {
	rows, err := pool.Query(ctx, `
select pg_catalog.substr(o.option_name, 2)::integer, o.option_value
from pg_catalog.pg_foreign_server s, pg_catalog.pg_options_to_table(s.srvoptions) o
where s.srvname = $1 and o.option_name ~ '^p[0-9]+$'
order by 1`, RouterCluster)
	if err != nil {
		return nil, err
	}
	var partitions []string
	for rows.Next() {
		var p int
		var connstr string
		if err := rows.Scan(&p, &connstr); err != nil {
			return nil, err
		}
		if p != len(partitions) {
			return nil, fmt.Errorf("the router's map has no partition %d", len(partitions))
		}
		partitions = append(partitions, connstr)
	}
	return partitions, rows.Err()
}

// rowTypes writes create type statements for the router copying the row
// types of the cell's geneva tables: the router's functions return them.
func rowTypes(ctx context.Context, conn *pgx.Conn, tables ...string) ([]string, error) {
	var types []string
	for _, table := range tables {
		var columns string
		err := conn.QueryRow(ctx, `
select pg_catalog.string_agg(pg_catalog.quote_ident(a.attname) || ' ' || pg_catalog.format_type(a.atttypid, a.atttypmod), ', ' order by a.attnum)
from pg_catalog.pg_attribute a
where a.attrelid = pg_catalog.to_regclass($1) and a.attnum > 0 and not a.attisdropped`, "geneva."+table).Scan(&columns)
		if err != nil {
			return nil, err
		}
		types = append(types, fmt.Sprintf("create type geneva.%s as (%s);\n", table, columns))
	}
	return types, nil
}

// routerViewColumns reads, from a cell, the columns of every view the
// router reads through a cells_<view> function of sql/router/ (but
// workflow_counts and engine_metrics, whose are written out): for
// view_columns, "name type, …" (the function's columns after cell), and for
// view_names, "c.name, …" (the router's view's). The router's views thus
// have the cells' columns, whatever they are.
func routerViewColumns(ctx context.Context, conn *pgx.Conn) (map[string][2]string, error) {
	names, err := fs.Glob(FS, "sql/router/cells_*.sql")
	if err != nil {
		return nil, err
	}
	views := map[string][2]string{}
	for _, name := range names {
		view := strings.TrimSuffix(strings.TrimPrefix(path.Base(name), "cells_"), ".sql")
		var columns, selected *string
		err := conn.QueryRow(ctx, `
select pg_catalog.string_agg(pg_catalog.quote_ident(a.attname) || ' ' || pg_catalog.format_type(a.atttypid, a.atttypmod), ', ' order by a.attnum),
  pg_catalog.string_agg('c.' || pg_catalog.quote_ident(a.attname), ', ' order by a.attnum)
from pg_catalog.pg_attribute a
where a.attrelid = pg_catalog.to_regclass($1) and a.attnum > 0 and not a.attisdropped`, "geneva."+view).Scan(&columns, &selected)
		if err != nil {
			return nil, err
		}
		if columns == nil {
			return nil, fmt.Errorf("the cell has no view geneva.%s: migrate it with this geneva first", view)
		}
		views[view] = [2]string{*columns, *selected}
	}
	return views, nil
}

// cellConnString turns a cell's URL into the libpq key=value string
// PL/Proxy takes (it appends user=… to a string without one, which a URL
// would not survive), without the user and password, which it returns for
// the user mapping. A key=value string is taken as it is.
func cellConnString(cellURL string) (connstr, user, password string, err error) {
	if !strings.HasPrefix(cellURL, "postgres://") && !strings.HasPrefix(cellURL, "postgresql://") {
		return cellURL, "", "", nil
	}
	u, err := url.Parse(cellURL)
	if err != nil {
		return "", "", "", err
	}
	var parts []string
	add := func(key, value string) {
		if value != "" {
			parts = append(parts, key+"='"+strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(value)+"'")
		}
	}
	add("host", u.Hostname())
	add("port", u.Port())
	add("dbname", strings.TrimPrefix(path.Clean("/"+u.Path), "/"))
	query := u.Query()
	keys := make([]string, 0, len(query))
	for key := range query {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		switch key {
		case "user":
			user = query.Get(key)
		case "password":
			password = query.Get(key)
		default:
			add(key, query.Get(key))
		}
	}
	if u.User != nil {
		user = u.User.Username()
		password, _ = u.User.Password()
	}
	return strings.Join(parts, " "), user, password, nil
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
