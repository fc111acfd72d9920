package main

import (
	"encoding/json"
	"fmt"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
)

// The housekeeping flags have no defaults of their own: a flag not given is
// not sent, so it is the database's setting (SQL alone holds the defaults).
func TestHousekeepFlagsSendOnlyWhatIsGiven(t *testing.T) {
	parse := func(args ...string) (*goclient.HousekeepParams, error) {
		cmd := &cobra.Command{Use: "housekeep"}
		var flags housekeepFlags
		flags.add(cmd, "")
		require.NoError(t, cmd.ParseFlags(args))
		return flags.params()
	}
	for _, tt := range []struct {
		args []string
		want goclient.HousekeepParams
	}{
		{nil, goclient.HousekeepParams{}},
		{[]string{"--retention", "0s"}, goclient.HousekeepParams{Retention: new(time.Duration(0))}},
		{[]string{"--retention", "forever"}, goclient.HousekeepParams{Retention: new(time.Duration(-1))}},
		{[]string{"--stuck-in-progress", "0s", "--stuck-scheduled", "5m", "--recovery", "cancel", "--batch-size", "10"},
			goclient.HousekeepParams{StuckInProgressAfter: new(time.Duration(0)), StuckScheduledAfter: new(5 * time.Minute),
				RecoveryAction: goclient.RecoveryCancel, BatchSize: 10}},
	} {
		got, err := parse(tt.args...)
		require.NoError(t, err, "%v", tt.args)
		require.Equal(t, tt.want, *got, "%v", tt.args)
	}
	for _, args := range [][]string{{"--retention", "-1h"}, {"--retention", "never"}, {"--recovery", ""}, {"--batch-size", "0"}} {
		_, err := parse(args...)
		var usage usageError
		require.ErrorAs(t, err, &usage, "%v", args)
	}

	// the round interval is a setting's alone: one round has none
	cmd := &cobra.Command{Use: "housekeep"}
	var flags housekeepFlags
	flags.add(cmd, "")
	require.Error(t, cmd.ParseFlags([]string{"--round-interval", "5m"}))
	settings := func(args ...string) goclient.HousekeepingSettingsParams {
		cmd := &cobra.Command{Use: "settings"}
		var flags housekeepFlags
		flags.addSettings(cmd)
		require.NoError(t, cmd.ParseFlags(args))
		params, err := flags.settingsParams()
		require.NoError(t, err, "%v", args)
		return *params
	}
	require.Equal(t, goclient.HousekeepingSettingsParams{}, settings())
	require.Equal(t, goclient.HousekeepingSettingsParams{RoundInterval: new(time.Duration(0))}, settings("--round-interval", "0s"))
	require.Equal(t, goclient.HousekeepingSettingsParams{
		HousekeepParams: goclient.HousekeepParams{BatchSize: 10}, RoundInterval: new(5 * time.Minute),
	}, settings("--batch-size", "10", "--round-interval", "5m"))
	require.Equal(t, goclient.HousekeepingSettingsParams{
		ActionRetention: new(90 * 24 * time.Hour), ActionRetentionFloor: new(60 * 24 * time.Hour),
	}, settings("--action-retention", "2160h", "--action-retention-floor", "1440h"))
	require.Equal(t, goclient.HousekeepingSettingsParams{RunawayExecutions: 5000, RunawayRepeats: 50},
		settings("--runaway-executions", "5000", "--runaway-repeats", "50"))
	require.Equal(t, goclient.HousekeepingSettingsParams{
		PartitionInterval: 7 * 24 * time.Hour, MoveAfter: new(10 * time.Minute), Archive: goclient.ArchiveDetach,
	}, settings("--partition-interval", "week", "--move-after", "10m", "--archive", "detach"))
	require.Equal(t, goclient.HousekeepingSettingsParams{PartitionInterval: 24 * time.Hour, MoveAfter: new(time.Duration(0))},
		settings("--partition-interval", "day", "--move-after", "0s"))
}

