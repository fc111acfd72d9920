package worker

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

const (
	// recordTryTimeout bounds one try at recording an outcome, so that a
	// connection that hangs (a network partition) does not hold it forever.
	recordTryTimeout = time.Minute

	// recordFirstWait and recordMaxWait bound the waits between tries at
	// recording an outcome: the first wait, doubling up to the cap.
	recordFirstWait = 100 * time.Millisecond
	recordMaxWait   = 5 * time.Second
)

// recordBackoff is the wait after the attempt-th failed try at recording an
// outcome: recordFirstWait doubling with each try up to recordMaxWait, give
// or take a quarter, so that the workers of a fleet do not all come back at
// once when the database does.
func recordBackoff(attempt int) time.Duration {
	wait := recordMaxWait
	if attempt < 16 {
		wait = min(recordFirstWait<<(attempt-1), recordMaxWait)
	}
	return wait*3/4 + rand.N(wait/2)
}

// databaseUnavailable says whether err means the database did not answer the
// question, so that the same call may well succeed later: no connection (or
// a lost one), a timeout, a server starting up or shutting down, out of
// connections or other resources, a transaction rolled back by a
// serialization failure or deadlock. An answer (a refusal, a bug) is none of
// these.
func databaseUnavailable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return true // a network error, a timeout, a pool that cannot connect
	}
	switch pgErr.Code[:2] {
	case "08", // connection exception
		"40", // transaction rollback: serialization failure, deadlock
		"53", // insufficient resources: too many connections, disk full
		"57", // operator intervention: shutdown, crash, cannot connect now, statement timeout
		"58": // system error (I/O)
		return true
	}
	return false
}
