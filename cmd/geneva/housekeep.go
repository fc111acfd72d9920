package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/report"
)

func newHousekeepCmd(opts *options) *cobra.Command {
	var (
		flags  housekeepFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "housekeep [flags]",
		Short: "Move ended workflows into history, drop old history, recover stuck steps, until done",
		Long: `Run geneva.housekeep in rounds until nothing is left: move finished and
canceled workflows into history (whole trees, the setting move-after after
they end), drop (or detach, for geneva archive) the history partitions past
their retention, and recover executions stuck in progress or overdue while
scheduled. A flag not given takes the housekeeping
settings' value, which the workers' own rounds use (geneva housekeep settings
shows and sets them); a flag given counts for this run only. A zero
--retention deletes the history of every day (or week) that has ended;
--retention forever deletes none.`,
		Example: `  geneva housekeep
  geneva housekeep --retention 0s
  geneva housekeep settings --retention 168h --recovery cancel`,
		Args: noArgs,
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			params, err := flags.params()
			if err != nil {
				return err
			}
			var total goclient.HousekeepResult
			for {
				result, err := env.client.Housekeep(ctx, params)
				if err != nil {
					return err
				}
				total.Add(result)
				if !result.More {
					break
				}
			}
			if asJSON {
				// (HousekeepResult is geneva.housekeep's JSON, its own names)
				enc := json.NewEncoder(env.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(total)
			}
			env.printf("moved %d ended workflows into history; deleted %d workflows (%d executions) with %d history partitions dropped and %d detached\n",
				total.WorkflowsMoved, total.WorkflowsCleanedUp, total.StepExecutionsCleanedUp, total.PartitionsDropped, total.PartitionsDetached)
			env.printf("recovered %d executions stuck in progress and %d stuck scheduled\n",
				total.StuckInProgressRecovered, total.StuckScheduledRecovered)
			if total.RunawaysFlagged > 0 {
				env.printf("flagged %d runaway workflows (geneva stuck --runaways)\n", total.RunawaysFlagged)
			}
			return nil
		}),
	}
	flags.add(cmd, "")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the rounds' counts added up, as JSON, for scripts")
	cmd.AddCommand(newHousekeepSettingsCmd(opts))
	return cmd
}

func newHousekeepSettingsCmd(opts *options) *cobra.Command {
	var (
		flags  housekeepFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "settings [flags]",
		Short: "Show or set the thresholds of every housekeeping round",
		Long: `Show the housekeeping settings (geneva.get_housekeeping_settings): the
thresholds every worker's rounds use, and geneva housekeep's for the flags it
is not given, the round interval, how often the workers' rounds run, and how
long the action log is kept (never below a floor only the schema's owner
may lower), when a workflow is flagged as a runaway chain, and history's:
the width of its partitions, how long an ended workflow stays live before it
moves, and whether expired partitions are dropped or detached.
With flags, set those first (geneva.set_housekeeping_settings, the operator
role's alone); a setting whose flag is not given stays as it is.`,
		Example: `  geneva housekeep settings
  geneva housekeep settings --retention 2160h --stuck-in-progress 30m
  geneva housekeep settings --round-interval 5m
  geneva housekeep settings --runaway-executions 5000 --runaway-repeats 500
  geneva housekeep settings --partition-interval week --move-after 10m --archive detach
  geneva housekeep settings --retention forever --json`,
		Args: noArgs,
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			params, err := flags.settingsParams()
			if err != nil {
				return err
			}
			var settings *goclient.HousekeepingSettings
			if *params == (goclient.HousekeepingSettingsParams{}) {
				settings, err = env.client.HousekeepingSettings(ctx)
			} else {
				settings, err = env.client.SetHousekeepingSettings(ctx, params)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return report.JSON(env.stdout, settings)
			}
			return printHousekeepingSettings(env, settings)
		}),
	}
	flags.addSettings(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts (durations in seconds, a retention of null: forever)")
	return cmd
}