// `geneva housekeep settings` shows the settings; with flags, it sets those
// (as the operator role: workers may not) and `geneva housekeep` and the
// workers' rounds follow them.
func TestHousekeepSettings(t *testing.T) {
	conf := dbtest.NewConfig(t)
	_, payment := setUp(t, conf.URL())
	operator := dbtest.URLAs(conf, dbtest.Operator)

	out, err := cli(t, operator, "housekeep", "settings")
	require.NoError(t, err)
	require.Regexp(t, `retention +30 days\n`, out)
	require.Regexp(t, `stuck in progress after +1h\n`, out)
	require.Regexp(t, `stuck scheduled after +15m\n`, out)
	require.Regexp(t, `recovery action +reattempt\n`, out)
	require.Regexp(t, `batch size +1000\n`, out)
	require.Regexp(t, `round interval +1m\n`, out)
	require.Regexp(t, `action retention +30 days \(at least 30 days\)\n`, out)
	require.Regexp(t, `runaway after +1000 executions, or 100 of one step in a row\n`, out)
	require.Regexp(t, `history partitions +1 day each\n`, out)
	require.Regexp(t, `move to history after +1h\n`, out)
	require.Regexp(t, `expired partitions +dropped\n`, out)
	require.Regexp(t, `set +never`, out)

	out, err = cli(t, operator, "housekeep", "settings", "--retention", "forever", "--stuck-scheduled", "90m",
		"--round-interval", "5m", "--json")
	require.NoError(t, err)
	var settings map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &settings))
	require.Nil(t, settings["retention"])
	require.Equal(t, 3600.0, settings["stuck_in_progress_after"])
	require.Equal(t, 5400.0, settings["stuck_scheduled_after"])
	require.Equal(t, 300.0, settings["round_interval"])
	require.Equal(t, 86400.0, settings["partition_interval"])
	require.Equal(t, 3600.0, settings["move_after"])
	require.Equal(t, "drop", settings["archive"])
	require.Equal(t, string(dbtest.Operator), settings["updated_by"])

	out, err = cli(t, operator, "housekeep", "settings", "--retention", "0s", "--recovery", "cancel")
	require.NoError(t, err)
	require.Regexp(t, `retention +0s\n`, out)
	require.Regexp(t, `stuck scheduled after +1h30m\n`, out, "unchanged")
	require.Regexp(t, `round interval +5m\n`, out, "unchanged")
	require.Regexp(t, `recovery action +cancel\n`, out)
	require.Regexp(t, fmt.Sprintf(`set +.* by %s\n`, dbtest.Operator), out)

	// the action log's own retention, never below its floor, which only
	// the schema's owner lowers
	out, err = cli(t, operator, "housekeep", "settings", "--action-retention", "1440h")
	require.NoError(t, err)
	require.Regexp(t, `action retention +60 days \(at least 30 days\)\n`, out)
	_, err = cli(t, operator, "housekeep", "settings", "--action-retention", "1h")
	require.ErrorContains(t, err, "below its floor")
	_, err = cli(t, operator, "housekeep", "settings", "--action-retention-floor", "1h")
	require.ErrorContains(t, err, "only the owner of schema geneva may lower")

	out, err = cli(t, operator, "housekeep", "settings", "--runaway-executions", "5000")
	require.NoError(t, err)
	require.Regexp(t, `runaway after +5000 executions, or 100 of one step in a row\n`, out)
	_, err = cli(t, operator, "housekeep", "settings", "--runaway-repeats", "0")
	require.ErrorContains(t, err, "--runaway-repeats takes a positive number")

	out, err = cli(t, operator, "housekeep", "settings", "--partition-interval", "week", "--move-after", "10m", "--archive", "detach")
	require.NoError(t, err)
	require.Regexp(t, `history partitions +7 days each\n`, out)
	require.Regexp(t, `move to history after +10m\n`, out)
	require.Regexp(t, `expired partitions +detached \(geneva archive\)\n`, out)
	_, err = cli(t, operator, "housekeep", "settings", "--partition-interval", "month")
	require.ErrorContains(t, err, "--partition-interval takes day or week")
	_, err = cli(t, operator, "housekeep", "settings", "--archive", "keep")
	require.ErrorContains(t, err, "unknown archive keep")
	_, err = cli(t, operator, "housekeep", "settings", "--partition-interval", "day", "--archive", "drop")
	require.NoError(t, err)

	_, err = cli(t, operator, "housekeep", "settings", "--recovery", "shrug")
	require.ErrorContains(t, err, "unknown recovery action shrug")
	_, err = cli(t, operator, "housekeep", "settings", "--round-interval", "-1m")
	require.ErrorContains(t, err, "housekeeping intervals must not be negative")
	_, err = cli(t, operator, "housekeep", "--round-interval", "5m")
	require.ErrorContains(t, err, "unknown flag: --round-interval", "one round has no interval")

	// a worker's role reads them, and may not set them nor run housekeep
	worker := dbtest.URLAs(conf, dbtest.Worker)
	out, err = cli(t, worker, "housekeep", "settings")
	require.NoError(t, err)
	require.Regexp(t, `retention +0s\n`, out)
	_, err = cli(t, worker, "housekeep", "settings", "--retention", "1h")
	require.ErrorContains(t, err, "permission denied")
	_, err = cli(t, worker, "housekeep", "--retention", "0s")
	require.ErrorContains(t, err, "permission denied")

	// the setting, a retention of zero, is what geneva housekeep does
	_, err = cli(t, operator, "cancel", fmt.Sprint(payment))
	require.NoError(t, err)
	out, err = cli(t, operator, "housekeep", "--retention", "forever")
	require.NoError(t, err)
	require.Contains(t, out, "deleted 0 workflows")
	out, err = cli(t, operator, "housekeep")
	require.NoError(t, err)
	require.Contains(t, out, "moved 1 ended workflows into history", "at once: the retention is shorter than move_after")
	require.Contains(t, out, "deleted 0 workflows", "its day has not ended")
	out, err = cli(t, tomorrow(operator), "housekeep", "--json")
	require.NoError(t, err)
	var counts map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &counts))
	require.Equal(t, 1.0, counts["workflows_cleaned_up"], "its day's partition dropped a day later")
	require.Equal(t, 1.0, counts["partitions_dropped"])
}

// tomorrow is the database URL with the test clock a day ahead
// (geneva.fake_now, a run-time parameter of the connection): retention
// drops whole days of history (docs/history.md).
func tomorrow(url string) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "geneva.fake_now=" + neturl.QueryEscape(time.Now().Add(24*time.Hour).UTC().Format(time.RFC3339))
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 10 * time.Second: "10s", 15 * time.Minute: "15m", time.Hour: "1h", 90 * time.Minute: "1h30m",
		24 * time.Hour: "1 day", 30 * 24 * time.Hour: "30 days", 36 * time.Hour: "36h", 90 * time.Second: "1m30s",
	} {
		require.Equal(t, want, humanDuration(d), d.String())
	}
}
