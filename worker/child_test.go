package worker_test

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/peterldowns/pgtestdb"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// startChild starts the test named run in a process of its own: a worker
// child of a crash test, which reads conf's database as the worker role from
// prefix_URL and as its owner from prefix_OWNER_URL, and env ("NAME=value")
// besides.
func startChild(t *testing.T, run, prefix string, conf *pgtestdb.Config, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+run+"$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		prefix+"_URL="+dbtest.URLAs(conf, dbtest.Worker),
		prefix+"_OWNER_URL="+conf.URL())
	cmd.Env = append(cmd.Env, env...)
	require.NoError(t, cmd.Start())
	return cmd
}

// childPools are a worker child's pools, from the URLs startChild gave it:
// the worker role's, and the owner's (for its steps' own tables), closed
// when the test ends.
func childPools(t *testing.T, prefix string) (pool, ownerPool *pgxpool.Pool) {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), os.Getenv(prefix+"_URL"))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	ownerPool, err = pgxpool.New(context.Background(), os.Getenv(prefix+"_OWNER_URL"))
	require.NoError(t, err)
	t.Cleanup(ownerPool.Close)
	return pool, ownerPool
}
