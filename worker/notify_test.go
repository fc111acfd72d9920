package worker_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/peterldowns/pgtestdb"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
)

// stranger is a login role with no privilege but connecting (PUBLIC's
// CONNECT on the database): anyone with an account on the server.
const stranger = "geneva_test_stranger"

// strangerConn connects to the database of conf as stranger, creating the
// role on the server when missing (test binaries run in parallel: a role
// another created first is fine).
func strangerConn(t *testing.T, conf *pgtestdb.Config) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dbtest.ServerURL())
	require.NoError(t, err)
	defer admin.Close(ctx)
	_, err = admin.Exec(ctx, fmt.Sprintf(`do $$ begin create role %s login password 'stranger'; `+
		`exception when duplicate_object or unique_violation then null; end; $$`, stranger))
	require.NoError(t, err)

	as := *conf
	as.User, as.Password = stranger, "stranger"
	conn, err := pgx.Connect(ctx, as.URL())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })

	// no privilege on Geneva's schema or River's tables
	var readable bool
	require.NoError(t, conn.QueryRow(ctx,
		`select has_table_privilege('public.river_queue', 'select') or has_schema_privilege('geneva', 'usage')`).Scan(&readable))
	require.False(t, readable)
	return conn
}

// flood sends each payload that payloads returns on channel, as conn, every
// interval until the test ends.
func flood(t *testing.T, conn *pgx.Conn, channel string, interval time.Duration, payloads func() []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() }) // before conn closes
	sent := make(chan struct{})
	wg.Go(func() {
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for first := true; ; first = false {
			for _, payload := range payloads() {
				// NOTIFY's function form; it needs no privilege
				if _, err := conn.Exec(ctx, `select pg_notify($1, $2)`, channel, payload); err != nil {
					require.ErrorIs(t, err, context.Canceled)
					return
				}
			}
			if first {
				close(sent)
			}
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	})
	<-sent
}

// riverChannel is the channel River's client listens on for topic: the
// topic prefixed with the worker's current schema.
func (b *testBundle) riverChannel(t *testing.T, topic string) string {
	t.Helper()
	var schema string
	require.NoError(t, b.workerPool.QueryRow(b.ctx, `select current_schema()`).Scan(&schema))
	return schema + "." + topic
}

// waitFinished waits up to within for every workflow to finish, reading
// geneva.workflows.
func (b *testBundle) waitFinished(t *testing.T, ids []int64, within time.Duration) {
	t.Helper()
	var finished int
	for deadline := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
		require.NoError(t, b.pool.QueryRow(b.ctx,
			`select count(*) from geneva.workflows where id = any($1) and state = 'finished'`, ids).Scan(&finished))
		if finished == len(ids) || time.Now().After(deadline) {
			break
		}
	}
	require.Equal(t, len(ids), finished, "workflows finished within %s", within)
}

