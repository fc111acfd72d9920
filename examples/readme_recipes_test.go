package examples_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/examples"
	"github.com/geneva-dev/geneva/goclient"
)

// readmeRecipes returns the statements of docs/operating.md's bulk operations block,
// by their leading comment.
func readmeRecipes(t *testing.T) map[string]string {
	t.Helper()
	readme, err := os.ReadFile("../docs/operating.md")
	require.NoError(t, err)
	text := string(readme)
	start := strings.Index(text, "Bulk operations are plain SQL")
	require.GreaterOrEqual(t, start, 0, "docs/operating.md has no bulk operations")
	block := text[start:]
	block = block[strings.Index(block, "```sql\n")+len("```sql\n"):]
	block = block[:strings.Index(block, "```")]

	recipes := map[string]string{}
	for _, recipe := range strings.Split(strings.TrimSpace(block), "\n\n") {
		var comment []string
		for _, line := range strings.Split(recipe, "\n") {
			if rest, ok := strings.CutPrefix(line, "-- "); ok {
				comment = append(comment, rest)
			}
		}
		recipes[strings.Join(comment, " ")] = recipe
	}
	return recipes
}

// findRecipe is the recipe whose comment starts with prefix.
func findRecipe(t *testing.T, recipes map[string]string, prefix string) string {
	t.Helper()
	for comment, recipe := range recipes {
		if strings.HasPrefix(comment, prefix) {
			return recipe
		}
	}
	t.Fatalf("docs/operating.md has no recipe %q; it has %v", prefix, recipes)
	return ""
}

// TestReadmeRecipes runs docs/operating.md's bulk operations against the demo's
// workflows (the heroes and scenarios of `geneva demo`).
func TestReadmeRecipes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	recipes := readmeRecipes(t)
	require.Len(t, recipes, 3)

	h, world := setup(t)
	world.Users["ann"] = &examples.User{Email: "ann@example.com"}
	world.Users["bo"] = &examples.User{Email: "bo@example.com", ProfileComplete: true, EmailVerified: true, Connections: 2}
	world.Users["cy"] = &examples.User{Email: "cy@example.com", AccountClosed: true}
	for id, scenario := range map[string]string{
		"1001": "ok", "1002": "declined", "1003": "rate_limited", "1004": "fraud",
		"1005": "inventory_timeout", "1006": "gateway_down",
	} {
		world.Payments[id] = &examples.Payment{Amount: 700, Scenario: scenario}
	}
	world.Webhooks["w1"] = &examples.Webhook{FailuresBeforeSuccess: 0}
	h.SetNow(ctx, time.Date(2030, 1, 1, 9, 0, 0, 0, time.Local))

	ids := map[string]int64{}
	for _, hero := range []struct{ workflowType, heroType, heroID string }{
		{"UserOnboarding", "User", "ann"}, {"UserOnboarding", "User", "bo"}, {"UserOnboarding", "User", "cy"},
		{"PaymentProcessing", "Payment", "1001"}, {"PaymentProcessing", "Payment", "1002"},
		{"PaymentProcessing", "Payment", "1003"}, {"PaymentProcessing", "Payment", "1004"},
		{"PaymentProcessing", "Payment", "1005"}, {"PaymentProcessing", "Payment", "1006"},
		{"WebhookDelivery", "Webhook", "w1"},
	} {
		ids[hero.heroID] = h.Create(ctx, hero.workflowType, hero.heroType, hero.heroID)
	}
	for _, id := range []string{"1001", "1002", "1003", "1004", "1005", "1006"} {
		h.Speedrun(ctx, ids[id], nil)
	}
	h.AssertWorkflowState(ctx, ids["1004"], goclient.StatePaused) // held for a fraud review
	h.AssertWorkflowState(ctx, ids["1006"], goclient.StatePaused) // the gateway refused the connection
	// ann gets her welcome and the profile reminder; verify_email waits 2 days
	h.PerformNextStep(ctx, ids["ann"])
	h.PerformNextStep(ctx, ids["ann"])

	// the application's users table, for the recipe that joins it
	_, err := h.Conn().Exec(ctx, `create table users (id text primary key, closed boolean not null default false);
		insert into users values ('ann', false), ('bo', false), ('cy', true)`)
	require.NoError(t, err)

	affected := func(recipe string) []int64 {
		t.Helper()
		rows, err := h.Conn().Query(ctx, "select (r).id from ("+strings.TrimSuffix(strings.TrimSpace(recipe), ";")+") as q(r)")
		require.NoError(t, err, recipe)
		got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		require.NoError(t, err, recipe)
		return got
	}

	t.Run("ResumeByErrorClass", func(t *testing.T) {
		// the class recorded is the one a person names, not fmt.Errorf's wrapper
		var class string
		var classes []string
		require.NoError(t, h.Conn().QueryRow(ctx, `select last_error_class, error_classes
			from geneva.paused_workflows where workflow_id = $1`, ids["1006"]).Scan(&class, &classes))
		require.Equal(t, "*net.OpError", class)
		require.Equal(t, []string{"*net.OpError", "*fmt.wrapError", "*os.SyscallError", "syscall.Errno"}, classes)

		require.Equal(t, []int64{ids["1006"]}, affected(findRecipe(t, recipes, "resume every PaymentProcessing")))
		h.AssertWorkflowState(ctx, ids["1006"], goclient.StateReady)
		h.AssertWorkflowState(ctx, ids["1004"], goclient.StatePaused) // paused by its step, not by an error
	})

	t.Run("CancelClosedAccounts", func(t *testing.T) {
		require.Equal(t, []int64{ids["cy"]}, affected(findRecipe(t, recipes, "cancel every ongoing onboarding")))
		h.AssertWorkflowState(ctx, ids["cy"], goclient.StateCanceled)
		h.AssertWorkflowState(ctx, ids["bo"], goclient.StateReady)
	})

	t.Run("RunNowStepsDueInMoreThanADay", func(t *testing.T) {
		require.Equal(t, []int64{ids["ann"]}, affected(findRecipe(t, recipes, "run now every step")))
		var due time.Time
		require.NoError(t, h.Conn().QueryRow(ctx, `select scheduled_for from geneva.step_executions
			where workflow_id = $1 and state = 'scheduled'`, ids["ann"]).Scan(&due))
		require.Equal(t, h.Now(ctx), due)
	})
}
