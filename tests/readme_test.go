package tests

import (
	"context"
	"os"
	"os/exec"
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
		readme, err := os.ReadFile("../README.md")
		require.NoError(t, err)
		// the README quotes the script from its first step to the cancel
		text := string(walkthrough)
		quoted := text[strings.Index(text, "-- 1. Define"):strings.Index(text, "\n\n-- The history")]
		require.Contains(t, string(readme), quoted, "README.md no longer quotes %s", walkthroughFile)

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
