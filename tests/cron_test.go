package tests

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/robfig/cron/v3"
	"github.com/stretchr/testify/require"
)

// cronZones are the oracle's time zones: without DST, with an hour's DST in
// either hemisphere, with a half hour's (Lord Howe), with DST changes at
// midnight (São Paulo until 2019, whose day then started at 01:00), and with
// offsets of a half and three quarters of an hour.
var cronZones = []string{
	"UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Sao_Paulo",
	"Asia/Kolkata", "Pacific/Chatham", "Europe/London",
}

// slotInstant is the DST rule, written independently of the SQL: a slot
// (a wall-clock time of the zone) fires at the first instant the zone's
// clock reads it or later. A time that happens twice is its first
// occurrence; a time that never happens (clocks go forward) is the instant
// of the change. A minute-by-minute scan: every offset since 1970 is a whole
// number of minutes.
func slotInstant(wall time.Time, loc *time.Location) time.Time {
	// wall's fields are the slot's, in UTC
	for x := wall.Add(-15 * time.Hour); ; x = x.Add(time.Minute) {
		local := x.In(loc)
		asUTC := time.Date(local.Year(), local.Month(), local.Day(), local.Hour(), local.Minute(), 0, 0, time.UTC)
		if !asUTC.Before(wall) {
			return x
		}
	}
}

// oracleNext is the first slot after `after`: robfig/cron decides which
// wall-clock minutes match (run on the zone's clock read as UTC, which has
// no DST), and slotInstant when each fires; a slot whose instant is not
// after `after` (the repeated hour's second pass) has fired already. Zero
// when robfig finds none (it looks five years ahead).
func oracleNext(t *testing.T, schedule cron.Schedule, loc *time.Location, after time.Time) time.Time {
	t.Helper()
	local := after.In(loc)
	wall := time.Date(local.Year(), local.Month(), local.Day(), local.Hour(), local.Minute(), local.Second(), local.Nanosecond(), time.UTC)
	for {
		wall = schedule.Next(wall)
		if wall.IsZero() {
			return wall
		}
		if at := slotInstant(wall, loc); at.After(after) {
			return at
		}
	}
}

// randomField is a random cron field within lo..hi: *, a value, a range,
// steps, or a list of these; names (when given, for months and days of
// week) now and then, in any case.
func randomField(r *rand.Rand, lo, hi int, names []string) string {
	value := func() (int, string) {
		v := lo + r.IntN(hi-lo+1)
		if names != nil && r.IntN(3) == 0 {
			name := names[v-lo]
			if r.IntN(2) == 0 {
				name = strings.ToUpper(name)
			}
			return v, name
		}
		return v, strconv.Itoa(v)
	}
	part := func() string {
		switch r.IntN(7) {
		case 0:
			return "*"
		case 1:
			return "*/" + strconv.Itoa(1+r.IntN(hi-lo+1))
		case 2, 3:
			_, s := value()
			return s
		case 4:
			_, s := value()
			return s + "/" + strconv.Itoa(1+r.IntN(hi-lo+1))
		default:
			a, as := value()
			b, bs := value()
			if a > b {
				as, bs = bs, as
			}
			if r.IntN(2) == 0 {
				return as + "-" + bs + "/" + strconv.Itoa(1+r.IntN(hi-lo+1))
			}
			return as + "-" + bs
		}
	}
	n := 1
	if r.IntN(4) == 0 {
		n = 2 + r.IntN(2)
	}
	parts := make([]string, n)
	for i := range parts {
		parts[i] = part()
	}
	return strings.Join(parts, ",")
}

var (
	monthNames   = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	weekdayNames = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	descriptors  = []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
)

