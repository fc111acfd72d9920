package tests

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// versions returns a workflow's started_version and definition_version.
func (b *testBundle) versions(t *testing.T, id int64) (started, following int) {
	t.Helper()
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select started_version, definition_version from geneva.workflows where id = $1", id).Scan(&started, &following))
	return started, following
}

// drain returns geneva.definition_versions' ongoing per version of the type.
func (b *testBundle) drain(t *testing.T, workflowType string) map[int]int {
	t.Helper()
	rows, err := b.conn.Query(b.ctx,
		"select version, ongoing from geneva.definition_versions where workflow_type = $1", workflowType)
	require.NoError(t, err)
	out := map[int]int{}
	for rows.Next() {
		var version, ongoing int
		require.NoError(t, rows.Scan(&version, &ongoing))
		out[version] = ongoing
	}
	require.NoError(t, rows.Err())
	return out
}

// TestVersionsPerRun: workflows.definition_version and started_version, and
// geneva.definition_versions' ongoing (issue 49, item 7).
func TestVersionsPerRun(t *testing.T) {
	t.Parallel()

	t.Run("WorkflowsFollowNewVersionsAndTheDrainViewCountsByStart", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)
		first := b.create(t, "ThreeSteps", "1")
		ended := b.create(t, "ThreeSteps", "2")
		b.call(t, "cancel_workflow", ended)
		require.Equal(t, map[int]int{1: 1}, b.drain(t, "ThreeSteps"))

		b.define(t, "ThreeSteps", `{"steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}`)
		second := b.create(t, "ThreeSteps", "3")
		started, following := b.versions(t, first)
		require.Equal(t, []int{1, 2}, []int{started, following}, "started under 1, follows 2")
		started, following = b.versions(t, ended)
		require.Equal(t, []int{1, 1}, []int{started, following}, "an ended workflow keeps the version it ended on")
		started, following = b.versions(t, second)
		require.Equal(t, []int{2, 2}, []int{started, following})
		require.Equal(t, map[int]int{1: 1, 2: 1}, b.drain(t, "ThreeSteps"))

		// the same definition again writes nothing, and moves no workflow
		b.define(t, "ThreeSteps", `{"steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}`)
		// rolling back is defining version 1's definition again: version 3
		_, err := b.conn.Exec(b.ctx, `select geneva.define_workflow('ThreeSteps',
			(select definition from geneva.definition_versions where workflow_type = 'ThreeSteps' and version = 1))`)
		require.NoError(t, err)
		started, following = b.versions(t, first)
		require.Equal(t, []int{1, 3}, []int{started, following})
		require.Equal(t, map[int]int{1: 1, 2: 1, 3: 0}, b.drain(t, "ThreeSteps"))

		// the first finishes: version 1 is drained
		for i := range 3 {
			b.complete(t, b.run(t, first).ExecutionID, "success", nil)
			b.setNow(t, t0.Add(hours(2*(i+1)))) // past b's wait
		}
		require.Equal(t, "finished", b.workflow(t, first).State)
		require.Equal(t, map[int]int{1: 0, 2: 1, 3: 0}, b.drain(t, "ThreeSteps"))
	})

	t.Run("ARetryStartsUnderTheCurrentVersion", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		original := b.create(t, "ThreeSteps", "1")
		b.call(t, "cancel_workflow", original)
		b.define(t, "ThreeSteps", `{"steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}`)
		var retry int64
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.retry_workflow($1)", original).Scan(&retry))
		started, following := b.versions(t, retry)
		require.Equal(t, []int{2, 2}, []int{started, following})
	})

	t.Run("TheStartedVersionIsNeverChanged", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		_, err := b.conn.Exec(b.ctx, "update geneva.workflows set started_version = 7 where id = $1", id)
		requireCode(t, err, "55000")
	})
}
