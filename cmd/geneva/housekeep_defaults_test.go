package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// `geneva housekeep`'s flags default to geneva.housekeep's own defaults (the
// command sends every flag, so its defaults are the engine's only when they
// are equal).
func TestHousekeepFlagsMatchSQL(t *testing.T) {
	ctx := context.Background()
	conn := dbtest.NewConn(t, dbtest.NewConfig(t))
	cmd := newHousekeepCmd(&options{})
	duration := func(name string) time.Duration {
		d, err := time.ParseDuration(cmd.Flags().Lookup(name).DefValue)
		require.NoError(t, err)
		return d
	}

	var same bool
	require.NoError(t, conn.QueryRow(ctx, `
		with d as (
		  select pg_get_function_arguments('geneva.housekeep'::regproc) as a
		)
		select $1::interval = substring(a from 'p_retention interval DEFAULT ''([^'']*)''')::interval
		  and $2::interval = substring(a from 'p_stuck_in_progress_after interval DEFAULT ''([^'']*)''')::interval
		  and $3::interval = substring(a from 'p_stuck_scheduled_after interval DEFAULT ''([^'']*)''')::interval
		  and $4::text = substring(a from 'p_recovery_action text DEFAULT ''([^'']*)''')
		from d`,
		duration("retention"), duration("stuck-in-progress"), duration("stuck-scheduled"),
		cmd.Flags().Lookup("recovery").DefValue).Scan(&same))
	require.True(t, same, "geneva housekeep's flag defaults differ from geneva.housekeep's")
}
