package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
)

func TestDefine(t *testing.T) {
	url := migrated(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "hooks.json")
	write := func(definition string) {
		require.NoError(t, os.WriteFile(file, []byte(definition), 0o600))
	}

	// usage errors, before connecting
	_, err := cli(t, "", "define", "Hooks")
	require.ErrorContains(t, err, "define takes a workflow type and a JSON file")
	require.ErrorAs(t, err, new(usageError))
	write("{not json")
	_, err = cli(t, url, "define", "Hooks", file)
	require.ErrorContains(t, err, "is not JSON")

	write(`{"steps": [{"name": "a", "http": {"url": "https://hooks.example.com/a"}}, {"name": "b", "http": {"url": "https://hooks.example.com/b"}}]}`)
	out, err := cli(t, url, "define", "Hooks", file)
	require.NoError(t, err)
	require.Equal(t, "Defined Hooks: version 1, 2 steps (2 over HTTP): a, b\n", out)
	// the same again changes nothing
	out, err = cli(t, url, "define", "Hooks", file)
	require.NoError(t, err)
	require.Equal(t, "Defined Hooks: version 1, 2 steps (2 over HTTP): a, b\n", out)

	write(`{"steps": [{"name": "a", "http": {"url": "https://hooks.example.com/a", "timeout": "2 minutes"}}]}`)
	out, err = cli(t, url, "define", "Hooks", file)
	require.NoError(t, err)
	require.Equal(t, "Defined Hooks: version 2, 1 step (1 over HTTP): a\n", out)
	out, err = cli(t, url, "define", "Hooks", file, "--json")
	require.NoError(t, err)
	var version struct {
		Version   int      `json:"version"`
		Current   bool     `json:"current"`
		StepNames []string `json:"step_names"`
		HTTPSteps int      `json:"http_steps"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &version))
	require.Equal(t, 2, version.Version)
	require.True(t, version.Current)
	require.Equal(t, []string{"a"}, version.StepNames)
	require.Equal(t, 1, version.HTTPSteps)

	// geneva definitions lists both versions, newest first
	out, err = cli(t, url, "definitions", "Hooks")
	require.NoError(t, err)
	require.Regexp(t, `(?s)type +version +defined +by +steps \(over HTTP\)\s+Hooks +2 .* a \(1\) +current\s+Hooks +1 .* a, b \(2\)\s*$`, out)
	out, err = cli(t, url, "definitions", "--json")
	require.NoError(t, err)
	var versions []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &versions))
	require.Len(t, versions, 2)
	require.Equal(t, map[string]any{"steps": []any{map[string]any{"name": "a", "http": map[string]any{
		"url": "https://hooks.example.com/a", "timeout": "2 minutes"}}}}, versions[0]["definition"])

	// geneva show names an HTTP step's endpoint
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	id, err := goclient.New(conn).CreateWorkflow(ctx, "Hooks", "Team", "ops", nil)
	require.NoError(t, err)
	out, err = cli(t, url, "show", fmt.Sprint(id))
	require.NoError(t, err)
	require.Contains(t, out, "HTTP steps:\n  a: POST https://hooks.example.com/a\n")

	// the database refuses a bad definition with its message
	write(`{"steps": [{"name": "a", "http": {"url": "ftp://hooks.example.com/a"}}]}`)
	_, err = cli(t, url, "define", "Hooks", file)
	require.ErrorContains(t, err, "is not an absolute http or https URL")
}
