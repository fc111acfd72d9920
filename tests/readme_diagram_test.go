package tests

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// A transition of a workflow's state.
type transition struct{ From, To string }

// readmeDiagram parses the README's state diagram (the mermaid block of "How
// it works"): its transitions between states, the states a workflow starts
// and ends in ([*]), and the words of its labels.
func readmeDiagram(t *testing.T) (edges []transition, starts, ends []string, labels []string) {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	text := string(readme)
	start := strings.Index(text, "```mermaid\nstateDiagram-v2\n")
	require.GreaterOrEqual(t, start, 0, "README.md has no state diagram")
	block := text[start+len("```mermaid\nstateDiagram-v2\n"):]
	block = block[:strings.Index(block, "```")]

	edge := regexp.MustCompile(`^\s*(\[\*\]|[a-z_]+)\s*-->\s*(\[\*\]|[a-z_]+)\s*(?::\s*(.*))?$`)
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		m := edge.FindStringSubmatch(line)
		require.NotNil(t, m, "README.md's state diagram: %q is not a transition", line)
		from, to := m[1], m[2]
		labels = append(labels, m[3])
		switch {
		case from == "[*]":
			starts = append(starts, to)
		case to == "[*]":
			ends = append(ends, from)
		default:
			require.NotContains(t, edges, transition{from, to}, "README.md's state diagram draws %s → %s twice", from, to)
			edges = append(edges, transition{from, to})
		}
	}
	return edges, starts, ends, labels
}

// TestReadmeStateDiagram holds the README's state diagram to the guard
// trigger workflows_guard_state (sql/guards/workflows_guard_state.sql):
// it draws exactly the transitions the guard lets through, its ended states
// are those the guard lets nothing leave, and every function its labels name
// exists. The guard's rule is its WHEN clause as installed, evaluated for a
// workflow in each state (made by the functions, so that its timestamps are
// as the engine writes them) against every other state.
func TestReadmeStateDiagram(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)

	// a workflow in each state
	b.defineThreeSteps(t)
	b.define(t, "NoSteps", `{"steps": []}`)
	ready := b.create(t, "ThreeSteps", "ready")
	b.run(t, b.create(t, "ThreeSteps", "performing"))
	b.call(t, "pause_workflow", b.create(t, "ThreeSteps", "paused"))
	b.call(t, "cancel_workflow", b.create(t, "ThreeSteps", "canceled"))
	b.create(t, "NoSteps", "finished")
	require.Equal(t, "ready", b.workflow(t, ready).State)
	var states []string
	require.NoError(t, b.conn.QueryRow(b.ctx, "select array_agg(state order by state) from geneva.workflows").Scan(&states))
	require.Equal(t, []string{"canceled", "finished", "paused", "performing", "ready"}, states, "one workflow in each state")

	// the guard's WHEN clause, as PostgreSQL has it
	var definition string
	require.NoError(t, b.conn.QueryRow(b.ctx, `select pg_get_triggerdef(oid) from pg_trigger
		where tgrelid = 'geneva.workflows'::regclass and tgname = 'workflows_guard_state'`).Scan(&definition))
	when := regexp.MustCompile(`(?s) WHEN \((.*)\) EXECUTE FUNCTION `).FindStringSubmatch(definition)
	require.NotNil(t, when, "workflows_guard_state has no WHEN clause: %s", definition)

	// what it lets through: each workflow (old) made the other state (new)
	rows, err := b.conn.Query(b.ctx, `
		select old.state, s.state
		from geneva.workflows old
		cross join unnest($1::text[]) s (state)
		cross join lateral (select (json_populate_record(old, json_build_object('state', s.state))).*) new
		where old.state <> s.state and not coalesce((`+when[1]+`), false)
		order by 1, 2`, states)
	require.NoError(t, err)
	guard, err := pgx.CollectRows(rows, pgx.RowToStructByPos[transition])
	require.NoError(t, err)
	require.NotEmpty(t, guard)

	edges, starts, ends, labels := readmeDiagram(t)
	slices.SortFunc(edges, func(a, b transition) int { return strings.Compare(a.From+" "+a.To, b.From+" "+b.To) })
	require.Equal(t, guard, edges, "README.md's state diagram draws other transitions than workflows_guard_state allows")

	// ended: the states nothing leaves
	var ended []string
	for _, state := range states {
		if !slices.ContainsFunc(guard, func(tr transition) bool { return tr.From == state }) {
			ended = append(ended, state)
		}
	}
	slices.Sort(ends)
	require.Equal(t, ended, ends, "README.md's state diagram ends in other states than the guard lets nothing leave")
	require.Equal(t, []string{"ready"}, starts, "create_workflow makes a ready workflow (one without steps then finishes)")

	// the functions its labels name
	var functions []string
	rows, err = b.conn.Query(b.ctx, `select p.proname::text from pg_proc p
		where p.pronamespace = 'geneva'::regnamespace and p.proname !~ '^_'`)
	require.NoError(t, err)
	functions, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	definitionKeys := []string{"cancel_if"} // a definition's, not a function
	named := regexp.MustCompile(`\b[a-z]+(?:_[a-z]+)+\b`)
	for _, label := range labels {
		for _, name := range named.FindAllString(label, -1) {
			require.True(t, slices.Contains(functions, name) || slices.Contains(definitionKeys, name),
				"README.md's state diagram names %s, which is no function of geneva", name)
		}
	}
}
