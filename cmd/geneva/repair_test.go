package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRetryBulkAndTheLog(t *testing.T) {
	url := migrated(t)
	welcome, payment := setUp(t, url)

	_, err := cli(t, url, "retry", fmt.Sprint(welcome))
	require.Error(t, err, "a ready workflow cannot be retried")

	_, err = cli(t, url, "pause", fmt.Sprint(welcome))
	require.NoError(t, err)
	out, err := cli(t, url, "retry", fmt.Sprint(welcome), "--from", "hello")
	require.NoError(t, err)
	var retry int64
	_, err = fmt.Sscanf(out, "workflow %d retries", &retry)
	require.NoError(t, err, out)
	require.Contains(t, out, fmt.Sprintf("retries %d from hello", welcome))

	// show lists the lineage and the operators' actions
	out, err = cli(t, url, "show", fmt.Sprint(welcome))
	require.NoError(t, err)
	require.Contains(t, out, fmt.Sprintf("retried as workflow %d", retry))
	require.Contains(t, out, "Operators' actions:")
	require.Contains(t, out, "pause_workflow")
	require.Contains(t, out, "retry_workflow")
	out, err = cli(t, url, "show", fmt.Sprint(retry), "--json")
	require.NoError(t, err)
	var shown struct {
		Workflow struct {
			RetriedFrom *int64 `json:"retried_from"`
		} `json:"workflow"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &shown), out)
	require.Equal(t, &welcome, shown.Workflow.RetriedFrom)

	// bulk: batches of one over the ongoing, the retry among them
	out, err = cli(t, url, "bulk", "pause", "--filter", "state=ongoing", "--limit", "1")
	require.NoError(t, err)
	require.Contains(t, out, "pause: 2 matched, 2 acted, 0 refused")
	out, err = cli(t, url, "bulk", "pause", "--filter", "type=Payment", "--json")
	require.NoError(t, err)
	var result struct {
		Acted   int `json:"acted"`
		Refused []struct {
			WorkflowID int64  `json:"workflow_id"`
			Code       string `json:"code"`
		} `json:"refused"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &result), out)
	require.Zero(t, result.Acted)
	require.Len(t, result.Refused, 1)
	require.Equal(t, payment, result.Refused[0].WorkflowID)
	require.Equal(t, "55000", result.Refused[0].Code)

	for _, args := range [][]string{
		{"bulk", "pause"},
		{"bulk", "explode", "--filter", "state=paused"},
		{"bulk", "pause", "--filter", "colour=red"},
		{"bulk", "pause", "--filter", "created_after=yesterday"},
	} {
		_, err = cli(t, url, args...)
		require.Error(t, err, "%v", args)
	}
}
