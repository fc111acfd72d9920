package dashboard

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// Workflows moved into history (docs/history.md) show on the list, its
// filters and their own page as they did live: the pages read the functions
// and views, which read across history.
func TestMovedWorkflows(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	moved := append(slices.Clone(w.finished), w.canceled)
	var got []int64
	require.NoError(t, w.pool.QueryRow(w.ctx, "select geneva._move_to_history($1)", moved).Scan(&got))
	require.ElementsMatch(t, moved, got)
	h := w.newHandler(t, nil)

	for _, tc := range []struct {
		name, query string
		want        []int64
	}{
		{"All", "", append(append(append(append(slices.Clone(w.gatewayTimeout), w.cardDeclined...), w.finished...), w.ready...), w.canceled)},
		{"Finished", "state=finished", w.finished},
		{"Canceled", "state=canceled", []int64{w.canceled}},
		{"Type", "type=Onboarding", append(slices.Clone(w.ready), w.canceled)},
		{"Hero", "hero=gone", []int64{w.canceled}},
		{"Ongoing", "state=ongoing", append(append(slices.Clone(w.ready), w.cardDeclined...), w.gatewayTimeout...)},
	} {
		t.Run("List"+tc.name, func(t *testing.T) {
			r := get(t, h, "/workflows?"+tc.query)
			require.Equal(t, http.StatusOK, r.status, r.body)
			want := slices.Clone(tc.want)
			slices.SortFunc(want, func(a, b int64) int { return cmp.Compare(b, a) })
			require.Equal(t, ids(want...), rowsOf(r.body))
		})
	}

	t.Run("Page", func(t *testing.T) {
		r := get(t, h, fmt.Sprint("/workflows/", w.finished[0]))
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Contains(t, r.body, `id="workflow-state">finished</span>`)
		for _, step := range []string{"authorize", "capture", "receipt"} {
			require.Contains(t, r.body, "<td>"+step+"</td>") // its timeline, from history
		}
		require.NotContains(t, r.body, `id="action-cancel"`)

		r = get(t, h, fmt.Sprint("/workflows/", w.canceled))
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Contains(t, r.body, `id="workflow-state">canceled</span>`)
		require.Contains(t, r.body, "cancel_workflow") // its action, from the action log
	})
}
