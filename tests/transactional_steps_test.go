package tests

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// transactionalSQL is docs/workflows.md's protocol of a transactional step
// from SQL, as quoted there (psql variables for the claim's ids).
const transactionalSQL = `begin;
insert into invoices (workflow_id, amount_cents) values (:workflow_id, 4200);
select outcome, workflow_state from geneva.complete_step(:execution_id, 'success');
commit;`

// A step's writes and complete_step in one transaction commit together, or
// neither does.
func TestTransactionalStepProtocol(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("../docs/workflows.md")
	require.NoError(t, err)
	require.Contains(t, string(page), "```sql\n"+transactionalSQL+"\n```", "docs/workflows.md no longer quotes the protocol")

	b := setup(t)
	b.setNow(t, t0)
	_, err = b.conn.Exec(b.ctx, "create table invoices (workflow_id bigint primary key, amount_cents bigint not null)")
	require.NoError(t, err)
	b.define(t, "Billing", `{"steps": [{"name": "invoice"}, {"name": "thank"}]}`)
	invoices := func(workflowID int64) int {
		var n int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from invoices where workflow_id = $1", workflowID).Scan(&n))
		return n
	}
	// run claims the workflow's step and runs the quoted statements, the
	// last one replaced by last
	run := func(workflowID int64, last string) {
		started := b.run(t, workflowID)
		script := strings.NewReplacer(":workflow_id", fmt.Sprint(workflowID), ":execution_id", fmt.Sprint(started.ExecutionID)).
			Replace(transactionalSQL)
		statements := strings.Split(script, "\n")
		statements[len(statements)-1] = last
		for _, statement := range statements {
			_, err := b.conn.Exec(b.ctx, statement)
			require.NoError(t, err, statement)
		}
	}

	// committed: the row and the end
	committed := b.create(t, "Billing", "1")
	run(committed, "commit;")
	require.Equal(t, 1, invoices(committed))
	first := b.executions(t, committed)[0]
	require.Equal(t, "completed", first.State)
	require.Equal(t, "success", deref(first.Outcome))
	require.Equal(t, "thank", b.active(t, committed).StepName)

	// rolled back (an error after the write, or a worker that died before
	// the commit): neither; the error is recorded in a new transaction
	rolledBack := b.create(t, "Billing", "2")
	run(rolledBack, "rollback;")
	require.Zero(t, invoices(rolledBack))
	require.Equal(t, "in_progress", b.executions(t, rolledBack)[0].State)
	failed := b.fail(t, b.executions(t, rolledBack)[0].ID, []string{"GatewayTimeout"}, "payment gateway timed out")
	require.Equal(t, "paused_by_exception", deref(failed.Outcome))
	require.Zero(t, invoices(rolledBack))
}
