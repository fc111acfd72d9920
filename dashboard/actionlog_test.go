package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// actionIDs returns the action ids the Actions page lists, in order.
func actionIDs(body string) []string {
	var ids []string
	for _, m := range regexp.MustCompile(`<tr id="a(\d+)">`).FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// The Actions page lists the operators' actions, newest first, filtered by
// verb, operator (login role or actor), workflow and time, a page at a time
// (issue 47).
func TestActionsPage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	h := w.newHandler(t, &Config{PageSize: 2})
	// the world's cancel (SQL, as the owner), then a pause and a cancel from
	// the dashboard (its actor: "dashboard")
	require.Equal(t, http.StatusSeeOther, post(t, h, fmt.Sprintf("/workflows/%d/pause", w.ready[0]), url.Values{"csrf": {h.csrf}}).status)
	require.Equal(t, http.StatusSeeOther, post(t, h, fmt.Sprintf("/workflows/%d/cancel", w.ready[1]), url.Values{"csrf": {h.csrf}}).status)
	var all []string
	rows, err := w.pool.Query(w.ctx, "select action_id::text from geneva.action_log order by action_id desc")
	require.NoError(t, err)
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		all = append(all, id)
	}
	require.NoError(t, rows.Err())
	require.GreaterOrEqual(t, len(all), 3)

	r := get(t, h, "/actions")
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.body, `<a href="/actions" aria-current="page">Actions</a>`)
	require.Equal(t, all[:2], actionIDs(r.body), "newest first, a page of 2")
	require.Regexp(t, fmt.Sprintf(`(?s)<tr id="a%s">.*<td class="by">[^<]*<span class="dim">\(dashboard\)</span></td>\s*<td class="verb">cancel_workflow</td>\s*<td class="num"><a href="/workflows/%d">`,
		all[0], w.ready[1]), r.body)
	next := regexp.MustCompile(`<a id="next-page" href="([^"]+)">`).FindStringSubmatch(r.body)
	require.NotNil(t, next, r.body)
	require.Equal(t, "/actions?before_id="+all[1], next[1])
	r = get(t, h, next[1])
	require.Equal(t, all[2:min(4, len(all))], actionIDs(r.body))
	require.Contains(t, r.body, `<a href="/actions">« newest</a>`)

	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"verb=pause_workflow", all[1:2]},
		{"by=dashboard", all[:2]},
		{fmt.Sprintf("workflow=%d", w.ready[1]), all[:1]},
		{"after=2000-01-01T00:00&before=2999-01-01T00:00&verb=cancel_workflow&by=dashboard", all[:1]},
		{"before=2000-01-01", nil},
		{"verb=nope", nil},
	} {
		r := get(t, h, "/actions?"+tt.query)
		require.Equal(t, http.StatusOK, r.status, tt.query)
		if tt.want == nil {
			require.Contains(t, r.body, "No action matches.", tt.query)
			continue
		}
		require.Equal(t, tt.want, actionIDs(r.body), tt.query)
		require.Contains(t, r.body, `<a href="/actions">clear</a>`, tt.query)
	}

	for query, want := range map[string]string{
		"workflow=abc":   `workflow: &#34;abc&#34; is not a workflow id`,
		"after=tomorrow": `after: &#34;tomorrow&#34; is not a time`,
		"before_id=-1":   `before_id must be an action id`,
	} {
		r := get(t, h, "/actions?"+query)
		require.Equal(t, http.StatusBadRequest, r.status, query)
		require.Contains(t, r.body, want, query)
	}
}

// The Actions page suggests every verb geneva._log_action records: the
// verbs of its callers in sql/.
func TestActionVerbs(t *testing.T) {
	files, err := filepath.Glob("../sql/*/*.sql")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var verbs []string
	call := regexp.MustCompile(`geneva\._log_action\(\s*'([a-z_]+)'`)
	for _, file := range files {
		text, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, m := range call.FindAllStringSubmatch(string(text), -1) {
			if !slices.Contains(verbs, m[1]) {
				verbs = append(verbs, m[1])
			}
		}
	}
	slices.Sort(verbs)
	require.Equal(t, verbs, actionVerbs)
}
