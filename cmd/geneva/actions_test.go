package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// geneva actions lists the operators' actions, newest first, filtered by
// verb, operator, workflow and time, a page at a time (issue 47).
func TestActions(t *testing.T) {
	url := migrated(t)
	out, err := cli(t, url, "actions")
	require.NoError(t, err)
	require.Equal(t, "No actions.\n", out)

	welcome, payment := setUp(t, url)
	_, err = cli(t, url, "pause", fmt.Sprint(welcome))
	require.NoError(t, err)
	_, err = cli(t, url, "cancel", fmt.Sprint(payment))
	require.NoError(t, err)

	out, err = cli(t, url, "actions")
	require.NoError(t, err)
	require.Regexp(t, `^action +at +by +verb +workflow +arguments +result\n`, out)
	require.Regexp(t, fmt.Sprintf(`(?s)\n\d+ .* cancel_workflow +%d +\{\} +\{"state": "canceled".*\n\d+ .* pause_workflow +%d `, payment, welcome), out)

	for _, tt := range []struct {
		args []string
		want []string // verbs, newest first
	}{
		{[]string{"--verb", "pause_workflow"}, []string{"pause_workflow"}},
		{[]string{"--workflow", fmt.Sprint(payment)}, []string{"cancel_workflow"}},
		{[]string{"--after", "1h"}, []string{"cancel_workflow", "pause_workflow"}},
		{[]string{"--before", "1h"}, nil},
		{[]string{"--after", "2000-01-01", "--before", "2999-12-31T23:59"}, []string{"cancel_workflow", "pause_workflow"}},
		{[]string{"--by", "nobody"}, nil},
	} {
		out, err := cli(t, url, append([]string{"actions", "--json"}, tt.args...)...)
		require.NoError(t, err, "%v", tt.args)
		var actions []struct {
			Verb       string `json:"verb"`
			WorkflowID *int64 `json:"workflow_id"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &actions), out)
		var verbs []string
		for _, a := range actions {
			if a.WorkflowID != nil { // (not the definitions setUp made)
				verbs = append(verbs, a.Verb)
			}
		}
		require.Equal(t, tt.want, verbs, "geneva actions %v", tt.args)
	}

	// a page at a time
	out, err = cli(t, url, "actions", "--limit", "1")
	require.NoError(t, err)
	m := regexp.MustCompile(`The newest 1 \(--limit\); older: --before-id (\d+)\n$`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	require.Contains(t, out, "cancel_workflow")
	out, err = cli(t, url, "actions", "--limit", "1", "--before-id", m[1])
	require.NoError(t, err)
	require.Contains(t, out, "pause_workflow")

	_, err = cli(t, url, "actions", "--after", "yesterday")
	require.ErrorContains(t, err, `"yesterday" is neither a time`)
	var usage usageError
	require.True(t, errors.As(err, &usage))
}
