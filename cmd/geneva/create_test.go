package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/protocol"
)

func TestCreate(t *testing.T) {
	url := migrated(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	require.NoError(t, protocol.New(conn).DefineWorkflow(ctx, "Welcome", json.RawMessage(`{"steps": [{"name": "send_email"}]}`)))

	out, err := cli(t, url, "create", "Welcome", "User", "1", "2", "--group", "acme")
	require.NoError(t, err)
	var first, second int64
	_, err = fmt.Sscanf(out, "workflow %d: Welcome for User 1\nworkflow %d: Welcome for User 2\n", &first, &second)
	require.NoError(t, err, out)
	var groups []string
	require.NoError(t, conn.QueryRow(ctx,
		"select array_agg(group_name order by id) from geneva.workflows where id in ($1, $2)", first, second).Scan(&groups))
	require.Equal(t, []string{"acme", "acme"}, groups)

	// the hero ids from standard input, as JSON
	stdin := createStdin
	createStdin = strings.NewReader("3\n\n 4 \n")
	defer func() { createStdin = stdin }()
	out, err = cli(t, url, "create", "Welcome", "User", "-", "--json")
	require.NoError(t, err)
	var created struct {
		WorkflowIDs []int64 `json:"workflow_ids"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &created), out)
	require.Len(t, created.WorkflowIDs, 2)
	var heroes []string
	require.NoError(t, conn.QueryRow(ctx,
		"select array_agg(hero_id order by id) from geneva.workflows where id = any ($1)", created.WorkflowIDs).Scan(&heroes))
	require.Equal(t, []string{"3", "4"}, heroes)

	// a hero with an ongoing workflow refuses the list: nothing is created
	out, err = cli(t, url, "create", "Welcome", "User", "5", "1")
	require.Error(t, err)
	require.Contains(t, out+err.Error(), "User 1")
	out, err = cli(t, url, "create", "Welcome", "User", "5", "1", "--allow-multiple")
	require.NoError(t, err, out)
	var n int
	require.NoError(t, conn.QueryRow(ctx, "select count(*) from geneva.workflows").Scan(&n))
	require.Equal(t, 6, n)

	// --skip-ongoing: hero 2's ongoing workflow skips it, 6 is created
	out, err = cli(t, url, "create", "Welcome", "User", "6", "2", "--skip-ongoing", "--json")
	require.NoError(t, err, out)
	var skipping struct {
		WorkflowIDs    []int64  `json:"workflow_ids"`
		SkippedHeroIDs []string `json:"skipped_hero_ids"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &skipping), out)
	require.Len(t, skipping.WorkflowIDs, 1)
	require.Equal(t, []string{"2"}, skipping.SkippedHeroIDs)
	out, err = cli(t, url, "create", "Welcome", "User", "6", "--skip-ongoing")
	require.NoError(t, err, out)
	require.Equal(t, "skipped: User 6 has an ongoing Welcome\n", out)

	// --parent: children of a workflow
	out, err = cli(t, url, "create", "Welcome", "User", "7", "--parent", fmt.Sprint(first))
	require.NoError(t, err, out)
	var child, parent int64
	_, err = fmt.Sscanf(out, "workflow %d: Welcome for User 7\n", &child)
	require.NoError(t, err, out)
	require.NoError(t, conn.QueryRow(ctx, "select parent_id from geneva.workflows where id = $1", child).Scan(&parent))
	require.Equal(t, first, parent)
	// geneva show: a parent's children by state, a child's parent
	out, err = cli(t, url, "show", fmt.Sprint(first))
	require.NoError(t, err, out)
	require.Contains(t, out, "\nchildren: 1, 0 ended (1 ready)\n")
	out, err = cli(t, url, "show", fmt.Sprint(child))
	require.NoError(t, err, out)
	require.Contains(t, out, fmt.Sprintf("\nchild of workflow %d\n", first))
	_, err = cli(t, url, "create", "Welcome", "User", "8", "--parent", "999999")
	require.ErrorContains(t, err, "parent workflow 999999 not found")

	_, err = cli(t, url, "create", "Welcome", "User")
	require.ErrorContains(t, err, "hero ids")
}