// housekeepFlags are the thresholds a command line gives, and the round
// interval (settings only); a flag not given is not sent (the setting, or
// unchanged).
type housekeepFlags struct {
	cmd                  *cobra.Command
	retention            string
	stuckInProgress      time.Duration
	stuckScheduled       time.Duration
	recovery             string
	batchSize            int
	roundInterval        time.Duration
	actionRetention      time.Duration
	actionRetentionFloor time.Duration
	runawayExecutions    int
	runawayRepeats       int
	partitionInterval    string
	moveAfter            time.Duration
	archive              string
}

// add defines the flags on cmd; prefix starts their help ("set ").
func (f *housekeepFlags) add(cmd *cobra.Command, prefix string) {
	f.cmd = cmd
	cmd.Flags().StringVar(&f.retention, "retention", "",
		prefix+"how long finished and canceled workflows are kept after they end, as 720h, or forever")
	cmd.Flags().DurationVar(&f.stuckInProgress, "stuck-in-progress", 0,
		prefix+"how long an execution in progress may go without a sign of life before it is recovered")
	cmd.Flags().DurationVar(&f.stuckScheduled, "stuck-scheduled", 0,
		prefix+"how long a scheduled execution may be overdue before it is recovered")
	cmd.Flags().StringVar(&f.recovery, "recovery", "", prefix+"what recovery does to a stuck execution: reattempt or cancel")
	cmd.Flags().IntVar(&f.batchSize, "batch-size", 0, prefix+"the most rows of each kind a round handles")
}

// addSettings defines the settings' flags on cmd: add's, and the round
// interval, which one round (geneva housekeep) does not have.
func (f *housekeepFlags) addSettings(cmd *cobra.Command) {
	f.add(cmd, "set ")
	cmd.Flags().DurationVar(&f.roundInterval, "round-interval", 0,
		"set how long after a round's start the workers' next round is due")
	cmd.Flags().DurationVar(&f.actionRetention, "action-retention", 0,
		"set how long the operators' actions (the action log) are kept, never below the floor")
	cmd.Flags().DurationVar(&f.actionRetentionFloor, "action-retention-floor", 0,
		"set the least action retention (only the schema's owner may lower it)")
	cmd.Flags().IntVar(&f.runawayExecutions, "runaway-executions", 0,
		"set how many executions a workflow may have before housekeeping flags it as a runaway chain (geneva stuck --runaways)")
	cmd.Flags().IntVar(&f.runawayRepeats, "runaway-repeats", 0,
		"set how many times in a row one step may run before housekeeping flags its workflow as a runaway chain")
	cmd.Flags().StringVar(&f.partitionInterval, "partition-interval", "",
		"set the width of the history partitions created from now on: day or week")
	cmd.Flags().DurationVar(&f.moveAfter, "move-after", 0,
		"set how long an ended workflow stays in the live tables before housekeeping moves it into history")
	cmd.Flags().StringVar(&f.archive, "archive", "",
		"set what retention does with an expired history partition: drop, or detach (kept for geneva archive)")
}

// params are the flags given, as goclient's parameters.
func (f *housekeepFlags) params() (*goclient.HousekeepParams, error) {
	params := &goclient.HousekeepParams{}
	given := f.cmd.Flags().Changed
	if given("retention") {
		retention := time.Duration(-1) // (goclient: forever)
		if f.retention != "forever" {
			d, err := time.ParseDuration(f.retention)
			if err != nil || d < 0 {
				return nil, usagef("--retention takes a duration, as 720h, or forever; not %q", f.retention)
			}
			retention = d
		}
		params.Retention = &retention
	}
	if given("stuck-in-progress") {
		params.StuckInProgressAfter = &f.stuckInProgress
	}
	if given("stuck-scheduled") {
		params.StuckScheduledAfter = &f.stuckScheduled
	}
	if given("recovery") {
		if f.recovery == "" {
			return nil, usagef("--recovery takes reattempt or cancel")
		}
		params.RecoveryAction = goclient.RecoveryAction(f.recovery)
	}
	if given("batch-size") {
		if f.batchSize == 0 {
			return nil, usagef("--batch-size takes a positive number")
		}
		params.BatchSize = f.batchSize
	}
	return params, nil
}