// randomCron is a random five-field expression, or a descriptor; with
// nearDST, hours are mostly early (DST changes happen at night).
func randomCron(r *rand.Rand, nearDST bool) string {
	if r.IntN(20) == 0 {
		return descriptors[r.IntN(len(descriptors))]
	}
	minute := randomField(r, 0, 59, nil)
	hour := randomField(r, 0, 23, nil)
	if nearDST && r.IntN(3) > 0 {
		hour = []string{"*", "0-3", "1", "2", "3", "1-2", "*/2", "0,2"}[r.IntN(8)]
	}
	day, month, weekday := "*", "*", "*"
	switch r.IntN(4) {
	case 1:
		day = randomField(r, 1, 31, nil)
	case 2:
		weekday = randomField(r, 0, 6, weekdayNames)
	case 3:
		day = randomField(r, 1, 31, nil)
		weekday = randomField(r, 0, 6, weekdayNames)
	}
	if r.IntN(3) == 0 {
		month = randomField(r, 1, 12, monthNames)
	}
	return strings.Join([]string{minute, hour, day, month, weekday}, " ")
}

// dstChanges lists the instants from `from` to `to` at which loc's offset
// changes (to the hour: a scan by quarter hours).
func dstChanges(loc *time.Location, from, to time.Time) []time.Time {
	var changes []time.Time
	_, offset := from.In(loc).Zone()
	for x := from; x.Before(to); x = x.Add(15 * time.Minute) {
		if _, o := x.In(loc).Zone(); o != offset {
			changes = append(changes, x)
			offset = o
		}
	}
	return changes
}

// TestCronNext holds the SQL evaluator, geneva._cron_next, to robfig/cron/v3
// (which decides what matches) and slotInstant (the DST rule) over thousands
// of random expressions and instants in several zones, a third of them
// within hours of a DST change.
func TestCronNext(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := rand.New(rand.NewPCG(25, uint64(time.Now().UnixNano())))
	seed := r.Uint64()
	t.Logf("seed %d", seed)
	r = rand.New(rand.NewPCG(25, seed))

	changes := map[string][]time.Time{}
	for _, zone := range cronZones {
		loc, err := time.LoadLocation(zone)
		require.NoError(t, err)
		changes[zone] = dstChanges(loc, time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2035, 1, 1, 0, 0, 0, 0, time.UTC))
	}

	const cases = 4000
	var crons, zones []string
	var afters []time.Time
	for range cases {
		zone := cronZones[r.IntN(len(cronZones))]
		var after time.Time
		near := len(changes[zone]) > 0 && r.IntN(3) == 0
		if near {
			change := changes[zone][r.IntN(len(changes[zone]))]
			after = change.Add(time.Duration(r.Int64N(int64(6*time.Hour))) - 3*time.Hour)
		} else {
			after = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.Int64N(int64(35 * 365 * 24 * time.Hour))))
		}
		switch r.IntN(4) {
		case 0:
			after = after.Truncate(time.Minute) // on a minute, perhaps a slot
		case 1:
			after = after.Truncate(time.Second)
		}
		crons = append(crons, randomCron(r, near))
		zones = append(zones, zone)
		afters = append(afters, after)
	}

	rows, err := b.conn.Query(b.ctx, `
		select geneva._cron_next(c, z, a)
		from unnest($1::text[], $2::text[], $3::timestamptz[]) with ordinality as t(c, z, a, i)
		order by i`, crons, zones, afters)
	require.NoError(t, err)
	got, err := pgx.CollectRows(rows, pgx.RowTo[*time.Time])
	require.NoError(t, err)
	require.Len(t, got, cases)

	compared, wrong := 0, 0
	for i := range cases {
		schedule, err := cron.ParseStandard(crons[i])
		require.NoError(t, err, crons[i])
		loc, err := time.LoadLocation(zones[i])
		require.NoError(t, err)
		want := oracleNext(t, schedule, loc, afters[i])
		if want.IsZero() {
			continue // robfig looks five years ahead, the SQL ten
		}
		compared++
		if got[i] == nil || !got[i].Equal(want) {
			wrong++
			if wrong <= 20 {
				t.Errorf("%q in %s after %s: got %v, want %s", crons[i], zones[i],
					afters[i].In(loc).Format(time.RFC3339Nano), fmtTime(got[i], loc), want.In(loc).Format(time.RFC3339))
			}
		}
	}
	require.Zero(t, wrong, "of %d compared", compared)
	require.Greater(t, compared, cases*9/10)
}

