package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// The cells run (docs/cells.md): what a cells' PL/Proxy router adds to a
// call, and steps a second through two cells ÷ one database, measured by
// bench/cells/run.sh (`make bench-cells`, which this runs shorter: -T
// -cells-seconds, -W -cells-workflows) on the benchmark's server, on the
// first (durable) settings.

// cellsCall is a line of run.sh's call table: one call on one side.
type cellsCall struct {
	tps      float64
	p50, p99 int // µs
}

// cellsResults are the cells run's figures; missing says why none were
// measured (PL/Proxy or pgbench missing, run.sh failed).
type cellsResults struct {
	missing string
	// calls by "create"/"get", then "one"/"a cell"/"router"
	calls map[string]map[string]cellsCall
	// steps a second: one database with 1 worker, with 2, 2 cells a worker each
	oneRate, sameRate, cellsRate float64
	output                       string
}

var (
	cellsCallLine  = regexp.MustCompile(`^(create|get) \((one|a cell|router)\)\s+([0-9.]+)\s+(\d+)\s+(\d+)\s*$`)
	cellsStepsLine = regexp.MustCompile(`^\s+(one database, 1 worker|one database, \d+ workers|\d+ cells via the router, a worker each)\s+([0-9.]+)\s*$`)
)

// cells runs bench/cells/run.sh when the server has PL/Proxy and pgbench
// is found, and keeps its figures, or why there are none.
func (b *bench) cells(ctx context.Context) error {
	o := b.o
	if o.cellsSeconds <= 0 {
		return nil
	}
	r := &b.r.cells
	var available bool
	if err := b.pool.QueryRow(ctx, "select exists (select from pg_available_extensions where name = 'plproxy')").Scan(&available); err != nil {
		return err
	}
	if !available {
		r.missing = "PL/Proxy missing (postgresql-15-plproxy)"
		return nil
	}
	if _, err := exec.LookPath("pgbench"); err != nil {
		if out, _ := exec.Command("bash", "-c", "ls /usr/lib/postgresql/*/bin/pgbench").Output(); len(out) == 0 {
			r.missing = "pgbench missing"
			return nil
		}
	}
	cmd := exec.CommandContext(ctx, "bash", "bench/cells/run.sh", "-T", strconv.Itoa(o.cellsSeconds), "-W", strconv.Itoa(o.cellsWorkflows))
	cmd.Env = append(os.Environ(), "DATABASE_URL="+o.databaseURL)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	// a failure (a server where the benchmark may not create databases,
	// say) is the section's line, not the whole benchmark's end
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "geneva-bench: bench/cells/run.sh: %v\n%s", err, out.String())
		r.missing = fmt.Sprintf("bench/cells/run.sh failed (%v; its output is on standard error)", err)
		return nil
	}
	r.output = out.String()
	if err := r.parse(r.output); err != nil {
		fmt.Fprintln(os.Stderr, "geneva-bench:", err)
		r.missing = "bench/cells/run.sh's output was not understood (on standard error)"
	}
	return nil
}

// parse reads run.sh's output.
func (r *cellsResults) parse(out string) error {
	r.calls = map[string]map[string]cellsCall{}
	scanner := bufio.NewScanner(strings.NewReader(out))
	for scanner.Scan() {
		line := scanner.Text()
		if m := cellsCallLine.FindStringSubmatch(line); m != nil {
			tps, _ := strconv.ParseFloat(m[3], 64)
			p50, _ := strconv.Atoi(m[4])
			p99, _ := strconv.Atoi(m[5])
			if r.calls[m[1]] == nil {
				r.calls[m[1]] = map[string]cellsCall{}
			}
			r.calls[m[1]][m[2]] = cellsCall{tps: tps, p50: p50, p99: p99}
			continue
		}
		if m := cellsStepsLine.FindStringSubmatch(line); m != nil {
			rate, _ := strconv.ParseFloat(m[2], 64)
			switch {
			case m[1] == "one database, 1 worker":
				r.oneRate = rate
			case strings.HasPrefix(m[1], "one database"):
				r.sameRate = rate
			default:
				r.cellsRate = rate
			}
		}
	}
	if len(r.calls["create"]) != 3 || len(r.calls["get"]) != 3 || r.oneRate == 0 || r.cellsRate == 0 {
		return fmt.Errorf("bench/cells/run.sh printed what the benchmark does not read:\n%s", out)
	}
	return nil
}

// markdown is the report's Cells section: a line saying why nothing was
// measured, or the ratio and the router's added latency.
func (r *cellsResults) markdown(o options, settings string) string {
	if o.cellsSeconds <= 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Cells\n\n")
	if r.missing != "" {
		fmt.Fprintf(&b, "Not measured: %s.\n\n", r.missing)
		return b.String()
	}
	fmt.Fprintf(&b, "A PL/Proxy router onto 2 cells of 4 partitions on this server (docs/cells.md; bench/cells/run.sh -T %d -W %d, `make bench-cells` at length), %s. "+
		"Steps: %d workflows of 5 no-op steps created through the router and run by a worker a cell, against one database with one worker and with two. "+
		"Calls: pgbench on one connection for %d s each, a call a transaction; \"added\" is the router's latency less one database's.\n\n",
		o.cellsSeconds, o.cellsWorkflows, settings, o.cellsWorkflows, o.cellsSeconds)
	b.WriteString("| measure | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| steps/s: 2 cells ÷ one database (1 worker; 2 workers) | **%.2f** (%.2f) |\n", r.cellsRate/r.oneRate, ratio(r.cellsRate, r.sameRate))
	fmt.Fprintf(&b, "| steps/s: one database, 1 worker / 2 workers / 2 cells | %.0f / %.0f / %.0f |\n", r.oneRate, r.sameRate, r.cellsRate)
	for _, call := range []struct{ name, label string }{{"create", "create_workflow (by hero)"}, {"get", "get_workflow (by id)"}} {
		one, router := r.calls[call.name]["one"], r.calls[call.name]["router"]
		fmt.Fprintf(&b, "| %s through the router, added p50 / p99 | **%d / %d µs** (router %d / %d µs, one database %d / %d µs) |\n",
			call.label, router.p50-one.p50, router.p99-one.p99, router.p50, router.p99, one.p50, one.p99)
	}
	b.WriteString("\n")
	return b.String()
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
