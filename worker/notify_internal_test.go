package worker

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// River's client asks to listen on riverInsertTopic (River has not renamed
// it: the worker would lose its insert notifications and wait for its polls),
// and on other topics, of which the worker's listener lets none through to
// PostgreSQL.
func TestListensOnlyForInserts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.NewPoolAs(t, dbtest.NewConfig(t), dbtest.Worker)
	asked, listened := &topics{}, &topics{}
	driver := &recordingDriver{riverDriver: newRiverDriver(pool), asked: asked, listened: listened}

	workers := river.NewWorkers()
	require.NoError(t, river.AddWorkerSafely(workers, &stepWorker{}))
	client, err := river.NewClient[pgx.Tx](driver, &river.Config{
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
		Workers: workers,
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { require.NoError(t, client.Stop(context.WithoutCancel(ctx))) })

	require.Eventually(t, func() bool {
		return slices.Contains(asked.list(), riverInsertTopic) && len(asked.list()) > 1
	}, 10*time.Second, 10*time.Millisecond, "River asked to listen on %v", asked.list())
	require.Equal(t, []string{riverInsertTopic}, listened.list())
}

// recordingDriver records the topics River asks its listener to listen on,
// and those the listener listens on.
type recordingDriver struct {
	*riverDriver
	asked, listened *topics
}

func (d *recordingDriver) GetListener(params *riverdriver.GetListenenerParams) riverdriver.Listener {
	listener := d.riverDriver.GetListener(params).(*insertListener)
	listener.Listener = &recordingListener{Listener: listener.Listener, topics: d.listened}
	return &recordingListener{Listener: listener, topics: d.asked}
}

type recordingListener struct {
	riverdriver.Listener
	topics *topics
}

func (l *recordingListener) Listen(ctx context.Context, topic string) error {
	l.topics.add(topic)
	return l.Listener.Listen(ctx, topic)
}

type topics struct {
	mu   sync.Mutex
	seen []string
}

func (t *topics) add(topic string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !slices.Contains(t.seen, topic) {
		t.seen = append(t.seen, topic)
		slices.Sort(t.seen)
	}
}

func (t *topics) list() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.seen)
}