// sparseCrons are expressions whose slots are far apart or fall where DST
// moves the clock, mixed into TestCronPrevious's random ones.
var sparseCrons = []string{
	"0 0 29 2 *", "0 0 31 * *", "* * * 1 *", "59 23 31 12 *", "0 0 1 1 *", "30 2 * * *", "*/10 1-3 * * *",
	"* 1-2 * * *", "45 1 * * sun", "0 0 29 2 mon", "0 12 13 * fri",
}

// TestCronPrevious holds geneva._cron_previous, the latest slot at or
// before an instant (catch-up's), to geneva._cron_next (itself held to
// robfig/cron by TestCronNext) over thousands of random and sparse
// expressions, zones and instants, a third within hours of a DST change:
// p = previous(t) is a slot (next(p - 1 minute) = p), not after t, and
// the next slot after it is after t; NULL only when no slot lies in the
// ten years before t.
func TestCronPrevious(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := rand.New(rand.NewPCG(44, uint64(time.Now().UnixNano())))
	seed := r.Uint64()
	t.Logf("seed %d", seed)
	r = rand.New(rand.NewPCG(44, seed))

	changes := map[string][]time.Time{}
	for _, zone := range cronZones {
		loc, err := time.LoadLocation(zone)
		require.NoError(t, err)
		changes[zone] = dstChanges(loc, time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2035, 1, 1, 0, 0, 0, 0, time.UTC))
	}

	const cases = 4000
	var crons, zones []string
	var ats []time.Time
	for range cases {
		zone := cronZones[r.IntN(len(cronZones))]
		var at time.Time
		near := len(changes[zone]) > 0 && r.IntN(3) == 0
		if near {
			change := changes[zone][r.IntN(len(changes[zone]))]
			at = change.Add(time.Duration(r.Int64N(int64(6*time.Hour))) - 3*time.Hour)
		} else {
			at = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.Int64N(int64(35 * 365 * 24 * time.Hour))))
		}
		switch r.IntN(4) {
		case 0:
			at = at.Truncate(time.Minute) // on a minute, perhaps a slot
		case 1:
			at = at.Truncate(time.Second)
		}
		expression := randomCron(r, near)
		if r.IntN(4) == 0 {
			expression = sparseCrons[r.IntN(len(sparseCrons))]
		}
		crons = append(crons, expression)
		zones = append(zones, zone)
		ats = append(ats, at)
	}

	type check struct {
		Previous       *time.Time // previous(t)
		NextOfPrevious *time.Time // next(previous(t))
		Again          *time.Time // next(previous(t) - 1 minute)
		Earliest       *time.Time // next(t - ten years), when previous(t) is NULL
	}
	rows, err := b.conn.Query(b.ctx, `
		select p, geneva._cron_next(c, z, p), geneva._cron_next(c, z, p - interval '1 minute'),
		  case when p is null then geneva._cron_next(c, z, a - interval '3652 days') end
		from unnest($1::text[], $2::text[], $3::timestamptz[]) with ordinality as t(c, z, a, i),
		  lateral (select geneva._cron_previous(c, z, a) as p) l
		order by i`, crons, zones, ats)
	require.NoError(t, err)
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[check])
	require.NoError(t, err)
	require.Len(t, got, cases)

	found, wrong := 0, 0
	for i, c := range got {
		loc, err := time.LoadLocation(zones[i])
		require.NoError(t, err)
		var problem string
		switch {
		case c.Previous == nil:
			if c.Earliest != nil && !c.Earliest.After(ats[i]) {
				problem = "NULL, but " + fmtTime(c.Earliest, loc) + " is a slot before it"
			}
		case c.Previous.After(ats[i]):
			problem = "after the instant"
		case c.Again == nil || !c.Again.Equal(*c.Previous):
			problem = "not a slot: the slot after the minute before it is " + fmtTime(c.Again, loc)
		case c.NextOfPrevious != nil && !c.NextOfPrevious.After(ats[i]):
			problem = "not the latest: " + fmtTime(c.NextOfPrevious, loc) + " is a slot after it, not after the instant"
		}
		if c.Previous != nil {
			found++
		}
		if problem != "" {
			wrong++
			if wrong <= 20 {
				t.Errorf("%q in %s at %s: got %s, %s", crons[i], zones[i],
					ats[i].In(loc).Format(time.RFC3339Nano), fmtTime(c.Previous, loc), problem)
			}
		}
	}
	require.Zero(t, wrong, "of %d", cases)
	require.Greater(t, found, cases*9/10)
}

