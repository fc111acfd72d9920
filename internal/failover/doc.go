// Package failover holds Geneva's failover tests (docs/high-availability.md):
// a primary and a hot standby by streaming replication (package pgtemp:
// initdb, pg_basebackup, pg_ctl, on loopback ports), a worker and an
// application on one multi-host URL (target_session_attrs=read-write), the
// primary killed under load and the standby promoted; and the page's
// walk-through, run as written.
//
// They take a minute or two and start their own servers, so `make test`
// skips them; `make test/failover` (which .ci/run runs) sets
// GENEVA_FAILOVER_TEST=1 and runs them:
//
//	GENEVA_FAILOVER_TEST=1 go test ./internal/failover -count=1 -v
package failover
