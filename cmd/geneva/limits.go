package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/report"
)

func newLimitsCmd(opts *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "limits",
		Short: "Limits in use, per limit and key: in progress, waiting, starts in the window",
		Long: `List every limit key in use (the geneva.limit_usage view): a workflow type's
own concurrency and rate_limit (its limit is the type), or a named limit
(geneva limit define), per key (a group, a hero, a type, or "-" for none):
the executions in progress out of the concurrency, those waiting for a slot
and since when the oldest waits, and the starts in the current rate window
out of the rate, with when the window ends.`,
		Example: `  geneva limits
  geneva limits --json`,
		Args: noArgs,
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			usage, err := env.client.LimitUsage(ctx)
			if err != nil {
				return err
			}
			if asJSON {
				return report.JSON(env.stdout, report.OrEmpty(usage))
			}
			return printLimitUsage(env.stdout, usage, time.Now())
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

// printLimitUsage prints the limits' keys as a table: in progress and
// starts with their bounds ("1/2"), the window's end relative to now too.
func printLimitUsage(out io.Writer, usage []*goclient.LimitUsage, now time.Time) error {
	if len(usage) == 0 {
		_, err := fmt.Fprintln(out, "No limit is in use.")
		return err
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	cells := report.WithCells(usage, func(u *goclient.LimitUsage) string { return u.Cell })
	fmt.Fprintln(w, "limit\tkind\tkey\tin progress\twaiting\twaiting since\tstarts in window\twindow ends"+report.CellColumn(cells, "cell"))
	for _, u := range usage {
		key := u.Key
		if key == "" {
			key = "-"
		}
		since, windowEnd := "", ""
		if u.WaitingSince != nil {
			since = report.Stamp(*u.WaitingSince)
		}
		if u.WindowEnd != nil {
			windowEnd = report.Stamp(*u.WindowEnd) + " (" + relative(u.WindowEnd.Sub(now)) + ")"
		}
		starts := ""
		if u.Rate != nil || u.StartsInWindow > 0 {
			starts = outOf(u.StartsInWindow, u.Rate)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s%s\n", u.LimitName, u.Kind, key,
			outOf(u.InProgress, u.Concurrency), u.Waiting, since, starts, windowEnd, report.CellColumn(cells, u.Cell))
	}
	return w.Flush()
}

// outOf is "n/bound", or n without a bound.
func outOf(n int64, bound *int) string {
	if bound == nil {
		return strconv.FormatInt(n, 10)
	}
	return fmt.Sprintf("%d/%d", n, *bound)
}

func newLimitCmd(opts *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "limit",
		Short: "Define a named limit, shared by the steps that name it",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown limit command %q (see geneva help limit)", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newLimitDefineCmd(opts))
	return cmd
}

func newLimitDefineCmd(opts *options) *cobra.Command {
	var (
		params goclient.DefineLimitParams
		by     string
	)
	cmd := &cobra.Command{
		Use:   "define NAME [--concurrency N] [--rate N --per DURATION] [--by none|group|hero|type]",
		Short: "Create or replace a named limit (geneva.define_limit)",
		Long: `Create or replace the named limit NAME (geneva.define_limit), shared by every
step of any type that names it in its definition's "limits"
(worker.StepOpts.Limits): at most --concurrency of their executions in
progress at once, and at most --rate starts per --per (a Go duration: 1s,
1m, 1h, 24h), per key: --by none (one key for all, the default), group (each
workflow's group), hero or type. Give a concurrency, a rate, or both.

Define a limit before the workers register the definitions that name it. A
change applies from the next claim; a grown limit wakes its waiting
executions at once.`,
		Example: `  geneva limit define payments_api --rate 100 --per 1m
  geneva limit define exports --concurrency 2 --by group
  geneva limit define smtp --concurrency 10 --rate 50 --per 1s`,
		// the arguments and flags are checked before connecting to the database
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("limit define takes one limit name")
			}
			switch {
			case params.Concurrency == 0 && params.Rate == 0:
				return usagef("limit define needs --concurrency, --rate (with --per) or both")
			case params.Concurrency < 0:
				return usagef("--concurrency must be at least 1")
			case params.Rate < 0:
				return usagef("--rate must be at least 1")
			case params.Rate > 0 && params.Per <= 0:
				return usagef("--rate needs --per, a duration above zero (1s, 1m, 1h)")
			case params.Rate == 0 && params.Per != 0:
				return usagef("--per goes with --rate")
			}
			switch goclient.LimitBy(by) {
			case goclient.LimitByNone, goclient.LimitByGroup, goclient.LimitByHero, goclient.LimitByType,
				goclient.LimitByParent:
			default:
				return usagef("--by is none, group, hero, type or parent, not %q", by)
			}
			return nil
		},
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			params.By = goclient.LimitBy(by)
			if err := env.client.DefineLimit(ctx, args[0], &params); err != nil {
				return err
			}
			env.printf("limit %s: %s\n", args[0], describeLimit(&params))
			return nil
		}),
	}
	cmd.Flags().IntVar(&params.Concurrency, "concurrency", 0, "executions in progress at once per key")
	cmd.Flags().IntVar(&params.Rate, "rate", 0, "starts per window (--per) per key")
	cmd.Flags().DurationVar(&params.Per, "per", 0, "the rate's window: 1s, 1m, 1h...")
	cmd.Flags().StringVar(&by, "by", string(goclient.LimitByNone), "the key: none (one for all), group, hero, type or parent (the children of one parent)")
	return cmd
}

// describeLimit says a named limit's bounds: "at most 2 in progress and 100
// starts per 1m0s, per group".
func describeLimit(params *goclient.DefineLimitParams) string {
	var bounds []string
	if params.Concurrency > 0 {
		bounds = append(bounds, fmt.Sprintf("%d in progress", params.Concurrency))
	}
	if params.Rate > 0 {
		bounds = append(bounds, fmt.Sprintf("%d starts per %s", params.Rate, params.Per))
	}
	key := "for all (one key)"
	if params.By != goclient.LimitByNone {
		key = "per " + string(params.By)
	}
	return "at most " + strings.Join(bounds, " and ") + ", " + key
}