func fmtTime(at *time.Time, loc *time.Location) string {
	if at == nil {
		return "NULL"
	}
	return at.In(loc).Format(time.RFC3339)
}

// TestCronDST: the DST rule on New York's changes of 2024, literally.
func TestCronDST(t *testing.T) {
	t.Parallel()
	b := setup(t)
	at := func(s string) time.Time {
		x, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return x.UTC()
	}
	next := func(expression, after string) time.Time {
		var x time.Time
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva._cron_next($1, 'America/New_York', $2)", expression, at(after)).Scan(&x))
		return x.UTC()
	}
	// 10 March: 02:00 EST becomes 03:00 EDT
	t.Run("ASkippedSlotFiresAtTheChange", func(t *testing.T) {
		require.Equal(t, at("2024-03-10T03:00:00-04:00"), next("30 2 * * *", "2024-03-10T00:00:00-05:00"))
		require.Equal(t, at("2024-03-11T02:30:00-04:00"), next("30 2 * * *", "2024-03-10T03:00:00-04:00"))
	})
	t.Run("TheSkippedHoursSlotsFireOnceTogether", func(t *testing.T) {
		require.Equal(t, at("2024-03-10T03:00:00-04:00"), next("*/10 * * * *", "2024-03-10T01:55:00-05:00"))
		require.Equal(t, at("2024-03-10T03:10:00-04:00"), next("*/10 * * * *", "2024-03-10T03:00:00-04:00"))
	})
	// 3 November: 02:00 EDT becomes 01:00 EST
	t.Run("ARepeatedHourFiresOnce", func(t *testing.T) {
		require.Equal(t, at("2024-11-03T01:30:00-04:00"), next("30 1 * * *", "2024-11-03T00:00:00-04:00"))
		require.Equal(t, at("2024-11-04T01:30:00-05:00"), next("30 1 * * *", "2024-11-03T01:30:00-04:00"))
		require.Equal(t, at("2024-11-03T02:00:00-05:00"), next("0 * * * *", "2024-11-03T01:00:00-04:00"))
		// created during the second pass: its slots of this hour have fired
		require.Equal(t, at("2024-11-03T02:20:00-05:00"), next("20 * * * *", "2024-11-03T01:10:00-05:00"))
	})
	previous := func(expression, at string) time.Time {
		var x time.Time
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva._cron_previous($1, 'America/New_York', $2)", expression, at).Scan(&x))
		return x.UTC()
	}
	t.Run("ThePreviousSlotFollowsTheSameRule", func(t *testing.T) {
		// the skipped hour's slot is the change's instant
		require.Equal(t, at("2024-03-10T03:00:00-04:00"), previous("30 2 * * *", "2024-03-10T03:00:00-04:00"))
		require.Equal(t, at("2024-03-09T02:30:00-05:00"), previous("30 2 * * *", "2024-03-10T01:59:59-05:00"))
		// in the repeated hour's second pass, its slots fired in the first
		require.Equal(t, at("2024-11-03T01:45:00-04:00"), previous("45 1 * * *", "2024-11-03T01:30:00-05:00"))
		require.Equal(t, at("2024-11-03T01:59:00-04:00"), previous("* * * * *", "2024-11-03T01:30:00-05:00"))
		require.Equal(t, at("2024-11-03T02:00:00-05:00"), previous("* * * * *", "2024-11-03T02:00:30-05:00"))
		require.Equal(t, at("2024-11-03T01:30:00-04:00"), previous("30 1 * * *", "2024-11-03T01:30:00-04:00"))
		require.Equal(t, at("2024-11-02T01:30:00-04:00"), previous("30 1 * * *", "2024-11-03T01:29:59-04:00"))
	})
	t.Run("MinutelyRunsThroughTheRepeatedHourOnce", func(t *testing.T) {
		var n int
		require.NoError(t, b.conn.QueryRow(b.ctx, `
			with recursive slots(at) as (
			  select geneva._cron_next('* * * * *', 'America/New_York', '2024-11-03 00:00-04')
			  union all
			  select geneva._cron_next('* * * * *', 'America/New_York', at) from slots
			  where at < '2024-11-03 03:00-05'
			)
			select count(*) from slots where at <= '2024-11-03 03:00-05'`).Scan(&n))
		require.Equal(t, 3*60, n, "00:01 to 03:00, the repeated hour once: three hours of wall clock, not four")
	})
}

