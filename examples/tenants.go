package examples

import (
	"context"
	"sync"
	"time"

	"github.com/geneva-dev/geneva/worker"
)

// TenantConcurrency is how many of a tenant's TenantSync steps run at once,
// at most, across every worker.
const TenantConcurrency = 2

// Tenants is the TenantSync example's application: a remote API per tenant
// that takes Latency per call, and what was synced. It counts the calls in
// flight per tenant, so that a test (or the demo) sees the limit hold. It is
// safe for concurrent use.
type Tenants struct {
	// Latency is how long one call to a tenant's API takes.
	Latency time.Duration

	mu         sync.Mutex
	running    map[string]int
	maxRunning map[string]int
	calls      map[string]int
	synced     map[string]int
}

// NewTenants returns tenants whose API calls take latency.
func NewTenants(latency time.Duration) *Tenants {
	return &Tenants{Latency: latency, running: map[string]int{}, maxRunning: map[string]int{}, calls: map[string]int{},
		synced: map[string]int{}}
}

// Synced is how many of the tenant's accounts were synced.
func (t *Tenants) Synced(tenant string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.synced[tenant]
}

// Calls is how many calls to the tenant's API ended (two per account:
// fetch and store).
func (t *Tenants) Calls(tenant string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.calls[tenant]
}

// MaxRunning is the most calls to the tenant's API that were in flight at
// once.
func (t *Tenants) MaxRunning(tenant string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.maxRunning[tenant]
}

// call is one call to the tenant's API.
func (t *Tenants) call(ctx context.Context, tenant string) error {
	t.mu.Lock()
	t.running[tenant]++
	t.maxRunning[tenant] = max(t.maxRunning[tenant], t.running[tenant])
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.running[tenant]--
		t.calls[tenant]++
		t.mu.Unlock()
	}()
	select {
	case <-time.After(t.Latency):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TenantSync syncs one account of a tenant from the tenant's API (hero type
// "Account"; create it with the tenant as its group:
// goclient.CreateWorkflowOpts{Group: tenant}, which each step reads as
// Step.Group): fetch, then store, each a call to the tenant's API. Its WorkflowOpts.Concurrency bounds each
// tenant's steps in progress at once to TenantConcurrency across every
// worker, decided in SQL when a step is claimed: a tenant that queues
// thousands of syncs waits for its own two slots only, and another tenant's
// syncs start as soon as its own slots free, however long the noisy
// tenant's queue. An execution over the limit is not an attempt and has no
// River job while it waits: it is handed its slot when one of its tenant's
// steps ends.
func TenantSync(tenants *Tenants) *worker.Workflow {
	call := func(ctx context.Context, step *worker.Step) error { return tenants.call(ctx, step.Group) }
	return worker.NewWorkflow("TenantSync", &worker.WorkflowOpts{
		Concurrency: &worker.Concurrency{By: worker.ByGroup, Limit: TenantConcurrency},
	}).
		Step("fetch", call, nil).
		Step("store", func(ctx context.Context, step *worker.Step) error {
			if err := call(ctx, step); err != nil {
				return err
			}
			tenants.mu.Lock()
			defer tenants.mu.Unlock()
			tenants.synced[step.Group]++
			return nil
		}, nil)
}
