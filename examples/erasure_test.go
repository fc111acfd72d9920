package examples_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/examples"
	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
)

// The manual's User Erasure workflow with its users tracked as heroes
// (geneva.track_hero): its last step deletes its own hero, and the workflow
// finishes; a user deleted by someone else while its erasure waits cancels
// it at once.
func TestUserErasure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.NewPool(t)
	client := goclient.New(pool)
	_, err := pool.Exec(ctx, examples.ErasureSchema+`;
		insert into erasure_users values (1, 'ann@example.com'), (2, 'bo@example.com');
		insert into erasure_posts values (1, 'hello'), (1, 'again'), (2, 'hi')`)
	require.NoError(t, err)

	world := examples.NewWorld()
	w, err := worker.New(pool, &worker.Config{
		// a day of waits lasts 500 ms
		Workflows: []*worker.Workflow{examples.UserErasure(pool, world, &examples.Options{Compress: float64(24*time.Hour) / float64(500*time.Millisecond)})},
		River:     &river.Config{FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond},
	})
	require.NoError(t, err)
	require.NoError(t, w.Start(ctx))
	defer func() {
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		require.NoError(t, w.Stop(stopCtx))
	}()

	erased, err := client.CreateWorkflow(ctx, "UserErasure", "User", "1", nil)
	require.NoError(t, err)
	// bo's account is deleted by an administrator while its erasure waits
	// its day
	other, err := client.CreateWorkflow(ctx, "UserErasure", "User", "2", nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		active, err := client.Timeline(ctx, other)
		require.NoError(t, err)
		return len(active) == 3 && active[2].StepName == "delete_user_data"
	}, 10*time.Second, 5*time.Millisecond)
	_, err = pool.Exec(ctx, "delete from erasure_users where id = 2")
	require.NoError(t, err)

	state := func(id int64) goclient.WorkflowState {
		workflow, err := client.GetWorkflow(ctx, id)
		require.NoError(t, err)
		return workflow.State
	}
	require.Eventually(t, func() bool { return state(erased) == goclient.StateFinished }, 20*time.Second, 5*time.Millisecond)

	timeline, err := client.Timeline(ctx, erased)
	require.NoError(t, err)
	var steps []string
	for _, e := range timeline {
		steps = append(steps, e.StepName+" "+string(*e.Outcome))
	}
	require.Equal(t, []string{
		"export_to_archive success", "notify_third_parties success", "delete_user_data success",
		"send_confirmation success", "delete_user_record success",
	}, steps)
	var users, posts, archived int
	require.NoError(t, pool.QueryRow(ctx, `select (select count(*) from erasure_users), (select count(*) from erasure_posts),
		(select count(*) from erasure_archive where user_id = 1)`).Scan(&users, &posts, &archived))
	require.Zero(t, users)
	require.Zero(t, posts)
	require.Equal(t, 1, archived)

	require.Equal(t, goclient.StateCanceled, state(other))
	timeline, err = client.Timeline(ctx, other)
	require.NoError(t, err)
	require.Equal(t, goclient.OutcomeCanceledHeroMissing, *timeline[len(timeline)-1].Outcome)
}
