package main

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func demo(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, args, &out)
	return out.String(), err
}

// The demo runs again in the same database: its heroes may have several
// workflows.
func TestRunsTwice(t *testing.T) {
	url := dbtest.NewConfig(t).URL()
	for range 2 {
		out, err := demo(t, "--database-url", url, "--day", "100ms")
		require.NoError(t, err, out)
		require.Contains(t, out, "All workflows are finished, canceled or paused")
		// a chained step leaves its workflow performing: no news for a person
		require.NotContains(t, out, "workflow performing")
		require.Contains(t, out, "geneva show")
	}
}

func TestMissingSchema(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbtest.ServerURL())
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "drop database if exists geneva_demo_empty")
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "create database geneva_demo_empty")
	require.NoError(t, err)
	config, err := pgx.ParseConfig(dbtest.ServerURL())
	require.NoError(t, err)

	url := fmt.Sprintf("postgres://%s@%s:%d/geneva_demo_empty?sslmode=disable", config.User, config.Host, config.Port)
	_, err = demo(t, "--database-url", url)
	require.ErrorContains(t, err, "run `geneva migrate` first")
}
