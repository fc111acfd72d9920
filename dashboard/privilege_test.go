package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// TestLeastPrivilege runs the dashboard as a member of geneva_reader, which
// may read only the views and the read functions (no table), then as one of
// geneva_operator: every page, and then every action, works, so the
// dashboard needs nothing else.
func TestLeastPrivilege(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conf := dbtest.NewConfig(t)
	w := &world{ctx: ctx, pool: dbtest.NewPoolConfig(t, conf)}
	fillWorld(t, w)

	readerPool := dbtest.NewPoolAs(t, conf, dbtest.Reader)
	_, err := readerPool.Exec(ctx, "select from geneva.workflows limit 1")
	require.ErrorContains(t, err, "permission denied", "a reader must not read the tables")

	reader, err := New(readerPool, &Config{ReadOnly: true})
	require.NoError(t, err)
	for _, path := range scalePaths(w, w.finished[0]) {
		if strings.HasPrefix(path, "/bulk/") {
			continue // refused when read-only
		}
		r := get(t, reader, path)
		require.Equal(t, http.StatusOK, r.status, "%s: %s", path, r.body)
	}

	// a reader that is not read-only is refused by the engine, in a sentence
	r := post(t, reader.(*handler), fmt.Sprintf("/workflows/%d/pause", w.ready[0]), url.Values{})
	require.Equal(t, http.StatusForbidden, r.status)
	notReadOnly, err := New(readerPool, nil)
	require.NoError(t, err)
	h := notReadOnly.(*handler)
	r = post(t, h, fmt.Sprintf("/workflows/%d/pause", w.ready[0]), url.Values{"csrf": {h.csrf}})
	require.Equal(t, http.StatusForbidden, r.status)
	require.Contains(t, r.body, "permission denied for function pause_workflow")

	operatorPool := dbtest.NewPoolAs(t, conf, dbtest.Operator)
	operator, err := New(operatorPool, nil)
	require.NoError(t, err)
	h = operator.(*handler)
	csrf := url.Values{"csrf": {h.csrf}}
	for _, action := range []string{"pause", "resume", "skip", "run-now", "cancel"} {
		r := post(t, h, fmt.Sprintf("/workflows/%d/%s", w.ready[0], action), csrf)
		require.Equal(t, http.StatusSeeOther, r.status, "%s: %s", action, r.body)
	}
	r = get(t, h, "/bulk/cancel?state=paused")
	require.Contains(t, r.body, `<strong id="bulk-count">5</strong>`)
	r = post(t, h, "/bulk/cancel", url.Values{"csrf": {h.csrf}, "state": {"paused"}, "upto": {fmt.Sprint(w.canceled)}})
	require.Contains(t, r.body, `<strong id="acted">5</strong> acted on, <strong id="refused">0</strong> refused`)
}
