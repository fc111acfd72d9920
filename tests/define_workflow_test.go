package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

func TestDefineWorkflow(t *testing.T) {
	t.Parallel()

	// definitionRow is a row of geneva.workflow_definitions.
	type definitionRow struct {
		Definition            string
		StepNames             []string
		StepWaits             []time.Duration
		StepWaitsText         []string
		Queue                 string
		Priority              int16
		MayProceedWithoutHero bool
		CreatedAt             time.Time
		UpdatedAt             time.Time
		Xmin                  string
	}

	readDefinition := func(t *testing.T, b *testBundle, workflowType string) definitionRow {
		t.Helper()
		rows, err := b.pool.Query(b.ctx, `
			select definition::text, step_names, step_waits, step_waits::text[], queue, priority,
			  may_proceed_without_hero, created_at, updated_at, xmin::text
			from geneva.workflow_definitions where workflow_type = $1`, workflowType)
		require.NoError(t, err)
		row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[definitionRow])
		require.NoError(t, err)
		return row
	}

	countDefinitions := func(t *testing.T, b *testBundle) int {
		t.Helper()
		var n int
		require.NoError(t, b.pool.QueryRow(b.ctx, "select count(*) from geneva.workflow_definitions").Scan(&n))
		return n
	}

	// requireRejected asserts that define_workflow refuses the definition with
	// the SQLSTATE code, and that the type's row is as it was; definition nil
	// is SQL NULL. It uses the pool, so parallel subtests may share b.
	requireRejected := func(t *testing.T, b *testBundle, code string, workflowType, definition any) {
		t.Helper()
		var before string
		require.NoError(t, b.pool.QueryRow(b.ctx, `select coalesce(
			(select row(d.*, d.xmin)::text from geneva.workflow_definitions d where workflow_type = $1), '')`,
			workflowType).Scan(&before))

		_, err := b.pool.Exec(b.ctx, "select geneva.define_workflow($1, $2::jsonb)", workflowType, definition)
		require.Error(t, err, "accepted %v: %v", workflowType, definition)
		requireCode(t, err, code)

		var after string
		require.NoError(t, b.pool.QueryRow(b.ctx, `select coalesce(
			(select row(d.*, d.xmin)::text from geneva.workflow_definitions d where workflow_type = $1), '')`,
			workflowType).Scan(&after))
		require.Equal(t, before, after, "a rejected definition wrote %v", workflowType)
	}

	t.Run("AcceptsEdgeCases", func(t *testing.T) {
		t.Parallel()
		b := setup(t) // shared through its pool: each case defines its own type

		for _, tc := range []struct {
			name       string
			definition string
		}{
			{"CancelIfEmpty", `{"steps": [], "cancel_if": []}`},
			{"HandlerAlone", `{"steps": [{"name": "a", "on_exception": {"handler": "notify"}}]}`},
			{"HandlerInAList", `{"steps": [{"name": "a", "on_exception": [{"handler": "notify", "matching": ["E"]}, {"action": "pause"}]}]}`},
			{"HandlerWithMatchingAndReport", `{"steps": [], "on_exception": {"handler": "notify", "matching": ["E"], "report": "never"}}`},
			{"MaxReattemptsNull", `{"steps": [{"name": "a", "on_exception": {"action": "reattempt", "max_reattempts": null}}]}`},
			{"MaxReattemptsNullAtWorkflowLevel", `{"steps": [], "on_exception": [{"action": "reattempt", "max_reattempts": null}]}`},
			{"MaxReattemptsZero", `{"steps": [{"name": "a", "on_exception": {"action": "reattempt", "max_reattempts": 0}}]}`},
			{"MayProceedWithoutHeroFalse", `{"steps": [], "may_proceed_without_hero": false}`},
			{"PolicyWaitIsoString", `{"steps": [], "on_exception": {"action": "reattempt", "wait": "PT5M"}}`},
			{"PolicyWaitZero", `{"steps": [], "on_exception": {"action": "reattempt", "wait": 0}}`},
			{"Priority4", `{"steps": [], "priority": 4}`},
			{"ReportAlways", `{"steps": [], "on_exception": {"action": "cancel", "report": "always"}}`},
			{"ReportNever", `{"steps": [], "on_exception": {"action": "skip", "report": "never"}}`},
			{"ReportTerminalOnly", `{"steps": [{"name": "a", "on_exception": {"action": "reattempt", "report": "terminal_only"}}]}`},
			{"SkipIfFalse", `{"steps": [{"name": "a", "skip_if": false}]}`},
			{"StepWaitFractionalSeconds", `{"steps": [{"name": "a", "wait": 0.5}]}`},
			{"StepWaitZeroString", `{"steps": [{"name": "a", "wait": "0 seconds"}]}`},
			{"TerminalActionCancel", `{"steps": [], "on_exception": {"action": "reattempt", "max_reattempts": 2, "terminal_action": "cancel"}}`},
			{"TerminalActionPause", `{"steps": [], "on_exception": {"action": "reattempt", "terminal_action": "pause"}}`},
			{"TerminalActionSkip", `{"steps": [{"name": "a", "on_exception": {"action": "reattempt", "max_reattempts": 1, "terminal_action": "skip"}}]}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()

				_, err := b.pool.Exec(b.ctx, "select geneva.define_workflow($1, $2::jsonb)", tc.name, tc.definition)
				require.NoError(t, err)

				require.JSONEq(t, tc.definition, readDefinition(t, b, tc.name).Definition)
			})
		}
	})

	t.Run("FillsDefaults", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		for _, tc := range []struct{ workflowType, definition string }{
			{"NoSteps", `{"steps": []}`},
			{"OnlyPolicy", `{"steps": [], "on_exception": {"action": "cancel"}}`},
		} {
			b.define(t, tc.workflowType, tc.definition)

			row := readDefinition(t, b, tc.workflowType)
			require.JSONEq(t, tc.definition, row.Definition)
			require.Empty(t, row.StepNames)
			require.Empty(t, row.StepWaits)
			require.Equal(t, "default", row.Queue)
			require.EqualValues(t, 1, row.Priority)
			require.False(t, row.MayProceedWithoutHero)
		}
		// a step without a wait waits nothing
		b.define(t, "NoWait", `{"steps": [{"name": "a"}]}`)
		row := readDefinition(t, b, "NoWait")
		require.Equal(t, []string{"a"}, row.StepNames)
		require.Equal(t, []time.Duration{0}, row.StepWaits)
	})

	t.Run("IdenticalRedefinitionWritesNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Same", `{"steps": [{"name": "a", "wait": "1 hour"}], "queue": "q", "priority": 2}`)
		before := readDefinition(t, b, "Same")

		b.setNow(t, t0.Add(hours(1)))
		b.define(t, "Same", `{"steps": [{"name": "a", "wait": "1 hour"}], "queue": "q", "priority": 2}`)
		// the same JSON with its keys in another order and other spacing
		b.setNow(t, t0.Add(hours(2)))
		b.define(t, "Same", `{"priority": 2,"queue":"q","steps":[{"wait":"1 hour","name":"a"}]}`)

		after := readDefinition(t, b, "Same")
		require.Equal(t, t0, after.CreatedAt)
		require.Equal(t, t0, after.UpdatedAt)
		require.Equal(t, before, after) // xmin too: the row was not rewritten
	})

	t.Run("KeepsOldDefinitionWhenRedefinitionIsRejected", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Kept", `{"steps": [{"name": "a"}, {"name": "b", "wait": 60}], "queue": "q"}`)
		before := readDefinition(t, b, "Kept")

		b.setNow(t, t0.Add(hours(1)))
		// valid up to a bad policy in the last step
		requireRejected(t, b, "22023", "Kept",
			`{"steps": [{"name": "x"}, {"name": "y", "on_exception": [{"action": "pause", "matching": ["E"]}, {"action": "explode"}]}], "queue": "other"}`)
		requireRejected(t, b, "22023", "Kept", `{"steps": [{"name": "x"}, {"name": "x"}]}`)
		requireRejected(t, b, "22004", "Kept", nil)

		require.Equal(t, before, readDefinition(t, b, "Kept"))
		require.Equal(t, 1, countDefinitions(t, b))
	})

	t.Run("RedefinitionReplacesTheDefinition", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Changing", `{"steps": [{"name": "a"}, {"name": "b", "wait": "1 hour"}, {"name": "c"}], "queue": "q", "priority": 2, "may_proceed_without_hero": true}`)

		b.setNow(t, t0.Add(hours(1)))
		b.define(t, "Changing", `{"steps": [{"name": "c", "wait": 30}, {"name": "d"}]}`)

		row := readDefinition(t, b, "Changing")
		require.JSONEq(t, `{"steps": [{"name": "c", "wait": 30}, {"name": "d"}]}`, row.Definition)
		require.Equal(t, []string{"c", "d"}, row.StepNames)
		require.Equal(t, []time.Duration{30 * time.Second, 0}, row.StepWaits)
		require.Equal(t, "default", row.Queue)
		require.EqualValues(t, 1, row.Priority)
		require.False(t, row.MayProceedWithoutHero)
		require.Equal(t, t0, row.CreatedAt)
		require.Equal(t, t0.Add(hours(1)), row.UpdatedAt)
		require.Equal(t, 1, countDefinitions(t, b))
		// workflows created now follow the new step list
		id := b.create(t, "Changing", "1")
		require.Equal(t, "c", deref(b.workflow(t, id).NextStepName))
	})

	t.Run("RejectsBadDefinitions", func(t *testing.T) {
		t.Parallel()
		b := setup(t) // shared through its pool: each case uses its own type

		for _, tc := range []struct {
			name         string
			workflowType *string // the case's name unless given
			definition   string
		}{
			{name: "CancelIfNotAList", definition: `{"steps": [], "cancel_if": "account_closed"}`},
			{name: "CancelIfObject", definition: `{"steps": [], "cancel_if": {"name": "account_closed"}}`},
			{name: "CancelIfWithNonString", definition: `{"steps": [], "cancel_if": ["account_closed", 1]}`},
			{name: "DefinitionIsJSONNull", definition: `null`},
			{name: "DefinitionIsList", definition: `[{"name": "a"}]`},
			{name: "DefinitionIsNumber", definition: `1`},
			{name: "DefinitionIsString", definition: `"steps"`},
			{name: "MayProceedWithoutHeroNumber", definition: `{"steps": [], "may_proceed_without_hero": 1}`},
			{name: "MayProceedWithoutHeroString", definition: `{"steps": [], "may_proceed_without_hero": "true"}`},
			{name: "Priority0", definition: `{"steps": [], "priority": 0}`},
			{name: "Priority5", definition: `{"steps": [], "priority": 5}`},
			{name: "PriorityFractional", definition: `{"steps": [], "priority": 1.5}`},
			{name: "PriorityNegative", definition: `{"steps": [], "priority": -1}`},
			{name: "PriorityString", definition: `{"steps": [], "priority": "1"}`},
			{name: "QueueEmpty", definition: `{"steps": [], "queue": ""}`},
			{name: "QueueNotAString", definition: `{"steps": [], "queue": 1}`},
			{name: "QueueNull", definition: `{"steps": [], "queue": null}`},
			{name: "SkipIfList", definition: `{"steps": [{"name": "a", "skip_if": ["closed"]}]}`},
			{name: "SkipIfNumber", definition: `{"steps": [{"name": "a", "skip_if": 1}]}`},
			{name: "SkipIfObject", definition: `{"steps": [{"name": "a"}, {"name": "b", "skip_if": {"if": true}}]}`},
			{name: "StepNameDuplicated", definition: `{"steps": [{"name": "a"}, {"name": "b"}, {"name": "a"}]}`},
			{name: "StepNameEmpty", definition: `{"steps": [{"name": ""}]}`},
			{name: "StepNameMissing", definition: `{"steps": [{"name": "a"}, {"wait": 5}]}`},
			{name: "StepNameNull", definition: `{"steps": [{"name": null}]}`},
			{name: "StepNameNumber", definition: `{"steps": [{"name": 1}]}`},
			{name: "StepNotAnObject", definition: `{"steps": ["a"]}`},
			{name: "StepNotAnObjectAfterValidOne", definition: `{"steps": [{"name": "a"}, ["b"]]}`},
			{name: "StepUnknownKey", definition: `{"steps": [{"name": "a", "retries": 3}]}`},
			{name: "StepWaitBoolean", definition: `{"steps": [{"name": "a", "wait": true}]}`},
			{name: "StepWaitEmptyString", definition: `{"steps": [{"name": "a", "wait": ""}]}`},
			{name: "StepWaitNegativeNumber", definition: `{"steps": [{"name": "a", "wait": -5}]}`},
			{name: "StepWaitNegativeString", definition: `{"steps": [{"name": "a", "wait": "-5 minutes"}]}`},
			{name: "StepWaitUnparsable", definition: `{"steps": [{"name": "a", "wait": "soon"}]}`},
			{name: "StepWaitTooLongNumber", definition: `{"steps": [{"name": "a", "wait": 1e20}]}`},
			{name: "StepWaitTooLongNumberJustOver", definition: `{"steps": [{"name": "a", "wait": 3155760001}]}`},
			{name: "StepWaitTooLongString", definition: `{"steps": [{"name": "a", "wait": "99999 years"}]}`},
			{name: "StepWaitTooLongDays", definition: `{"steps": [{"name": "a", "wait": "36526 days"}]}`},
			{name: "StepWaitHugeNegativeNumber", definition: `{"steps": [{"name": "a", "wait": -1e20}]}`},
			{name: "AwaitNotAnObject", definition: `{"steps": [{"name": "a", "await": "approved"}]}`},
			{name: "AwaitWithoutEvent", definition: `{"steps": [{"name": "a", "await": {"timeout": "1 day"}}]}`},
			{name: "AwaitEventEmpty", definition: `{"steps": [{"name": "a", "await": {"event": "", "timeout": "1 day"}}]}`},
			{name: "AwaitEventNotAString", definition: `{"steps": [{"name": "a", "await": {"event": 1, "timeout": "1 day"}}]}`},
			{name: "AwaitWithoutTimeout", definition: `{"steps": [{"name": "a", "await": {"event": "approved"}}]}`},
			{name: "AwaitTimeoutTooLong", definition: `{"steps": [{"name": "a", "await": {"event": "approved", "timeout": "101 years"}}]}`},
			{name: "AwaitTimeoutNegative", definition: `{"steps": [{"name": "a", "await": {"event": "approved", "timeout": -1}}]}`},
			{name: "AwaitTimeoutUnparsable", definition: `{"steps": [{"name": "a", "await": {"event": "approved", "timeout": "soon"}}]}`},
			{name: "AwaitOnTimeoutUnknown", definition: `{"steps": [{"name": "a", "await": {"event": "approved", "timeout": 60, "on_timeout": "escalate"}}]}`},
			{name: "AwaitUnknownKey", definition: `{"steps": [{"name": "a", "await": {"event": "approved", "timeout": 60, "retries": 2}}]}`},
			// issue 49: any of several events, since, cancel_on
			{name: "AwaitEventsEmptyList", definition: `{"steps": [{"name": "a", "await": {"event": [], "timeout": 60}}]}`},
			{name: "AwaitEventsNotStrings", definition: `{"steps": [{"name": "a", "await": {"event": ["approved", 1], "timeout": 60}}]}`},
			{name: "AwaitEventsNull", definition: `{"steps": [{"name": "a", "await": {"event": ["approved", null], "timeout": 60}}]}`},
			{name: "AwaitEventsEmptyName", definition: `{"steps": [{"name": "a", "await": {"event": ["approved", ""], "timeout": 60}}]}`},
			{name: "AwaitEventsReserved", definition: `{"steps": [{"name": "a", "await": {"event": ["approved", "geneva:children"], "timeout": 60}}]}`},
			{name: "AwaitEventReserved", definition: `{"steps": [{"name": "a", "await": {"event": "geneva:x", "timeout": 60}}]}`},
			{name: "AwaitEventsTwice", definition: `{"steps": [{"name": "a", "await": {"event": ["approved", "approved"], "timeout": 60}}]}`},
			{name: "AwaitEventsObject", definition: `{"steps": [{"name": "a", "await": {"event": {"any": ["a"]}, "timeout": 60}}]}`},
			{name: "AwaitSinceUnknown", definition: `{"steps": [{"name": "a", "await": {"event": "approved", "since": "now", "timeout": 60}}]}`},
			{name: "AwaitSinceNotAString", definition: `{"steps": [{"name": "a", "await": {"event": "approved", "since": true, "timeout": 60}}]}`},
			{name: "AwaitSinceOnChildren", definition: `{"steps": [{"name": "a", "await": {"children": "all", "since": "wait", "timeout": 60}}]}`},
			{name: "CancelOnNotAList", definition: `{"steps": [], "cancel_on": "order.canceled"}`},
			{name: "CancelOnEmptyList", definition: `{"steps": [], "cancel_on": []}`},
			{name: "CancelOnNotStrings", definition: `{"steps": [], "cancel_on": ["order.canceled", 7]}`},
			{name: "CancelOnEmptyName", definition: `{"steps": [], "cancel_on": [""]}`},
			{name: "CancelOnReserved", definition: `{"steps": [], "cancel_on": ["geneva:children"]}`},
			{name: "StepsMissing", definition: `{}`},
			{name: "StepsMissingBesidePolicies", definition: `{"on_exception": {"action": "cancel"}, "queue": "q"}`},
			{name: "StepsNotAList", definition: `{"steps": {"name": "a"}}`},
			{name: "StepsNull", definition: `{"steps": null}`},
			{name: "StepsString", definition: `{"steps": "a"}`},
			{name: "UnknownKey", definition: `{"stepz": []}`},
			{name: "UnknownKeyBesideValidOnes", definition: `{"steps": [{"name": "a"}], "retries": 3}`},
			{name: "WorkflowTypeEmpty", workflowType: ptr(""), definition: `{"steps": []}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				workflowType := tc.name
				if tc.workflowType != nil {
					workflowType = *tc.workflowType
				}

				requireRejected(t, b, "22023", workflowType, tc.definition)
			})
		}
	})

	t.Run("RejectsBadPolicies", func(t *testing.T) {
		t.Parallel()
		b := setup(t) // shared through its pool: each case uses its own type

		// Every bad policy is refused wherever a policy may stand.
		locations := []string{
			`{"steps": [{"name": "a", "on_exception": %s}]}`,
			`{"steps": [{"name": "a"}, {"name": "b", "on_exception": [{"action": "pause", "matching": ["E"]}, %s]}]}`,
			`{"steps": [{"name": "a"}], "on_exception": %s}`,
			`{"steps": [], "on_exception": [{"action": "cancel", "matching": ["E"]}, %s]}`,
		}

		for _, tc := range []struct {
			name   string
			policy string
		}{
			{"ActionAndHandler", `{"action": "pause", "handler": "notify"}`},
			{"ActionEmpty", `{"action": ""}`},
			{"ActionNotAString", `{"action": 1}`},
			{"ActionNull", `{"action": null}`},
			{"ActionUnknown", `{"action": "retry"}`},
			{"HandlerEmpty", `{"handler": ""}`},
			{"HandlerNotAString", `{"handler": 1}`},
			{"HandlerWithMaxReattempts", `{"handler": "notify", "max_reattempts": 3}`},
			{"HandlerWithTerminalAction", `{"handler": "notify", "terminal_action": "cancel"}`},
			{"HandlerWithWait", `{"handler": "notify", "wait": "1 minute"}`},
			{"MatchingEmpty", `{"action": "pause", "matching": []}`},
			{"MatchingNotAList", `{"action": "pause", "matching": "E"}`},
			{"MatchingWithEmptyName", `{"action": "pause", "matching": [""]}`},
			{"MatchingWithNonString", `{"action": "pause", "matching": ["E", 1]}`},
			{"MaxReattemptsBoolean", `{"action": "reattempt", "max_reattempts": true}`},
			{"MaxReattemptsFractional", `{"action": "reattempt", "max_reattempts": 1.5}`},
			{"MaxReattemptsNegative", `{"action": "reattempt", "max_reattempts": -1}`},
			{"MaxReattemptsOnCancel", `{"action": "cancel", "max_reattempts": 3}`},
			{"MaxReattemptsOnPause", `{"action": "pause", "max_reattempts": 3}`},
			{"MaxReattemptsOnSkip", `{"action": "skip", "max_reattempts": 3}`},
			{"MaxReattemptsString", `{"action": "reattempt", "max_reattempts": "3"}`},
			{"NeitherActionNorHandler", `{"matching": ["E"]}`},
			{"NoKeys", `{}`},
			{"NotAnObject", `"pause"`},
			{"NotAnObjectBoolean", `true`},
			{"ReportNotAString", `{"action": "pause", "report": true}`},
			{"ReportUnknown", `{"action": "pause", "report": "sometimes"}`},
			{"TerminalActionNotAString", `{"action": "reattempt", "terminal_action": 1}`},
			{"TerminalActionOnCancel", `{"action": "cancel", "terminal_action": "pause"}`},
			{"TerminalActionOnPause", `{"action": "pause", "terminal_action": "cancel"}`},
			{"TerminalActionOnSkip", `{"action": "skip", "terminal_action": "cancel"}`},
			{"TerminalActionReattempt", `{"action": "reattempt", "terminal_action": "reattempt"}`},
			{"TerminalActionUnknown", `{"action": "reattempt", "terminal_action": "explode"}`},
			{"UnknownKey", `{"action": "pause", "retries": 1}`},
			{"WaitEmptyString", `{"action": "reattempt", "wait": ""}`},
			{"WaitNegativeNumber", `{"action": "reattempt", "wait": -1}`},
			{"WaitNegativeString", `{"action": "reattempt", "wait": "-30 seconds"}`},
			{"WaitOnCancel", `{"action": "cancel", "wait": "1 minute"}`},
			{"WaitOnPause", `{"action": "pause", "wait": 60}`},
			{"WaitOnSkip", `{"action": "skip", "wait": "1 minute"}`},
			{"WaitUnparsable", `{"action": "reattempt", "wait": "a while"}`},
			{"WaitTooLongNumber", `{"action": "reattempt", "wait": 1e20}`},
			{"WaitTooLongString", `{"action": "reattempt", "wait": "99999 years"}`},
			{"MaxWaitTooLong", `{"action": "reattempt", "wait": 1, "backoff": 2, "max_wait": "101 years"}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()

				for _, location := range locations {
					requireRejected(t, b, "22023", tc.name, fmt.Sprintf(location, tc.policy))
				}
			})
		}
	})

	t.Run("RejectsTooLongNames", func(t *testing.T) {
		t.Parallel()
		b := setup(t) // shared through its pool: each case uses its own type

		long := strings.Repeat("é", 128) // 256 bytes in 128 characters
		for _, tc := range []struct {
			name         string
			workflowType string
			definition   string
			argument     string
		}{
			{"WorkflowType", strings.Repeat("W", 256), `{"steps": []}`, "workflow type"},
			{"WorkflowTypeInBytes", long, `{"steps": []}`, "workflow type"},
			{"StepName", "StepName", `{"steps": [{"name": "a"}, {"name": "` + long + `"}]}`, "step name"},
			{"Queue", "Queue", `{"steps": [], "queue": "` + strings.Repeat("q", 128) + `"}`, "queue"},
			{"AwaitEvent", "AwaitEvent", `{"steps": [{"name": "a", "await": {"event": "` + long + `", "timeout": 60}}]}`, "await event"},
			{"AwaitEvents", "AwaitEvents", `{"steps": [{"name": "a", "await": {"event": ["ok", "` + long + `"], "timeout": 60}}]}`, "await event"},
			{"CancelOn", "CancelOn", `{"steps": [], "cancel_on": ["ok", "` + long + `"]}`, "cancel_on event"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()

				requireRejected(t, b, "22001", tc.workflowType, tc.definition)
				_, err := b.pool.Exec(b.ctx, "select geneva.define_workflow($1, $2::jsonb)", tc.workflowType, tc.definition)
				require.Contains(t, requireCode(t, err, "22001").Message, tc.argument)
			})
		}
		require.Zero(t, countDefinitions(t, b))

		// the limits themselves are accepted
		b.define(t, strings.Repeat("W", 255), `{"steps": [{"name": "`+strings.Repeat("s", 255)+`"}], "queue": "`+strings.Repeat("q", 127)+`"}`)
	})

	t.Run("TooLongWaitSaysSo", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		for _, wait := range []string{`1e20`, `"99999 years"`} {
			_, err := b.conn.Exec(b.ctx, "select geneva.define_workflow('Long', $1::jsonb)",
				`{"steps": [{"name": "a", "wait": `+wait+`}]}`)
			pgErr := requireCode(t, err, "22023")
			require.Contains(t, pgErr.Message, "too long", wait)
			require.NotContains(t, pgErr.Message, "negative", wait)
		}
		b.define(t, "Longest", `{"steps": [{"name": "a", "wait": "100 years"}, {"name": "b", "wait": 3155760000}]}`)
	})

	t.Run("StepsAreBounded", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		steps := func(n int) string {
			return fmt.Sprintf(`{"steps": %s}`, b.stepList(t, n))
		}
		b.define(t, "Longest", steps(1000))
		var names int
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select cardinality(step_names) from geneva.workflow_definitions where workflow_type = 'Longest'").Scan(&names))
		require.Equal(t, 1000, names)

		_, err := b.conn.Exec(b.ctx, "select geneva.define_workflow('TooLong', $1::jsonb)", steps(20000))
		pgErr := requireCode(t, err, "22023")
		require.Contains(t, pgErr.Message, "20000 steps, the limit is 1000")
	})

	// What the log and the versions keep of a definition is bounded: its
	// size, and an HTTP step's headers (issue 44, item 8).
	t.Run("SizeAndHeadersAreBounded", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		headers := func(n, size int) string {
			var list []string
			for i := range n {
				list = append(list, fmt.Sprintf(`"X-H%d": "%s"`, i, strings.Repeat("v", size)))
			}
			return `{"steps": [{"name": "a", "http": {"url": "https://x.example.com/a", "headers": {` + strings.Join(list, ", ") + `}}}]}`
		}
		b.define(t, "Headers", headers(32, 500))
		requireRejected(t, b, "22023", "Headers", headers(33, 1))
		requireRejected(t, b, "22023", "Headers", headers(3, 6000))
		requireRejected(t, b, "22023", "New", headers(1000, 10))

		var big string
		require.NoError(t, b.conn.QueryRow(b.ctx, `select jsonb_build_object('steps', '[{"name": "a"}]'::jsonb,
			'cancel_if', (select jsonb_agg(repeat('c', 100) || i) from generate_series(1, 11000) i))::text`).Scan(&big))
		requireRejected(t, b, "22001", "Big", big)
		requireRejected(t, b, "22001", "Headers", big)
		b.define(t, "Big", `{"steps": [{"name": "a"}], "cancel_if": [`+strings.Repeat(`"`+strings.Repeat("c", 100)+`", `, 9000)+`"c"]}`)
	})

	// The versions of a type are kept, the latest 100 (issue 44, item 8):
	// each change is in the action log too, for its own retention.
	t.Run("KeepsTheLatestVersions", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for i := range 105 {
			b.define(t, "Changing", fmt.Sprintf(`{"steps": [{"name": "a", "wait": %d}]}`, i))
		}
		b.define(t, "Other", `{"steps": [{"name": "a"}]}`)
		var versions []int
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select array_agg(version order by version) from geneva.workflow_definition_versions where workflow_type = 'Changing'").Scan(&versions))
		require.Len(t, versions, 100)
		require.Equal(t, 6, versions[0])
		require.Equal(t, 105, versions[99])
		require.Equal(t, 105, readDefinitionVersion(t, b, "Changing"))
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select array_agg(version) from geneva.workflow_definition_versions where workflow_type = 'Other'").Scan(&versions))
		require.Equal(t, []int{1}, versions)
	})

	t.Run("DuplicateStepNameIsNamed", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.conn.Exec(b.ctx, "select geneva.define_workflow('Dup', $1::jsonb)",
			`{"steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "b"}, {"name": "a"}]}`)
		pgErr := requireCode(t, err, "22023")
		require.Contains(t, pgErr.Message, `duplicate step name "b"`, "the first name that repeats an earlier one")
	})

	t.Run("RequiresSteps", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.conn.Exec(b.ctx, "select geneva.define_workflow('NoSteps', '{}')")

		require.Contains(t, requireCode(t, err, "22023").Message, "steps")
		b.define(t, "EmptySteps", `{"steps": []}`) // an explicit empty list stays legal
	})

	t.Run("RejectsNulls", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		requireRejected(t, b, "22004", nil, `{}`)
		requireRejected(t, b, "22004", "Nulls", nil)
		requireRejected(t, b, "22004", nil, nil)

		require.Zero(t, countDefinitions(t, b))
	})

	t.Run("StoresDefinitionAndDerivedColumns", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		payments := `{
			"steps": [
				{"name": "authorize_payment",
				 "on_exception": [{"action": "reattempt", "matching": ["RateLimited"], "wait": "30 seconds",
				                   "max_reattempts": 5, "terminal_action": "cancel", "report": "terminal_only"},
				                  {"action": "pause"}]},
				{"name": "capture_payment", "wait": "1 hour", "on_exception": {"action": "reattempt"}},
				{"name": "settle", "wait": 90, "skip_if": "already_settled"},
				{"name": "notify", "wait": 1.5, "on_exception": {"handler": "alert_ops", "matching": ["Timeout"]}},
				{"name": "send_receipt", "wait": "PT5M", "skip_if": true}
			],
			"on_exception": [{"action": "reattempt", "matching": ["Timeout"], "max_reattempts": 3},
			                 {"action": "cancel"}],
			"queue": "billing", "priority": 3, "may_proceed_without_hero": true,
			"cancel_if": ["account_closed", "refunded"]
		}`
		single := `{"steps": [{"name": "only", "wait": "2 hours"}], "on_exception": {"action": "skip", "report": "never"}, "queue": "other", "priority": 4, "may_proceed_without_hero": false}`

		b.define(t, "Payments", payments)
		b.define(t, "Single", single)

		row := readDefinition(t, b, "Payments")
		require.JSONEq(t, payments, row.Definition)
		require.Equal(t, []string{"authorize_payment", "capture_payment", "settle", "notify", "send_receipt"}, row.StepNames)
		require.Equal(t, []time.Duration{0, time.Hour, 90 * time.Second, 1500 * time.Millisecond, 5 * time.Minute}, row.StepWaits)
		require.Equal(t, []string{"00:00:00", "01:00:00", "00:01:30", "00:00:01.5", "00:05:00"}, row.StepWaitsText)
		require.Equal(t, "billing", row.Queue)
		require.EqualValues(t, 3, row.Priority)
		require.True(t, row.MayProceedWithoutHero)
		require.Equal(t, t0, row.CreatedAt)
		require.Equal(t, t0, row.UpdatedAt)

		row = readDefinition(t, b, "Single")
		require.JSONEq(t, single, row.Definition)
		require.Equal(t, []string{"only"}, row.StepNames)
		require.Equal(t, []time.Duration{2 * time.Hour}, row.StepWaits)
		require.Equal(t, "other", row.Queue)
		require.EqualValues(t, 4, row.Priority)
		require.False(t, row.MayProceedWithoutHero)
		require.Equal(t, 2, countDefinitions(t, b))
	})
}

