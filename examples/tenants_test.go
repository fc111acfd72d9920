package examples_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/examples"
	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
)

// TenantSync with a real worker: a noisy tenant queues 60 account syncs,
// then three small tenants 4 each; the small tenants' syncs all finish
// while the noisy tenant has done fewer than 20 of its 60, and no tenant
// ever has more than 2 calls in flight.
func TestTenantSyncWorker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.NewPool(t)

	tenants := examples.NewTenants(20 * time.Millisecond)
	w, err := worker.New(pool, &worker.Config{
		Workflows:  []*worker.Workflow{examples.TenantSync(tenants)},
		MaxWorkers: 10,
		Logger:     slog.New(slog.DiscardHandler),
		River:      &river.Config{FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond},
	})
	require.NoError(t, err)
	require.NoError(t, w.Start(ctx))
	defer func() {
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		require.NoError(t, w.Stop(stopCtx))
	}()

	small := []string{"acme", "globex", "initech"}
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		client := goclient.New(tx)
		create := func(tenant string, n int) error {
			for i := range n {
				_, err := client.CreateWorkflow(ctx, "TenantSync", "Account", fmt.Sprintf("%s/%d", tenant, i+1),
					&goclient.CreateWorkflowOpts{Group: tenant})
				if err != nil {
					return err
				}
			}
			return nil
		}
		if err := create("noisy", 60); err != nil {
			return err
		}
		for _, tenant := range small {
			if err := create(tenant, 4); err != nil {
				return err
			}
		}
		return nil
	}))

	require.Eventually(t, func() bool {
		for _, tenant := range small {
			if tenants.Synced(tenant) < 4 {
				return false
			}
		}
		return true
	}, time.Minute, 5*time.Millisecond)
	noisyDone := tenants.Synced("noisy")
	t.Logf("the small tenants' 12 accounts were synced when the noisy tenant had %d of its 60", noisyDone)
	require.Less(t, noisyDone, 20)

	require.Eventually(t, func() bool { return tenants.Synced("noisy") == 60 }, time.Minute, 10*time.Millisecond)
	for _, tenant := range append(small, "noisy") {
		require.LessOrEqual(t, tenants.MaxRunning(tenant), examples.TenantConcurrency, tenant)
	}
	require.Equal(t, examples.TenantConcurrency, tenants.MaxRunning("noisy"), "the noisy tenant used both its slots")
}
