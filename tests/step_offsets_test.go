package tests

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A step's "after" counts from the workflow's start: due at its created_at
// plus the offset (at once when that has passed); with a "wait" too, the
// later of the two.
func TestStepOffsets(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour

	t.Run("DelaysBalanceOut", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		// docs/workflows.md's definition, and a step after it whose offset (an
		// hour, in seconds) will have passed
		var definition map[string]any
		require.NoError(t, json.Unmarshal([]byte(docsBlock(t, "../docs/workflows.md", "## Offsets from the start", "json")), &definition))
		definition["steps"] = append(definition["steps"].([]any), map[string]any{"name": "thank", "after": 3600})
		raw, err := json.Marshal(definition)
		require.NoError(t, err)
		b.define(t, "Trial", string(raw))
		fast := b.create(t, "Trial", "fast")
		slow := b.create(t, "Trial", "slow")
		require.Equal(t, t0, b.active(t, fast).ScheduledFor, "welcome has no offset")

		// welcome an hour late: remind still at 15 days from the start
		b.setNow(t, t0.Add(time.Hour))
		b.complete(t, b.run(t, fast).ExecutionID, "success", nil)
		b.complete(t, b.run(t, slow).ExecutionID, "success", nil)
		require.Equal(t, t0.Add(15*day), b.active(t, fast).ScheduledFor)

		// remind on time: charge at 30 days from the start, its offset later
		// than its wait
		b.setNow(t, t0.Add(15*day))
		b.complete(t, b.run(t, fast).ExecutionID, "success", nil)
		require.Equal(t, t0.Add(30*day), b.active(t, fast).ScheduledFor)

		// remind 29 and a half days late: the wait is the later
		b.setNow(t, t0.Add(29*day+12*time.Hour))
		b.complete(t, b.run(t, slow).ExecutionID, "success", nil)
		require.Equal(t, t0.Add(30*day+12*time.Hour), b.active(t, slow).ScheduledFor)

		// thank's offset (an hour, in seconds) passed long ago: at once
		b.setNow(t, t0.Add(30*day))
		b.complete(t, b.run(t, fast).ExecutionID, "success", nil)
		require.Equal(t, t0.Add(30*day), b.active(t, fast).ScheduledFor)
	})

	t.Run("FirstStep", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Later", `{"steps": [{"name": "a", "after": "2 hours", "wait": "1 hour"}, {"name": "b"}]}`)
		one := b.create(t, "Later", "1")
		require.Equal(t, t0.Add(2*time.Hour), b.active(t, one).ScheduledFor)
		// many at once (create_workflows' set-wise path): the same
		var ids []int64
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.create_workflows('Later', 'User', array['2', '3'])").Scan(&ids))
		for _, id := range ids {
			require.Equal(t, t0.Add(2*time.Hour), b.active(t, id).ScheduledFor)
		}
		var after time.Duration
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select after from geneva.definition_steps where workflow_type = 'Later' and step_name = 'a'").Scan(&after))
		require.Equal(t, 2*time.Hour, after)
	})

	t.Run("ValidatedLikeWaits", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for _, after := range []string{`"banana"`, `-5`, `"-1 hour"`, `"101 years"`, `true`} {
			_, err := b.conn.Exec(b.ctx, "select geneva.define_workflow('Bad', $1::jsonb)",
				`{"steps": [{"name": "a", "after": `+after+`}]}`)
			pgErr := requireCode(t, err, "22023")
			require.Contains(t, pgErr.Message, "step a: after", after)
		}
	})
}

// docsBlock is the first code block of the language after the heading in
// the page.
func docsBlock(t *testing.T, page, heading, language string) string {
	t.Helper()
	doc, err := os.ReadFile(page)
	require.NoError(t, err)
	text := string(doc)
	start := strings.Index(text, heading)
	require.GreaterOrEqual(t, start, 0, "%s has no %q", page, heading)
	block := text[start:]
	open := strings.Index(block, "```"+language+"\n")
	require.GreaterOrEqual(t, open, 0, "%s has no %s block after %q", page, language, heading)
	block = block[open+len("```"+language+"\n"):]
	return block[:strings.Index(block, "```")]
}
