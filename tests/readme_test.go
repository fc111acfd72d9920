package tests

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

const walkthroughFile = "../examples/psql/walkthrough.sql"

func TestReadme(t *testing.T) {
	t.Parallel()

	t.Run("PsqlWalkthroughRunsAsQuoted", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		psql := requirePsql(t)

		walkthrough, err := os.ReadFile(walkthroughFile)
		require.NoError(t, err)
		page, err := os.ReadFile("../docs/psql.md")
		require.NoError(t, err)
		// docs/psql.md quotes the script from its first step to the cancel
		text := string(walkthrough)
		quoted := text[strings.Index(text, "-- 1. Define"):strings.Index(text, "\n\n-- The history")]
		require.Contains(t, string(page), quoted, "docs/psql.md no longer quotes %s", walkthroughFile)

		ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, psql, "-X", "-f", walkthroughFile, "-d", b.conf.URL()).CombinedOutput()
		require.NoError(t, err, "psql -f %s:\n%s", walkthroughFile, out)

		type historyRow struct {
			StepName       string
			State          string
			Outcome        string
			ErrorClassName *string
		}
		rows, err := b.conn.Query(b.ctx, `select step_name, state, outcome, error_class_name
			from geneva.step_executions order by id`)
		require.NoError(t, err)
		history, err := pgx.CollectRows(rows, pgx.RowToStructByPos[historyRow])
		require.NoError(t, err)
		require.Equal(t, []historyRow{
			{"send_welcome", "completed", "success", nil},
			{"send_reminder", "completed", "reattempted_by_exception", ptr("SmtpTimeout")},
			{"send_reminder", "skipped", "skipped_externally", nil},
			{"schedule_call", "canceled", "canceled_externally", nil},
		}, history)
		var state string
		require.NoError(t, b.conn.QueryRow(b.ctx, "select state from geneva.workflows").Scan(&state))
		require.Equal(t, "canceled", state)
	})
}

func TestReadmeQuickstart(t *testing.T) {
	t.Parallel()

	example, err := os.ReadFile("../worker/example_test.go")
	require.NoError(t, err)
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)

	text := string(example)
	body := text[strings.Index(text, "// quickstart:begin\n")+len("// quickstart:begin\n") : strings.Index(text, "\t// quickstart:end")]
	var lines []string
	for _, line := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		lines = append(lines, strings.TrimPrefix(line, "\t"))
	}
	require.Contains(t, string(readme), "```go\n"+strings.Join(lines, "\n")+"\n```",
		"README.md's quickstart is no longer worker/example_test.go's")
}

// sqlArgument is an input argument of an SQL function.
type sqlArgument struct {
	Name       string
	Type       string
	HasDefault bool
}

