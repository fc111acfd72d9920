package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	// (the current version, a step a line, then the earlier ones)
	require.Regexp(t, `^Hooks  version 2 \(current\), defined .* by \w+, 1 step \(1 over HTTP\)\n`+
		`  # +step +wait +await +limits +queue +http +on exception +skip if\n`+
		`  1 +a +geneva_http +POST https://hooks.example.com/a *\n`+
		`  earlier: v1 .* by \w+ \(2 steps\)\n$`, out)
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

	// back to version 1, by its number: version 3; the workflow follows it,
	// and version 2 still has it running
	out, err = cli(t, url, "define", "Hooks", "--version", "1")
	require.NoError(t, err)
	require.Equal(t, "Defined Hooks: version 3, 2 steps (2 over HTTP): a, b\n", out)
	out, err = cli(t, url, "show", fmt.Sprint(id))
	require.NoError(t, err)
	require.Contains(t, out, ", definition version 3 (started under 2)\n")
	out, err = cli(t, url, "definitions", "Hooks")
	require.NoError(t, err)
	require.Regexp(t, `(?m)^Hooks  version 3 \(current\), defined .*, 2 steps \(2 over HTTP\)$`, out)
	require.Regexp(t, `earlier: v2 .* \(1 step, 1 ongoing\); v1 .* \(2 steps\)\n$`, out)
	_, err = cli(t, url, "define", "Hooks", "--version", "9")
	require.ErrorContains(t, err, "workflow type Hooks has no version 9")
	for _, args := range [][]string{{"define", "Hooks", "--version", "0"}, {"define", "Hooks", file, "--version", "1"}} {
		_, err = cli(t, "", args...)
		require.ErrorAs(t, err, new(usageError), "geneva %v", args)
	}

	// the database refuses a bad definition with its message
	write(`{"steps": [{"name": "a", "http": {"url": "ftp://hooks.example.com/a"}}]}`)
	_, err = cli(t, url, "define", "Hooks", file)
	require.ErrorContains(t, err, "is not an absolute http or https URL")
}

// geneva definitions says what each step does, a step a line: its wait,
// the event it awaits, its limits, queue, endpoint, exception policies and
// skip_if; and what the type decides for all of them (issue 47).
func TestDefinitionsShowWhatStepsDo(t *testing.T) {
	url := migrated(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `select geneva.define_limit('payments_api', p_rate => 100, p_per => '1 minute')`)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `select geneva.define_workflow('Payment', '{
		"steps": [
			{"name": "authorize", "on_exception": [{"action": "reattempt", "matching": ["RateLimited"],
				"wait": "30 seconds", "max_reattempts": 5, "terminal_action": "cancel"}, {"action": "pause"}]},
			{"name": "capture", "wait": "1 hour", "limits": ["payments_api"]},
			{"name": "approve", "await": {"event": "approved", "timeout": "3 days", "on_timeout": "cancel"}},
			{"name": "receipt", "skip_if": true, "http": {"url": "https://hooks.example.com/receipt"}}],
		"on_exception": {"action": "reattempt", "max_reattempts": null},
		"concurrency": {"by": "group", "limit": 2}}')`)
	require.NoError(t, err)

	out, err := cli(t, url, "definitions", "Payment")
	require.NoError(t, err)
	lines := strings.Split(out, "\n")
	require.Regexp(t, `^Payment  version 1 \(current\), defined .*, 4 steps \(1 over HTTP\)$`, lines[0])
	require.Equal(t, "  concurrency: 2 in progress at once per group", lines[1])
	require.Equal(t, "  on exception (after a step's own): reattempt (no limit)", lines[2])
	require.Regexp(t, `^  # +step +wait +await +limits +queue +http +on exception +skip if$`, lines[3])
	require.Regexp(t, `^  1 +authorize +default +RateLimited: reattempt \(wait 30 seconds, at most 5, then cancel\); pause *$`, lines[4])
	require.Regexp(t, `^  2 +capture +1h +payments_api +default *$`, lines[5])
	require.Regexp(t, `^  3 +approve +approved \(3 days, then cancel\) +default *$`, lines[6])
	require.Regexp(t, `^  4 +receipt +geneva_http +POST https://hooks.example.com/receipt +true$`, lines[7])
	// each column under its label
	header := lines[3]
	for label, cell := range map[string]string{"await": "approved (3 days", "limits": "payments_api", "http": "POST https://",
		"on exception": "RateLimited:"} {
		line := slices.IndexFunc(lines[4:8], func(l string) bool { return strings.Contains(l, cell) })
		require.GreaterOrEqual(t, line, 0, cell)
		require.Equal(t, strings.Index(header, label), strings.Index(lines[4+line], cell), "%s under %s:\n%s", cell, label, out)
	}
}

// geneva definitions shows an await of any of several events, its since,
// and the events that cancel the type (issue 49, items 2 to 4).
func TestDefinitionsShowEventsHardened(t *testing.T) {
	url := migrated(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `select geneva.define_workflow('Claim', '{
		"steps": [
			{"name": "decide", "await": {"event": ["approved", "rejected"], "since": "wait", "timeout": "2 days"}},
			{"name": "pay", "await": {"event": "paid", "timeout": "1 day"}}],
		"cancel_on": ["claim.withdrawn", "claim.fraud"]}')`)
	require.NoError(t, err)

	out, err := cli(t, url, "definitions", "Claim")
	require.NoError(t, err)
	lines := strings.Split(out, "\n")
	require.Equal(t, "  canceled by the events: claim.withdrawn, claim.fraud", lines[1])
	require.Regexp(t, `^  1 +decide +approved \| rejected \(2 days, then run; only since the wait\) +default *$`, lines[3])
	require.Regexp(t, `^  2 +pay +paid \(1 day, then run\) +default *$`, lines[4])
}
