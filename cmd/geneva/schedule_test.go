package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSchedule(t *testing.T) {
	url := migrated(t)
	setUp(t, url) // defines Welcome and Payment

	out, err := cli(t, url, "schedule", "ls")
	require.NoError(t, err)
	require.Contains(t, out, "No schedules.")
	out, err = cli(t, url, "schedule", "ls", "--json")
	require.NoError(t, err)
	require.JSONEq(t, "[]", out)

	out, err = cli(t, url, "schedule", "create", "nightly", "0 2 * * *", "Welcome", "Team:ops", "--tz", "Europe/Berlin")
	require.NoError(t, err)
	require.Regexp(t, `^schedule nightly \(\d+\) created; next fire \d{4}-\d\d-\d\d 0[01]:00:00 `, out)

	out, err = cli(t, url, "schedule", "create", "digest", "*/15 * * * *", "Payment", "Team:sales", "--catch-up", "none", "--json")
	require.NoError(t, err)
	var created map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &created))
	require.Equal(t, "digest", created["name"])
	require.Equal(t, "none", created["catch_up"])
	require.Equal(t, "UTC", created["timezone"])

	out, err = cli(t, url, "schedule", "ls")
	require.NoError(t, err)
	require.Regexp(t, `name +cron +tz +type +hero +state +next fire +last fire +last workflow +fired +skipped +last skip`, out)
	require.Regexp(t, `(?m)^nightly +0 2 \* \* \* +Europe/Berlin +Welcome +Team ops +active +\d{4}`, out)
	require.Regexp(t, `(?m)^digest +\*/15 \* \* \* \* +UTC +Payment +Team sales +active`, out)

	out, err = cli(t, url, "schedule", "pause", "digest")
	require.NoError(t, err)
	require.Contains(t, out, "schedule digest")
	require.Contains(t, out, "paused")
	out, err = cli(t, url, "schedule", "ls", "--json")
	require.NoError(t, err)
	var listed []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &listed))
	require.Len(t, listed, 2)
	require.Equal(t, true, listed[0]["paused"], "digest, by name")
	out, err = cli(t, url, "schedule", "resume", "digest", "--json")
	require.NoError(t, err)
	require.Contains(t, out, `"paused": false`)

	out, err = cli(t, url, "schedule", "rm", "digest")
	require.NoError(t, err)
	require.Contains(t, out, "schedule digest deleted")

	// bad input
	_, err = cli(t, url, "schedule", "create", "x", "61 * * * *", "Welcome", "Team:ops")
	require.ErrorContains(t, err, "minute")
	_, err = cli(t, url, "schedule", "create", "x", "* * * * *", "Welcome", "Team")
	require.ErrorAs(t, err, new(usageError))
	_, err = cli(t, url, "schedule", "pause", "nope")
	require.Error(t, err)
	_, err = cli(t, url, "schedule", "rm")
	require.ErrorAs(t, err, new(usageError))
}