// readDefinitionVersion is the current version of a type's definition.
func readDefinitionVersion(t *testing.T, b *testBundle, workflowType string) int {
	t.Helper()
	var version int
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select version from geneva.workflow_definitions where workflow_type = $1", workflowType).Scan(&version))
	return version
}

// stepList is a JSON list of n steps named s1 … sn, with a wait each.
func (b *testBundle) stepList(t *testing.T, n int) string {
	t.Helper()
	var list string
	require.NoError(t, b.conn.QueryRow(b.ctx,
		`select jsonb_agg(jsonb_build_object('name', 's' || i, 'wait', '1 minute') order by i)::text
		 from generate_series(1, $1::int) i`, n).Scan(&list))
	return list
}

func TestDefineWorkflowAwait(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.define(t, "Awaits", `{"steps": [
		{"name": "a"},
		{"name": "b", "await": {"event": "approved", "timeout": "3 days"}},
		{"name": "c", "await": {"event": "paid", "timeout": 90, "on_timeout": "skip"}}
	]}`)
	var timeouts []*time.Duration
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select step_await_timeouts from geneva.workflow_definitions where workflow_type = 'Awaits'").Scan(&timeouts))
	require.Equal(t, []*time.Duration{nil, ptr(72 * time.Hour), ptr(90 * time.Second)}, timeouts)
}