// readmeFunctions parses docs/sql-api.md's tables: every
// geneva.fn(p_arg type [default ...], ...) in a row's first cell, before
// the Definitions.
func readmeFunctions(t *testing.T) map[string][]sqlArgument {
	t.Helper()
	page, err := os.ReadFile("../docs/sql-api.md")
	require.NoError(t, err)
	section := string(page)
	end := strings.Index(section, "\n## Definitions\n")
	require.GreaterOrEqual(t, end, 0, "docs/sql-api.md has no Definitions")
	section = section[:end]

	call := regexp.MustCompile(`geneva\.([a-z_]+)\(([^)]*)\)`)
	functions := map[string][]sqlArgument{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `geneva.") {
			continue
		}
		cell := strings.Split(line, " | ")[0]
		for _, m := range call.FindAllStringSubmatch(cell, -1) {
			name, list := m[1], strings.TrimSpace(m[2])
			require.NotContains(t, functions, name, "docs/sql-api.md lists geneva.%s twice", name)
			args := []sqlArgument{}
			if list != "" {
				for _, arg := range strings.Split(list, ",") {
					arg, def, hasDefault := strings.Cut(strings.TrimSpace(arg), " default ")
					require.True(t, !hasDefault || def != "", "geneva.%s: %q", name, arg)
					argName, argType, _ := strings.Cut(arg, " ")
					require.NotEmpty(t, argType, "docs/sql-api.md gives no type for geneva.%s's %s", name, argName)
					argType = strings.ReplaceAll(strings.ToLower(argType), "timestamptz", "timestamp with time zone")
					args = append(args, sqlArgument{Name: argName, Type: argType, HasDefault: hasDefault})
				}
			}
			functions[name] = args
		}
	}
	return functions
}

// TestReadmeSQLAPI compares docs/sql-api.md's tables with the functions the
// database has: every public function of schema geneva (not a trigger
// function, not _private), with its arguments' names, types and defaults.
func TestReadmeSQLAPI(t *testing.T) {
	t.Parallel()
	b := setup(t)

	rows, err := b.conn.Query(b.ctx, `
		select p.proname,
		  coalesce((p.proargnames)[1:p.pronargs], '{}'),
		  array(select format_type(a.t, null) from unnest(p.proargtypes::oid[]) with ordinality a(t, i) order by a.i),
		  p.pronargdefaults
		from pg_proc p
		join pg_namespace n on n.oid = p.pronamespace
		where n.nspname = 'geneva' and p.proname !~ '^_' and p.prorettype <> 'trigger'::regtype
		order by p.proname`)
	require.NoError(t, err)
	database := map[string][]sqlArgument{}
	var (
		name     string
		names    []string
		types    []string
		defaults int
	)
	_, err = pgx.ForEachRow(rows, []any{&name, &names, &types, &defaults}, func() error {
		require.NotContains(t, database, name, "geneva.%s is overloaded", name)
		args := []sqlArgument{}
		for i := range types {
			args = append(args, sqlArgument{Name: names[i], Type: types[i], HasDefault: i >= len(types)-defaults})
		}
		database[name] = args
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, database)

	require.Equal(t, database, readmeFunctions(t), "docs/sql-api.md's tables differ from the database's functions")
}

func TestReadmeEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// docs/events.md quotes the script from its first step to the trigger
	out := b.runQuoted(t, "../docs/events.md", "../examples/psql/events.sql", "-- 1. A step", "\n\n-- The history")
	require.Contains(t, string(out), "approve   | approved | ", "awaiting_events listed the step:\n%s", out)

	type eventRow struct {
		HeroID   string
		Payload  string
		Consumed bool
	}
	rows, err := b.conn.Query(b.ctx, `select w.hero_id, e.payload::text, e.consumed_by is not null
		from geneva.events e join geneva.workflows w on w.id = e.workflow_id order by e.id`)
	require.NoError(t, err)
	events, err := pgx.CollectRows(rows, pgx.RowToStructByPos[eventRow])
	require.NoError(t, err)
	require.Equal(t, []eventRow{
		{"1001", `{"approved_by": "ann"}`, true},
		{"1002", `{"approved_by": "carol"}`, false}, // its step is not awaiting yet: kept for it
		{"1002", `{"amount": 42}`, false},           // delivered twice, recorded once
		{"1003", `{"amount": 12}`, false},           // to the Refund it started, once
		{"c-1", `{"by": "a stale rule"}`, false},    // sent before the wait: ignored, kept
		{"c-1", `{"by": "ann"}`, true},              // sent after: decides
		{"c-2", `{"reason": "duplicate"}`, false},   // canceled the claim
	}, events)
	require.Regexp(t, `(?m)^ decide +\| \{approved,rejected\} \| wait$`, string(out), "awaiting any, since the wait:\n%s", out)
	require.Regexp(t, `(?m)^ decide +\| approved +\| \{"by": "ann"\} +\| t$`, string(out), "the approval, sent by the script's role:\n%s", out)
	require.Regexp(t, `(?m)^ canceled \| file +\| canceled_by_event$`, string(out), "withdrawn:\n%s", out)
	require.Regexp(t, `(?m)^ t$\n(?s:.*)^ f$`, string(out), "the keyed sends: true, then false:\n%s", out)
	require.Regexp(t, `(?m)^ +1$\n(?s:.*)^ +0$`, string(out), "the start: 1 reached, then 0:\n%s", out)
	require.Regexp(t, `(?m)^ 1001 +\| +1 \| +2$\n^ 1002 +\| +1 \| +2$`, string(out),
		"started under 1, following 2:\n%s", out)
	require.Regexp(t, `(?m)^ Expense +\| +1 \| f +\| +2$\n^ Expense +\| +2 \| t +\| +0$\n^ Refund +\| +1 \| t +\| +1$`,
		string(out), "the drain view:\n%s", out)
	var outcomes []string
	rows, err = b.conn.Query(b.ctx, `select e.step_name || ' ' || coalesce(e.outcome, e.state)
		from geneva.step_executions e join geneva.workflows w on w.id = e.workflow_id
		where w.hero_id = '1001' order by e.id`)
	require.NoError(t, err)
	outcomes, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"submit success", "approve success", "reimburse scheduled"}, outcomes)
}

func TestReadmeSchedules(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// docs/schedules.md quotes the script from its first step to the test clock
	out := b.runQuoted(t, "../docs/schedules.md", "../examples/psql/schedules.sql", "-- 1. The workflow type", "\n\n-- Under the test clock")
	require.Regexp(t, `sales-digest \| 30 8 \* \* mon-fri \| Europe/Berlin \| f +\| `, string(out))

	type firing struct {
		Slot          time.Time
		Created       bool
		SkippedReason *string
	}
	rows, err := b.conn.Query(b.ctx, `select slot, workflow_id is not null, skipped_reason
		from geneva.schedule_firing_list order by slot`)
	require.NoError(t, err)
	firings, err := pgx.CollectRows(rows, pgx.RowToStructByPos[firing])
	require.NoError(t, err)
	require.Len(t, firings, 2)
	require.Equal(t, time.Date(2031, 1, 7, 8, 0, 0, 0, time.UTC), firings[0].Slot.UTC(), "Tuesday 09:00 in Berlin")
	require.True(t, firings[0].Created)
	require.False(t, firings[1].Created, "Wednesday's: Tuesday's digest has not run")
	require.Contains(t, *firings[1].SkippedReason, "has an ongoing Digest workflow")
	var workflows int
	require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.workflows where workflow_type = 'Digest'").Scan(&workflows))
	require.Equal(t, 1, workflows)
}

func TestReadmeCreateMany(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// docs/operating.md quotes the script from its first step to the retried call
	out := b.runQuoted(t, "../docs/operating.md", "../examples/psql/create_many.sql", "-- 1. A workflow", "\n\n-- The workflows it leaves")
	calls := regexp.MustCompile(`\{[0-9,]+\}`).FindAllString(string(out), -1)
	require.Len(t, calls, 4, "four calls' ids:\n%s", out)
	require.Equal(t, calls[2], calls[3], "the retried call returns the first call's workflows")

	type workflowRow struct {
		HeroID    string
		Group     *string
		State     string
		StepName  string
		Execution string
	}
	rows, err := b.conn.Query(b.ctx, `select w.hero_id, w.group_name, w.state, e.step_name, e.state
		from geneva.workflows w join geneva.step_executions e on e.workflow_id = w.id order by w.id`)
	require.NoError(t, err)
	workflows, err := pgx.CollectRows(rows, pgx.RowToStructByPos[workflowRow])
	require.NoError(t, err)
	want := []workflowRow{}
	for i, group := range []*string{ptr("acme"), ptr("acme"), ptr("globex"), nil, nil, nil, nil} {
		want = append(want, workflowRow{string(rune('1' + i)), group, "ready", "send_email", "scheduled"})
	}
	require.Equal(t, want, workflows)
}

// runQuoted checks that the page (a file of docs/) quotes the psql script
// from the line starting with from up to to, runs the script on the test's
// database and returns its output.
func (b *testBundle) runQuoted(t *testing.T, page, script, from, to string) []byte {
	t.Helper()
	psql := requirePsql(t)
	text, err := os.ReadFile(script)
	require.NoError(t, err)
	doc, err := os.ReadFile(page)
	require.NoError(t, err)
	s := string(text)
	quoted := s[strings.Index(s, from):strings.Index(s, to)]
	require.Contains(t, string(doc), quoted, "%s no longer quotes %s", page, script)

	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, psql, "-X", "-f", script, "-d", b.conf.URL()).CombinedOutput()
	require.NoError(t, err, "psql -f %s:\n%s", script, out)
	return out
}
