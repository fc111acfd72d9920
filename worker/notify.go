package worker

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// River's client listens on three topics (channels "<schema>.<topic>"), and
// PostgreSQL has no privilege on NOTIFY: any role that may connect can send
// on them. The worker's River client listens only on the insert topic, whose
// notifications do no more than wake a producer to fetch (a fetch finds only
// the jobs in river_job, which only the worker role and the owner write). It
// does not listen on the others, whose notifications River obeys without
// looking at the database:
//
//   - river_control: {"action":"pause","queue":"*"} pauses every queue until
//     the producers next read river_queue (once a minute), so a sender
//     repeating it stalls every worker; {"action":"cancel","job_id":…}
//     cancels a running step's context (job IDs are a sequence, easily
//     guessed), and repeated, interrupts the step at every attempt; "resume"
//     lifts an operator's pause until the producers next read river_queue.
//   - river_leadership: "request_resign" makes the leader resign, and
//     "resigned" wakes the electors, which makes the leader put off renewing
//     its lease: repeated, it lets the lease lapse while the leader still
//     acts as one, and another worker is elected beside it.
//
// River reads the same state from its tables besides, which notifications
// only speed up: the producers read river_queue (pause, resume, metadata)
// and the cancel requests of their running jobs (River's JobCancel) once a
// minute, and the electors try for leadership, and the leader renews it,
// every 5 seconds. So River's API still pauses, resumes and cancels, within a
// minute instead of at once, and a leader's successor is elected within about
// 6 seconds of its resignation instead of at once; only River's
// Client.Notify().RequestResign, which is nothing but a notification, has no
// effect on Geneva's workers.

// riverInsertTopic is the one topic the worker's River client listens on
// (River's notifier.NotificationTopicInsert, internal to River).
const riverInsertTopic = "river_insert"

// newRiverDriver returns River's pgx driver, whose listener listens only on
// riverInsertTopic.
func newRiverDriver(pool *pgxpool.Pool) *riverDriver {
	return &riverDriver{Driver: riverpgxv5.New(pool)}
}

type riverDriver struct {
	*riverpgxv5.Driver
}

func (d *riverDriver) GetListener(params *riverdriver.GetListenenerParams) riverdriver.Listener {
	return &insertListener{Listener: d.Driver.GetListener(params)}
}

// insertListener does not LISTEN on topics other than riverInsertTopic (River
// believes it does), and drops any notification but a well-formed insert one.
type insertListener struct {
	riverdriver.Listener
}

func (l *insertListener) Listen(ctx context.Context, topic string) error {
	if topic != riverInsertTopic {
		return nil
	}
	return l.Listener.Listen(ctx, topic)
}

func (l *insertListener) Unlisten(ctx context.Context, topic string) error {
	if topic != riverInsertTopic {
		return nil
	}
	return l.Listener.Unlisten(ctx, topic)
}

func (l *insertListener) WaitForNotification(ctx context.Context) (*riverdriver.Notification, error) {
	for {
		notification, err := l.Listener.WaitForNotification(ctx)
		if err != nil || notification.Topic == riverInsertTopic && wellFormedInsert(notification.Payload) {
			return notification, err
		}
	}
}

// wellFormedInsert says whether payload is an insert notification's; River
// logs an error for each one it cannot read, for anyone to flood the log.
func wellFormedInsert(payload string) bool {
	var insert struct {
		Queue *string `json:"queue"`
	}
	return json.Unmarshal([]byte(payload), &insert) == nil && insert.Queue != nil
}