// TestDefineWorkflowGoTypeIsTheWorkers: a role that may not claim steps (an
// operator) cannot replace a type whose current definition has a Go step,
// not even with an HTTP-only one: it would point the type's steps at its
// own endpoint, receiving the application's event payloads and deciding
// those steps (issue 44, item 3).
func TestDefineWorkflowGoTypeIsTheWorkers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	worker := dbtest.NewConnAs(t, b.conf, dbtest.Worker)
	operator := dbtest.NewConnAs(t, b.conf, dbtest.Operator)
	const goSteps = `{"steps": [{"name": "charge"}, {"name": "ship", "await": {"event": "paid", "timeout": "1 day"}}]}`
	const retargeted = `{"steps": [{"name": "charge", "http": {"url": "https://evil.example.com/a"}},
		{"name": "ship", "http": {"url": "https://evil.example.com/b"}, "await": {"event": "paid", "timeout": "1 day"}}]}`
	_, err := worker.Exec(b.ctx, "select geneva.define_workflow('Checkout', $1::jsonb)", goSteps)
	require.NoError(t, err)

	definition := func() string {
		var d string
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select definition::text || version from geneva.workflow_definitions where workflow_type = 'Checkout'").Scan(&d))
		return d
	}
	before := definition()
	_, err = operator.Exec(b.ctx, "select geneva.define_workflow('Checkout', $1::jsonb)", retargeted)
	requireCode(t, err, "42501")
	require.Equal(t, before, definition(), "the refused definition was written")

	// an HTTP-only type stays the operators' to replace
	_, err = operator.Exec(b.ctx, "select geneva.define_workflow('Hooks', $1::jsonb)",
		`{"steps": [{"name": "a", "http": {"url": "https://x.example.com/a"}}]}`)
	require.NoError(t, err)
	_, err = operator.Exec(b.ctx, "select geneva.define_workflow('Hooks', $1::jsonb)",
		`{"steps": [{"name": "a", "http": {"url": "https://x.example.com/b"}}]}`)
	require.NoError(t, err)

	// the worker's role may turn its own Go type into HTTP steps
	_, err = worker.Exec(b.ctx, "select geneva.define_workflow('Checkout', $1::jsonb)", retargeted)
	require.NoError(t, err)
}