// TestForgedNotifications floods a running worker with River's notifications
// from a role that has no privilege at all: PostgreSQL has none on NOTIFY.
// The worker must go on working.
func TestForgedNotifications(t *testing.T) {
	t.Parallel()

	setupWithStranger := func(t *testing.T) (*testBundle, *pgx.Conn) {
		conf := dbtest.NewConfig(t)
		return &testBundle{
			ctx:        context.Background(),
			pool:       dbtest.NewPoolConfig(t, conf),
			workerPool: dbtest.NewPoolAs(t, conf, dbtest.Worker),
			client:     goclient.New(dbtest.NewPoolAs(t, conf, dbtest.Operator)),
		}, strangerConn(t, conf)
	}
	createN := func(t *testing.T, b *testBundle, workflowType string, n int) []int64 {
		ids := make([]int64, n)
		for i := range ids {
			ids[i] = b.create(t, workflowType)
		}
		return ids
	}

	// River's producers obey {"action":"pause","queue":"*"} on river_control
	// and stop fetching until they next read river_queue (a minute).
	t.Run("QueuePause", func(t *testing.T) {
		t.Parallel()
		b, attacker := setupWithStranger(t)
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{
			worker.NewWorkflow("Two", nil).Step("a", ok, nil).Step("b", ok, nil),
		}})
		flood(t, attacker, b.riverChannel(t, "river_control"), 100*time.Millisecond, func() []string {
			return []string{`{"action":"pause","queue":"*"}`}
		})
		time.Sleep(300 * time.Millisecond) // a few pauses delivered
		b.waitFinished(t, createN(t, b, "Two", 20), 15*time.Second)
	})

	// River's producers cancel the running job a cancel message names (its
	// ID is a sequence number, easily guessed); the step's context ends.
	t.Run("JobCancel", func(t *testing.T) {
		t.Parallel()
		b, attacker := setupWithStranger(t)
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{
			worker.NewWorkflow("Slow", nil).Step("a", func(ctx context.Context, step *worker.Step) error {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(time.Second):
					return nil
				}
			}, nil),
		}})
		flood(t, attacker, b.riverChannel(t, "river_control"), 100*time.Millisecond, func() []string {
			rows, err := b.pool.Query(b.ctx, `select id, queue from public.river_job where state = 'running'`)
			if err != nil {
				return nil
			}
			var payloads []string
			for rows.Next() {
				var id int64
				var queue string
				if rows.Scan(&id, &queue) == nil {
					payloads = append(payloads, fmt.Sprintf(`{"action":"cancel","job_id":%d,"queue":%q}`, id, queue))
				}
			}
			return payloads
		})
		ids := createN(t, b, "Slow", 5)
		b.waitFinished(t, ids, 15*time.Second)
		for _, id := range ids {
			require.Equal(t, []string{"a: success"}, b.outcomes(t, id), "workflow %d", id)
		}
	})

	// River's leader resigns on {"action":"request_resign"} on
	// river_leadership (its maintenance services stop, and start again after
	// a random stagger of up to a second).
	t.Run("LeaderResign", func(t *testing.T) {
		t.Parallel()
		b, attacker := setupWithStranger(t)
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{worker.NewWorkflow("One", nil).Step("a", ok, nil)}})
		leader := b.waitLeader(t)
		flood(t, attacker, b.riverChannel(t, "river_leadership"), 100*time.Millisecond, func() []string {
			return []string{`{"action":"request_resign"}`}
		})
		b.waitFinished(t, createN(t, b, "One", 5), 15*time.Second)
		time.Sleep(time.Second)
		require.Equal(t, leader, b.waitLeader(t), "the leader resigned")
	})

	// {"action":"resigned"} on river_leadership wakes River's electors; the
	// leader, woken, puts off renewing its lease (every 5 seconds) for
	// another 5 seconds, so that, repeated, the lease lapses (after 15
	// seconds) while the leader still acts as one, and another worker is
	// elected beside it.
	t.Run("LeaderResigned", func(t *testing.T) {
		t.Parallel()
		b, attacker := setupWithStranger(t)
		b.start(t, &worker.Config{Workflows: []*worker.Workflow{worker.NewWorkflow("One", nil).Step("a", ok, nil)}})
		leader := b.waitLeader(t)
		flood(t, attacker, b.riverChannel(t, "river_leadership"), 100*time.Millisecond, func() []string {
			return []string{`{"action":"resigned","leader_id":"nobody"}`}
		})
		time.Sleep(200 * time.Millisecond) // heard
		var expires time.Time
		require.NoError(t, b.pool.QueryRow(b.ctx, `select expires_at from public.river_leader`).Scan(&expires))
		time.Sleep(6 * time.Second)
		require.Equal(t, leader, b.waitLeader(t), "another worker was elected")
		var renewed time.Time
		require.NoError(t, b.pool.QueryRow(b.ctx, `select expires_at from public.river_leader`).Scan(&renewed))
		require.True(t, renewed.After(expires), "the leader did not renew its lease in 6 seconds")
	})
}

// waitLeader returns River's leader and when it was elected, once there is
// one.
func (b *testBundle) waitLeader(t *testing.T) string {
	t.Helper()
	var leader string
	require.Eventually(t, func() bool {
		err := b.pool.QueryRow(b.ctx, `select leader_id || ' elected at ' || elected_at from public.river_leader`).Scan(&leader)
		if errors.Is(err, pgx.ErrNoRows) {
			return false
		}
		require.NoError(t, err)
		return true
	}, 15*time.Second, 20*time.Millisecond, "no leader")
	return leader
}

// TestRiverQueuePause: a queue paused through River's API (which writes
// river_queue) still pauses the worker, through the producers' poll of
// river_queue (once a minute, in River's NotificationPollInterval), though
// the worker ignores River's control notifications.
//
// It takes a minute: it runs only when GENEVA_RIVER_POLL_TEST is set (run it
// when upgrading River).
func TestRiverQueuePause(t *testing.T) {
	if os.Getenv("GENEVA_RIVER_POLL_TEST") == "" {
		t.Skip("takes a minute; set GENEVA_RIVER_POLL_TEST=1 to run it")
	}
	t.Parallel()
	b := setup(t)
	w := b.start(t, &worker.Config{Workflows: []*worker.Workflow{
		worker.NewWorkflow("One", nil).Step("a", ok, nil),
	}})
	events, cancel := w.River().Subscribe(river.EventKindQueuePaused, river.EventKindQueueResumed)
	defer cancel()

	b.waitFinished(t, []int64{b.create(t, "One")}, 15*time.Second)
	start := time.Now()
	require.NoError(t, w.River().QueuePause(b.ctx, river.QueueDefault, nil))
	select {
	case event := <-events:
		require.Equal(t, river.EventKindQueuePaused, event.Kind)
		t.Logf("paused after %s", time.Since(start).Round(time.Millisecond))
	case <-time.After(75 * time.Second):
		t.Fatal("the queue never paused")
	}
	id := b.create(t, "One")
	time.Sleep(500 * time.Millisecond)
	workflow, err := b.client.GetWorkflow(b.ctx, id)
	require.NoError(t, err)
	require.NotEqual(t, goclient.WorkflowState("finished"), workflow.State)
}
