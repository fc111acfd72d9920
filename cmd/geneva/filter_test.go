package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// ls and bulk take one filter, --filter KEY=VALUE with the keys of
// goclient.WorkflowFilter (geneva._workflow_filter's): ls lists what bulk
// would act on.
func TestFilter(t *testing.T) {
	for _, key := range filterKeys {
		require.Contains(t, filterHelp, key)
	}

	url := migrated(t)
	welcome, payment := setUp(t, url)
	listed := func(args ...string) []int64 {
		t.Helper()
		out, err := cli(t, url, append([]string{"ls", "--json"}, args...)...)
		require.NoError(t, err, out)
		var list struct {
			Workflows []struct {
				ID int64 `json:"id"`
			} `json:"workflows"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &list), out)
		var ids []int64
		for _, w := range list.Workflows {
			ids = append(ids, w.ID)
		}
		return ids
	}
	require.Equal(t, []int64{payment, welcome}, listed("--filter", "state=ongoing"))
	require.Equal(t, []int64{payment}, listed("--filter", "type=Payment", "--filter", "step=charge"))
	require.Equal(t, []int64{welcome}, listed("--filter", fmt.Sprint("before_id=", payment)))
	require.Equal(t, []int64{welcome}, listed("--hero", "User:1", "--filter", "created_after=2000-01-01"))
	require.Nil(t, listed("--state", "ready", "--filter", "created_before=2000-01-01T00:00:00Z"))

	// the same filter in bulk acts on what ls listed
	out, err := cli(t, url, "bulk", "pause", "--filter", "type=Payment", "--filter", "step=charge")
	require.NoError(t, err)
	require.Contains(t, out, "pause: 1 matched, 1 acted, 0 refused")

	for _, args := range [][]string{
		{"ls", "--filter", "colour=red"},
		{"ls", "--filter", "type"},
		{"ls", "--filter", "type="},
		{"ls", "--state", "ready", "--filter", "state=paused"},
		{"ls", "--filter", "group=a", "--filter", "group=b"},
		{"ls", "--filter", "before_id=x"},
		{"ls", "--filter", "created_after=yesterday"},
		{"ls", "--filter", "state=sleeping"},
		{"bulk", "pause", "--filter", "before_id=-1"},
	} {
		out, err := cli(t, url, args...)
		require.Error(t, err, "%v: %s", args, out)
	}
}
