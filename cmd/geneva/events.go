package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/report"
)

func newEventsCmd(opts *options) *cobra.Command {
	var (
		params goclient.AwaitingEventsParams
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "events",
		Short: "What awaits an event: workflow, step, event, waiting since, timeout",
		Long: `List the steps that await an event none of which has come yet (the
geneva.awaiting_events view), the soonest timeout first: the workflow, its
type and hero, the step, the event it awaits, since when it waits, when its
timeout falls and what the timeout then does (run, cancel, pause or skip).
A paused workflow's step is listed too. Send one with geneva send-event.`,
		Example: `  geneva events
  geneva events --type ExpenseApproval --event approved
  geneva events --json`,
		Args: noArgs,
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			return listAwaiting(ctx, env, &params, asJSON)
		}),
	}
	cmd.Flags().StringVar(&params.WorkflowType, "type", "", "only workflows of this type")
	cmd.Flags().StringVar(&params.Event, "event", "", "only steps awaiting this event")
	cmd.Flags().IntVar(&params.Limit, "limit", 100, "how many to list at most (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

func listAwaiting(ctx context.Context, env *environment, params *goclient.AwaitingEventsParams, asJSON bool) error {
	awaiting, err := env.client.AwaitingEvents(ctx, params)
	if err != nil {
		return err
	}
	if asJSON {
		return report.JSON(env.stdout, report.OrEmpty(awaiting))
	}
	if err := printAwaiting(env.stdout, awaiting, time.Now()); err != nil {
		return err
	}
	if params.Limit > 0 && len(awaiting) == params.Limit {
		total, err := env.client.CountAwaitingEvents(ctx, params)
		if err != nil {
			return err
		}
		if total > int64(len(awaiting)) {
			env.printf("\nThe %d whose timeout comes first, of %d (--limit).\n", len(awaiting), total)
		}
	}
	return nil
}

// printAwaiting prints the awaiting steps as a table, the timeout relative
// to now too.
func printAwaiting(out io.Writer, awaiting []*goclient.AwaitingEvent, now time.Time) error {
	if len(awaiting) == 0 {
		_, err := fmt.Fprintln(out, "No step awaits an event.")
		return err
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	cells := report.WithCells(awaiting, func(a *goclient.AwaitingEvent) string { return a.Cell })
	fmt.Fprintln(w, "workflow\ttype\thero\tstate\tstep\tevent\twaiting since\ttimeout at\tthen"+report.CellColumn(cells, "cell"))
	for _, a := range awaiting {
		timeout := ""
		if a.TimeoutAt != nil {
			timeout = report.Stamp(*a.TimeoutAt) + " (" + relative(a.TimeoutAt.Sub(now)) + ")"
		}
		fmt.Fprintf(w, "%d\t%s\t%s %s\t%s\t%s\t%s\t%s\t%s\t%s%s\n", a.WorkflowID, a.WorkflowType, a.HeroType, a.HeroID,
			a.WorkflowState, a.StepName, awaited(a), report.Stamp(a.WaitingSince), timeout, a.OnTimeout, report.CellColumn(cells, a.Cell))
	}
	return w.Flush()
}

// awaited is what an awaiting step awaits: "approved", "approved | rejected",
// with "(since the wait)" when only events sent after it was reached count.
func awaited(a *goclient.AwaitingEvent) string {
	names := a.Event
	if len(a.Events) > 0 {
		names = strings.Join(a.Events, " | ")
	}
	if a.Since == "wait" {
		names += " (since the wait)"
	}
	return names
}

// relative says when something falls relative to now: "in 1d23h", "3m ago".
func relative(d time.Duration) string {
	if d < 0 {
		return shortDuration(-d) + " ago"
	}
	return "in " + shortDuration(d)
}

// shortDuration is a duration to the second, with days: 2d03h, 4h05m, 3m12s,
// 9s.
func shortDuration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

func newSendEventCmd(opts *options) *cobra.Command {
	var (
		payload string
		hero    string
		key     string
		start   string
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "send-event {WORKFLOW_ID | --hero TYPE:ID} EVENT",
		Short: "Send an event to a workflow, or to every ongoing workflow of a hero",
		Long: `Send the event EVENT to the workflow WORKFLOW_ID (geneva.send_event): when its
next step awaits EVENT, that step runs now, with the payload; otherwise the
event is kept for the first step that awaits it. A workflow that has ended
gets nothing (the command says so, and succeeds).

With --hero TYPE:ID, and only EVENT as argument, send it to every ongoing
workflow of that hero instead (geneva.send_hero_event), and print how many it
reached. With --start TYPE too, a hero without an ongoing workflow of TYPE
gets one, created in the same transaction, which receives the event.

--payload is JSON (an object, an array, a string, a number...); without it,
the event has none. --key names the event (a webhook's delivery id): a
workflow that already has an event with that key records nothing, so a
delivery repeated is sent once.`,
		Example: `  geneva send-event 42 approved --payload '{"by": "ann@example.com"}'
  geneva send-event --hero Order:1001 payment_received --payload '{"amount": 1250}'
  geneva send-event --hero Order:1001 payment_received --key evt_3Nk2 --start Fulfilment
  geneva send-event 42 approved --key delivery-7 --json`,
		// the arguments and flags are checked before connecting to the database
		Args: func(cmd *cobra.Command, args []string) error {
			if payload != "" && !json.Valid([]byte(payload)) {
				return usagef("--payload is not JSON: %s", payload)
			}
			if hero != "" {
				if heroType, heroID, ok := strings.Cut(hero, ":"); !ok || heroType == "" || heroID == "" {
					return usagef("--hero takes TYPE:ID, as Order:1001")
				}
				if len(args) != 1 {
					return usagef("send-event --hero TYPE:ID takes one event name")
				}
				return nil
			}
			if start != "" {
				return usagef("--start takes --hero TYPE:ID: a workflow is started for a hero")
			}
			if len(args) != 2 {
				return usagef("send-event takes a workflow id and an event name (or --hero TYPE:ID and an event name)")
			}
			_, err := parseWorkflowID(args[0])
			return err
		},
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			var raw json.RawMessage
			if payload != "" {
				raw = json.RawMessage(payload)
			}
			if hero != "" {
				heroType, heroID, _ := strings.Cut(hero, ":")
				return sendHeroEvent(ctx, env, heroType, heroID, args[0], raw,
					goclient.SendHeroEventOpts{Key: key, Start: start}, asJSON)
			}
			id, err := parseWorkflowID(args[0])
			if err != nil {
				return err
			}
			return sendEvent(ctx, env, id, args[1], raw, key, asJSON)
		}),
	}
	cmd.Flags().StringVar(&payload, "payload", "", "the event's payload, as JSON")
	cmd.Flags().StringVar(&hero, "hero", "", "send to every ongoing workflow of this hero, as TYPE:ID")
	cmd.Flags().StringVar(&key, "key", "", "the event's key: a workflow that has it already records nothing")
	cmd.Flags().StringVar(&start, "start", "", "with --hero: start a workflow of this type when the hero has none ongoing")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

func sendEvent(ctx context.Context, env *environment, id int64, event string, payload json.RawMessage, key string, asJSON bool) error {
	// a nil json.RawMessage would encode to null, which is no payload too;
	// nil as any says so plainly
	var p any
	if payload != nil {
		p = payload
	}
	sent, err := env.client.SendEvent(ctx, id, event, p, goclient.SendEventOpts{Key: key})
	if err != nil {
		return err
	}
	if asJSON {
		return report.JSON(env.stdout, map[string]any{"workflow_id": id, "event": event, "sent": sent})
	}
	if !sent && key != "" {
		wf, err := env.client.GetWorkflow(ctx, id)
		if err != nil {
			return err
		}
		if wf.State != goclient.StateFinished && wf.State != goclient.StateCanceled {
			env.printf("workflow %d has an event with key %s already: nothing was sent\n", id, key)
			return nil
		}
	}
	if !sent {
		env.printf("workflow %d has ended: nothing was sent\n", id)
		return nil
	}
	env.printf("sent %s to workflow %d\n", event, id)
	return nil
}

func sendHeroEvent(ctx context.Context, env *environment, heroType, heroID, event string, payload json.RawMessage,
	opts goclient.SendHeroEventOpts, asJSON bool) error {
	var p any
	if payload != nil {
		p = payload
	}
	reached, err := env.client.SendHeroEvent(ctx, heroType, heroID, event, p, opts)
	if err != nil {
		return err
	}
	if asJSON {
		return report.JSON(env.stdout, map[string]any{"hero_type": heroType, "hero_id": heroID, "event": event, "workflows_reached": reached})
	}
	workflows := "workflows"
	if reached == 1 {
		workflows = "workflow"
	}
	env.printf("sent %s to %d ongoing %s of %s %s\n", event, reached, workflows, heroType, heroID)
	return nil
}
