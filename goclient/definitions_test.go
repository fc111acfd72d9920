package goclient_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
)

// An operator defines HTTP-only types (a type with a Go step is its
// worker's), and every change is a version.
func TestDefinitions(t *testing.T) {
	t.Parallel()
	ctx, _, client, _ := setup(t) // (setup's worker defined Two)

	hooks := json.RawMessage(`{"steps": [{"name": "notify", "http": {"url": "https://hooks.example.com/n"}}]}`)
	require.NoError(t, client.DefineWorkflow(ctx, "Hooks", hooks))
	require.NoError(t, client.DefineWorkflow(ctx, "Hooks", hooks)) // the same: nothing new
	require.NoError(t, client.DefineWorkflow(ctx, "Hooks", json.RawMessage(
		`{"steps": [{"name": "notify", "http": {"url": "https://hooks.example.com/v2"}}, {"name": "log", "http": {"url": "https://hooks.example.com/log"}}]}`)))

	err := client.DefineWorkflow(ctx, "Hooks", json.RawMessage(`{"steps": [{"name": "notify"}]}`))
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "%v", err)
	require.Equal(t, "42501", pgErr.Code, "a Go step is the worker's to define")
	err = client.DefineWorkflow(ctx, "Hooks", json.RawMessage(`{"steps": [{"name": "notify", "http": {"url": "ftp://x"}}]}`))
	require.ErrorIs(t, err, goclient.ErrInvalidArgument)

	versions, err := client.DefinitionVersions(ctx, "Hooks")
	require.NoError(t, err)
	require.Len(t, versions, 2)
	require.Equal(t, 2, versions[0].Version)
	require.True(t, versions[0].Current)
	require.Equal(t, []string{"notify", "log"}, versions[0].StepNames)
	require.Equal(t, 2, versions[0].HTTPSteps)
	require.Equal(t, 1, versions[1].Version)
	require.False(t, versions[1].Current)
	require.JSONEq(t, string(hooks), string(versions[1].Definition))
	require.NotEmpty(t, versions[1].DefinedBy)

	all, err := client.DefinitionVersions(ctx, "")
	require.NoError(t, err)
	require.Len(t, all, 3) // Two's and Hooks' two
	require.Equal(t, "Hooks", all[0].WorkflowType)
	require.Equal(t, "Two", all[2].WorkflowType)
}