// TestCronParse: what the evaluator accepts, and 22023 for what it does not.
func TestCronParse(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for expression, want := range map[string]string{
		"*/15 9-17 * * mon-fri": "({0,15,30,45},{9,10,11,12,13,14,15,16,17},{1-31},{1-12},{1,2,3,4,5},t,f)",
		"0 0 1,15 JAN-mar/2 *":  "({0},{0},{1,15},{1,3},{0-6},f,t)",
		"5 4 * * 5-7":           "({5},{4},{1-31},{1-12},{0,5,6},t,f)",
		"@weekly":               "({0},{0},{1-31},{1-12},{0},t,f)",
		"  @HOURLY ":            "({0},{0-23},{1-31},{1-12},{0-6},t,t)",
		"0 12 ? * 1/2":          "({0},{12},{1-31},{1-12},{1,3,5},t,f)",
		"0\t12 */1 * *":         "({0},{12},{1-31},{1-12},{0-6},t,t)",
		"0 12 */2 * *":          "({0},{12},{1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31},{1-12},{0-6},f,t)",
	} {
		var got string
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva._cron_parse($1)::text", expression).Scan(&got))
		for _, full := range []struct{ from, to string }{
			{"{0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23}", "{0-23}"},
			{"{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31}", "{1-31}"},
			{"{1,2,3,4,5,6,7,8,9,10,11,12}", "{1-12}"},
			{"{0,1,2,3,4,5,6}", "{0-6}"},
		} {
			got = strings.ReplaceAll(got, full.from, full.to)
		}
		require.Equal(t, want, strings.ReplaceAll(got, `"`, ""), expression)
	}
	for _, bad := range []string{
		"", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * 32 * *", "* * * 13 *",
		"* * * * 8", "* * * foo *", "* * * * monday", "5-1 * * * *", "*/0 * * * *", "1-2-3 * * * *",
		"1/2/3 * * * *", ", * * * *", "1, * * * *", "-1 * * * *", "* * * * *x", "@every 5m", "@reboot",
		"a * * * *",
	} {
		_, err := b.conn.Exec(b.ctx, "select geneva._cron_parse($1)", bad)
		requireCode(t, err, "22023")
	}
	_, err := b.conn.Exec(b.ctx, "select geneva._cron_parse(null)")
	requireCode(t, err, "22004")
}