// settingsParams are the flags given, as goclient's parameters of the
// settings (flags defined by addSettings).
func (f *housekeepFlags) settingsParams() (*goclient.HousekeepingSettingsParams, error) {
	thresholds, err := f.params()
	if err != nil {
		return nil, err
	}
	params := &goclient.HousekeepingSettingsParams{HousekeepParams: *thresholds}
	if f.cmd.Flags().Changed("round-interval") {
		params.RoundInterval = &f.roundInterval
	}
	if f.cmd.Flags().Changed("action-retention") {
		params.ActionRetention = &f.actionRetention
	}
	if f.cmd.Flags().Changed("action-retention-floor") {
		params.ActionRetentionFloor = &f.actionRetentionFloor
	}
	if f.cmd.Flags().Changed("partition-interval") {
		switch f.partitionInterval {
		case "day":
			params.PartitionInterval = 24 * time.Hour
		case "week":
			params.PartitionInterval = 7 * 24 * time.Hour
		default:
			return nil, usagef("--partition-interval takes day or week; not %q", f.partitionInterval)
		}
	}
	if f.cmd.Flags().Changed("move-after") {
		params.MoveAfter = &f.moveAfter
	}
	if f.cmd.Flags().Changed("archive") {
		if f.archive == "" {
			return nil, usagef("--archive takes drop or detach")
		}
		params.Archive = goclient.Archive(f.archive)
	}
	for _, n := range []struct {
		flag     string
		from, to *int
	}{{"runaway-executions", &f.runawayExecutions, &params.RunawayExecutions}, {"runaway-repeats", &f.runawayRepeats, &params.RunawayRepeats}} {
		if f.cmd.Flags().Changed(n.flag) {
			if *n.from < 1 {
				return nil, usagef("--%s takes a positive number", n.flag)
			}
			*n.to = *n.from
		}
	}
	return params, nil
}

// printHousekeepingSettings prints the settings for people.
func printHousekeepingSettings(env *environment, settings *goclient.HousekeepingSettings) error {
	w := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	retention := "forever"
	if settings.Retention != nil {
		retention = humanDuration(*settings.Retention)
	}
	fmt.Fprintf(w, "retention\t%s\n", retention)
	fmt.Fprintf(w, "stuck in progress after\t%s\n", humanDuration(settings.StuckInProgressAfter))
	fmt.Fprintf(w, "stuck scheduled after\t%s\n", humanDuration(settings.StuckScheduledAfter))
	fmt.Fprintf(w, "recovery action\t%s\n", settings.RecoveryAction)
	fmt.Fprintf(w, "batch size\t%d\n", settings.BatchSize)
	fmt.Fprintf(w, "round interval\t%s\n", humanDuration(settings.RoundInterval))
	fmt.Fprintf(w, "action retention\t%s (at least %s)\n", humanDuration(settings.ActionRetention),
		humanDuration(settings.ActionRetentionFloor))
	fmt.Fprintf(w, "runaway after\t%d executions, or %d of one step in a row\n", settings.RunawayExecutions, settings.RunawayRepeats)
	fmt.Fprintf(w, "history partitions\t%s each\n", humanDuration(settings.PartitionInterval))
	fmt.Fprintf(w, "move to history after\t%s\n", humanDuration(settings.MoveAfter))
	fmt.Fprintf(w, "expired partitions\t%s\n", map[goclient.Archive]string{
		goclient.ArchiveDrop: "dropped", goclient.ArchiveDetach: "detached (geneva archive)",
	}[settings.Archive])
	if settings.UpdatedAt == nil {
		fmt.Fprintf(w, "set\tnever (the defaults)\n")
	} else {
		fmt.Fprintf(w, "set\t%s by %s\n", report.Stamp(*settings.UpdatedAt), report.Deref(settings.UpdatedBy))
	}
	return w.Flush()
}

// humanDuration writes whole days as days, and other durations without
// Go's trailing zero units (1h, 15m, 1h30m).
func humanDuration(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d == day:
		return "1 day"
	case d > day && d%day == 0:
		return fmt.Sprintf("%d days", d/day)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
