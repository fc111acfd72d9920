package tests

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Resume gives a kept execution a new River job only when its job no longer
// waits to run (geneva._job_waits): a pending job, parked outside River's
// own states, waits for no one.
func TestJobWaits(t *testing.T) {
	t.Parallel()

	for _, tt := range []struct {
		state   string
		newJob  bool
		comment string
	}{
		{"available", false, "about to run"},
		{"scheduled", false, "runs at its time"},
		{"retryable", false, "runs again"},
		{"pending", true, "parked: runs only when something outside River moves it"},
		{"cancelled", true, "gone"},
		{"completed", true, "gone"},
	} {
		t.Run(tt.state, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.define(t, "Waits", `{"steps": [{"name": "a", "wait": "1 hour"}]}`)
			id := b.create(t, "Waits", "1")
			require.Equal(t, "paused", b.call(t, "pause_workflow", id))
			kept := b.active(t, id)
			_, err := b.conn.Exec(b.ctx, `update public.river_job set state = $2::text::river_job_state,
				finalized_at = case when $2 in ('cancelled', 'completed', 'discarded') then now() end where id = $1`,
				*kept.JobID, tt.state)
			require.NoError(t, err)

			require.Equal(t, "ready", b.call(t, "resume_workflow", id))

			after := b.active(t, id)
			require.Equal(t, kept.ID, after.ID, "the kept execution runs")
			if tt.newJob {
				require.NotEqual(t, *kept.JobID, *after.JobID, tt.comment)
				require.Equal(t, 2, b.jobCount(t, kept.ID))
			} else {
				require.Equal(t, *kept.JobID, *after.JobID, tt.comment)
				require.Equal(t, 1, b.jobCount(t, kept.ID))
			}
		})
	}
}
