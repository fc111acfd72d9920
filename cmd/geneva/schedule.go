package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/report"
)

func newScheduleCmd(opts *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Schedules: workflows created on a cron (create, ls, pause, resume, rm)",
		Long: `Schedules create a workflow of a type for a hero at every slot of a cron
expression, in an IANA time zone; every worker fires the due ones each second
(geneva.fire_schedules), each slot exactly once.`,
		Args: noArgs,
	}
	cmd.AddCommand(newScheduleCreateCmd(opts), newScheduleListCmd(opts),
		newScheduleVerbCmd(opts, "pause", "Pause a schedule: it fires nothing until resumed"),
		newScheduleVerbCmd(opts, "resume", "Resume a paused schedule (its catch-up decides about the slots it missed)"),
		newScheduleVerbCmd(opts, "rm", "Delete a schedule and its firings' history (its workflows stay)"))
	return cmd
}

func newScheduleCreateCmd(opts *options) *cobra.Command {
	var (
		schedule goclient.ScheduleOpts
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "create NAME CRON WORKFLOW_TYPE HERO_TYPE:HERO_ID",
		Short: "Create a schedule, or replace the one of that name",
		Long: `Create the schedule NAME (geneva.create_schedule), or replace it: a workflow of
WORKFLOW_TYPE for the hero at every slot of CRON, five fields (minute, hour,
day of month, month, day of week, with *, lists, ranges, steps and names) or
@hourly, @daily, @weekly, @monthly, @yearly, read in --tz.

--catch-up says what happens to slots that passed unfired (no worker ran, or
the schedule was paused): latest fires the newest, all every one, none none.
Without --allow-multiple, a slot whose hero still has an ongoing workflow of
the type is recorded as skipped.`,
		Example: `  geneva schedule create nightly-report '0 2 * * *' Report Team:ops --tz Europe/Berlin
  geneva schedule create digest '*/15 9-17 * * mon-fri' Digest Team:sales --catch-up none`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 4 {
				return usagef("schedule create takes a name, a cron expression (quoted), a workflow type and a hero as TYPE:ID")
			}
			if heroType, heroID, ok := strings.Cut(args[3], ":"); !ok || heroType == "" || heroID == "" {
				return usagef("the hero is TYPE:ID, as Team:ops")
			}
			return nil
		},
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			heroType, heroID, _ := strings.Cut(args[3], ":")
			id, err := env.client.CreateSchedule(ctx, args[0], args[1], args[2], heroType, heroID, &schedule)
			if err != nil {
				return err
			}
			return printScheduleResult(ctx, env, args[0], id, "created", asJSON)
		}),
	}
	cmd.Flags().StringVar(&schedule.Timezone, "tz", "UTC", "the IANA time zone the cron is read in")
	cmd.Flags().StringVar(&schedule.CatchUp, "catch-up", "latest", "missed slots: latest, all or none")
	cmd.Flags().BoolVar(&schedule.AllowMultiple, "allow-multiple", false, "create beside the hero's ongoing workflow of the type")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

func newScheduleListCmd(opts *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the schedules: next and last fire, last workflow, skips",
		Long: `List every schedule (the geneva.schedule_list view): its cron and time zone,
what it creates, whether it is paused, when it fires next, when it last fired
and the workflow it created, how many slots fired and were skipped, and the
last skip's reason.`,
		Example: `  geneva schedule ls
  geneva schedule ls --json`,
		Args: noArgs,
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			schedules, err := env.client.Schedules(ctx)
			if err != nil {
				return err
			}
			if asJSON {
				return report.JSON(env.stdout, report.OrEmpty(schedules))
			}
			return printSchedules(env.stdout, schedules, time.Now())
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

func newScheduleVerbCmd(opts *options, verb, short string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   verb + " NAME",
		Short: short,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("schedule %s takes one schedule name", verb)
			}
			return nil
		},
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			switch verb {
			case "pause":
				if err := env.client.PauseSchedule(ctx, args[0]); err != nil {
					return err
				}
				return printScheduleResult(ctx, env, args[0], 0, "paused", asJSON)
			case "resume":
				if err := env.client.ResumeSchedule(ctx, args[0]); err != nil {
					return err
				}
				return printScheduleResult(ctx, env, args[0], 0, "resumed", asJSON)
			}
			if err := env.client.DeleteSchedule(ctx, args[0]); err != nil {
				return err
			}
			if asJSON {
				return report.JSON(env.stdout, map[string]any{"name": args[0], "deleted": true})
			}
			env.printf("schedule %s deleted\n", args[0])
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

// printScheduleResult prints the schedule after a change: as JSON, or a line
// saying what was done and when it fires next.
func printScheduleResult(ctx context.Context, env *environment, name string, id int64, done string, asJSON bool) error {
	schedules, err := env.client.Schedules(ctx)
	if err != nil {
		return err
	}
	for _, s := range schedules {
		if s.Name != name {
			continue
		}
		if asJSON {
			return report.JSON(env.stdout, s)
		}
		if s.Paused {
			env.printf("schedule %s (%d) %s; paused\n", name, s.ID, done)
			return nil
		}
		env.printf("schedule %s (%d) %s; next fire %s\n", name, s.ID, done, report.Stamp(s.NextFireAt))
		return nil
	}
	return fmt.Errorf("geneva: schedule %s (%d) vanished", name, id)
}

// printSchedules prints the schedules as a table, times relative to now too.
func printSchedules(out io.Writer, schedules []*goclient.Schedule, now time.Time) error {
	if len(schedules) == 0 {
		_, err := fmt.Fprintln(out, "No schedules.")
		return err
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	cells := report.WithCells(schedules, func(s *goclient.Schedule) string { return s.Cell })
	fmt.Fprintln(w, "name\tcron\ttz\ttype\thero\tstate\tnext fire\tlast fire\tlast workflow\tfired\tskipped\tlast skip"+report.CellColumn(cells, "cell"))
	for _, s := range schedules {
		state, next := "active", report.Stamp(s.NextFireAt)+" ("+relative(s.NextFireAt.Sub(now))+")"
		if s.Paused {
			state, next = "paused", "-"
		}
		last, workflow, skip := "-", "-", "-"
		if s.LastFiredAt != nil {
			last = report.Stamp(*s.LastSlot) + " (" + relative(s.LastSlot.Sub(now)) + ")"
		}
		if s.LastWorkflowID != nil {
			workflow = fmt.Sprint(*s.LastWorkflowID)
			if s.LastWorkflowState != nil {
				workflow += " " + string(*s.LastWorkflowState)
			}
		}
		if s.LastSkipReason != nil {
			skip = report.Stamp(*s.LastSkippedSlot) + ": " + *s.LastSkipReason
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s %s\t%s\t%s\t%s\t%s\t%d\t%d\t%s%s\n", s.Name, s.Cron, s.Timezone, s.WorkflowType,
			s.HeroType, s.HeroID, state, next, last, workflow, s.FiredCount, s.SkippedCount, skip, report.CellColumn(cells, s.Cell))
	}
	return w.Flush()
}
