package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Every throughput run is measured the same way: the database's commits and
// WAL bytes, the CPU time of the worker process and of PostgreSQL's
// processes, and the wait events of the worker's busy backends, sampled from
// a connection of their own.

const (
	// workerApplication is the application_name of the child workers'
	// connections, by which the sampler finds their backends.
	workerApplication = "geneva-bench-worker"
	// benchApplication is the application_name of the benchmark's own
	// connections.
	benchApplication = "geneva-bench"
	// pollsApplication is the application_name of the measurement's own
	// polls and readings (bench.polls).
	pollsApplication = "geneva-bench-polls"
	// samplerApplication is the application_name of the sampler.
	samplerApplication = "geneva-bench-sampler"
)

// runStats is what one throughput run measured.
type runStats struct {
	units   int           // steps or jobs done
	elapsed time.Duration // the work's time
	window  time.Duration // the measurement's time: the work, and the worker's start and stop

	commits  int64         // transactions committed in the database (pg_stat_database.xact_commit), less the benchmark's own polls
	walBytes int64         // WAL written (pg_current_wal_insert_lsn)
	walSyncs int64         // WAL flushes to disk (pg_stat_wal.wal_sync, the whole server's)
	walFPIs  int64         // full-page images written to WAL (pg_stat_wal.wal_fpi, the whole server's)
	syncTime time.Duration // their time (pg_stat_wal.wal_sync_time; zero without track_wal_io_timing)

	workerCPU  time.Duration // the child worker process
	serverCPU  time.Duration // PostgreSQL's processes but the measurement's own backends (zero when they cannot be seen)
	ownCPU     time.Duration // the measurement's own backends (its polls, the sampler), left out of serverCPU
	benchCPU   time.Duration // this process
	machineCPU time.Duration // every process on the machine
	rss        int64         // the child's peak resident memory

	waits []waitShare // the most sampled wait events of the worker's active backends
	seen  int         // active backends sampled, over all ticks
	ticks int         // sampling ticks
}

func (s runStats) rate() float64 {
	if s.elapsed <= 0 {
		return 0
	}
	return float64(s.units) / s.elapsed.Seconds()
}

func (s runStats) commitsPerUnit() float64 { return float64(s.commits) / float64(max(s.units, 1)) }

func (s runStats) walPerUnit() float64 { return float64(s.walBytes) / float64(max(s.units, 1)) }

func (s runStats) walSyncsPerUnit() float64 { return float64(s.walSyncs) / float64(max(s.units, 1)) }

// walText formats the WAL bytes per step and the full-page images among them.
func (s runStats) walText() string {
	return fmt.Sprintf("%.0f (%.2f)", s.walPerUnit(), float64(s.walFPIs)/float64(max(s.units, 1)))
}

// walSyncs formats the WAL flushes per step and, when timed, their mean time.
func (s runStats) walSyncsText() string {
	if s.walSyncs > 0 && s.syncTime > 0 {
		return fmt.Sprintf("%.2f (%.1f ms each)", s.walSyncsPerUnit(), float64(s.syncTime)/float64(time.Millisecond)/float64(s.walSyncs))
	}
	return fmt.Sprintf("%.2f", s.walSyncsPerUnit())
}

// busy is the share of the machine's cores busy over the measurement.
func (s runStats) busy() float64 {
	if s.window <= 0 {
		return 0
	}
	return s.machineCPU.Seconds() / (s.window.Seconds() * float64(runtime.NumCPU()))
}

// cpuPerUnit is d per step or job, in milliseconds.
func (s runStats) cpuPerUnit(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond) / float64(max(s.units, 1))
}

// waitShare is one wait event's share of the sampled active backends.
type waitShare struct {
	event string
	share float64
}

// counters are the cumulative figures a run's measurement subtracts.
type counters struct {
	at                              time.Time
	commits, wal, walSyncs, walFPIs int64
	syncTime                        float64 // milliseconds
	serverCPU, machineCPU, benchCPU time.Duration
	ownPolls                        int64
	serverVisible                   bool
	// ownBackends is the CPU time so far of each backend of the
	// measurement's polls (bench.polls, by process id)
	ownBackends map[int]time.Duration
}

// readCounters reads the database's commits and WAL position (in one
// statement, itself one commit) and the CPU counters.
func (b *bench) readCounters(ctx context.Context) (counters, error) {
	var (
		c       counters
		backend int
		own     []int32
	)
	err := b.polls.QueryRow(ctx, `select
		  (select xact_commit from pg_stat_database where datname = current_database()),
		  pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint,
		  pg_backend_pid(),
		  (select wal_sync from pg_stat_wal),
		  (select wal_sync_time from pg_stat_wal),
		  (select wal_fpi from pg_stat_wal),
		  array(select pid from pg_stat_activity where application_name = $1)`, pollsApplication,
	).Scan(&c.commits, &c.wal, &backend, &c.walSyncs, &c.syncTime, &c.walFPIs, &own)
	if err != nil {
		return c, err
	}
	// This statement's own commit falls after the figure it read: it counts
	// in the next reading, with the polls up to it.
	c.ownPolls = b.ownPolls.Add(1) - 1
	if b.postmasterPID == 0 {
		b.postmasterPID = postmasterOf(backend)
	}
	if b.postmasterPID > 0 {
		c.serverCPU, c.serverVisible = processTreeCPU(b.postmasterPID)
		c.ownBackends = map[int]time.Duration{}
		for _, pid := range own {
			if f, ok := procStat(int(pid)); ok && f.ppid == b.postmasterPID {
				c.ownBackends[int(pid)] = f.cpu()
			}
		}
	}
	c.at, c.machineCPU, c.benchCPU = time.Now(), machineCPU(), ownCPU()
	return c, nil
}

// postmasterOf returns the parent of a backend when it is a PostgreSQL
// process on this machine (zero when not: a server elsewhere).
func postmasterOf(backend int) int {
	fields, ok := procStat(backend)
	if !ok || fields.comm != "postgres" {
		return 0
	}
	parent, ok := procStat(fields.ppid)
	if !ok || parent.comm != "postgres" {
		return 0
	}
	return fields.ppid
}

type procFields struct {
	comm  string
	ppid  int
	ticks int64 // utime + stime
	reap  int64 // cutime + cstime: of the children waited for
}

// cpu is the process's own CPU time.
func (f procFields) cpu() time.Duration { return time.Duration(f.ticks) * 10 * time.Millisecond } // USER_HZ is 100

// procStat reads /proc/<pid>/stat.
func procStat(pid int) (procFields, bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procFields{}, false
	}
	text := string(stat)
	open, end := strings.IndexByte(text, '('), strings.LastIndexByte(text, ')')
	if open < 0 || end < open {
		return procFields{}, false
	}
	f := procFields{comm: text[open+1 : end]}
	rest := strings.Fields(text[end+1:]) // rest[0] is field 3 (state)
	if len(rest) < 15 {
		return procFields{}, false
	}
	number := func(i int) int64 { n, _ := strconv.ParseInt(rest[i], 10, 64); return n }
	f.ppid = int(number(1))
	f.ticks = number(11) + number(12) // fields 14, 15
	f.reap = number(13) + number(14)  // fields 16, 17
	return f, true
}

// processTreeCPU is the CPU time of the postmaster, of its children that are
// running, and of those that ended (which the kernel adds to the postmaster's
// children's time when it reaps them).
func processTreeCPU(postmaster int) (time.Duration, bool) {
	root, ok := procStat(postmaster)
	if !ok {
		return 0, false
	}
	ticks := root.ticks + root.reap
	entries, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, entry := range entries {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(entry)))
		if err != nil || pid == postmaster {
			continue
		}
		if f, ok := procStat(pid); ok && f.ppid == postmaster {
			ticks += f.ticks
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond, true // USER_HZ is 100
}

// since is the measurement from before to after.
func (after counters) since(before counters, stats *runStats) {
	stats.commits = after.commits - before.commits - (after.ownPolls - before.ownPolls)
	stats.walBytes = after.wal - before.wal
	stats.walSyncs = after.walSyncs - before.walSyncs
	stats.walFPIs = after.walFPIs - before.walFPIs
	stats.syncTime = time.Duration((after.syncTime - before.syncTime) * float64(time.Millisecond))
	stats.window = after.at.Sub(before.at)
	if before.serverVisible && after.serverVisible {
		// The measurement's own backends are not the run's: the polls'
		// CPU over the run (the whole of one that started during it), and
		// the sampler's (stats.ownCPU already), are left out.
		for pid, cpu := range after.ownBackends {
			stats.ownCPU += cpu - before.ownBackends[pid]
		}
		stats.serverCPU = after.serverCPU - before.serverCPU - stats.ownCPU
	}
	stats.machineCPU = after.machineCPU - before.machineCPU
	stats.benchCPU = after.benchCPU - before.benchCPU
}

// settle makes every run start alike: it vacuums the tables the runs write
// and checkpoints, so that no timed checkpoint falls in the run (the
// checkpoint interval counts from here) and every run pays the full-page
// writes of the pages it first touches.
func (b *bench) settle(ctx context.Context) error {
	for _, sql := range []string{
		"delete from public.river_job where kind = 'bench_noop' and state = 'completed'",
		"vacuum analyze public.river_job",
		"vacuum analyze geneva.workflows",
		"vacuum analyze geneva.step_executions",
		"checkpoint",
	} {
		if _, err := b.pool.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// measure runs work with a child worker of the given configuration, which it
// starts and stops, and measures it. work returns how many steps or jobs it
// saw done and in how long.
func (b *bench) measure(ctx context.Context, config childConfig, work func(context.Context) (int, time.Duration, error)) (runStats, error) {
	var stats runStats
	if err := b.settle(ctx); err != nil {
		return stats, err
	}
	before, err := b.readCounters(ctx)
	if err != nil {
		return stats, err
	}
	worker, err := startChild(config)
	if err != nil {
		return stats, err
	}
	s, err := b.startSampler(ctx)
	if err != nil {
		_, _, _ = worker.stop()
		return stats, err
	}
	stats.units, stats.elapsed, err = work(ctx)
	s.stop(&stats)
	rss, cpu, stopErr := worker.stop()
	if err == nil {
		err = stopErr
	}
	if err != nil {
		return stats, err
	}
	stats.rss, stats.workerCPU = rss, cpu
	// The worker's backends report their commits as they exit.
	if err := b.waitBackendsGone(ctx); err != nil {
		return stats, err
	}
	after, err := b.readCounters(ctx)
	if err != nil {
		return stats, err
	}
	after.since(before, &stats)
	return stats, nil
}

// waitBackendsGone waits until the worker's and the sampler's backends have
// exited (and been reaped, so that their CPU time is counted).
func (b *bench) waitBackendsGone(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left int
		err := b.polls.QueryRow(ctx, `select count(*) from pg_stat_activity where application_name in ($1, $2)`,
			workerApplication, samplerApplication).Scan(&left)
		if err != nil {
			return err
		}
		b.ownPolls.Add(1)
		if left == 0 {
			time.Sleep(50 * time.Millisecond)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d worker backends still there 10s after the worker stopped", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sampler reads the wait events of the worker's active backends every tick.
type sampler struct {
	conn     *pgx.Conn
	sameDB   bool
	server   int // the postmaster of the sampler's backend, when on this machine
	stopping chan struct{}
	done     chan struct{}

	mu     sync.Mutex
	counts map[string]int
	seen   int
	ticks  int
	err    error
}

// startSampler starts sampling on a connection of its own (to another
// database of the server when there is one, so that its queries are not
// counted as the run's commits). It samples nothing when -sample-every is 0.
func (b *bench) startSampler(ctx context.Context) (*sampler, error) {
	s := &sampler{counts: map[string]int{}, stopping: make(chan struct{}), done: make(chan struct{})}
	if b.o.sampleEvery <= 0 {
		close(s.done)
		return s, nil
	}
	url, sameDB := b.samplerURL, false
	if url == "" {
		url, sameDB = b.o.databaseURL, true
	}
	config, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	config.RuntimeParams["application_name"] = samplerApplication
	s.conn, err = pgx.ConnectConfig(ctx, config)
	if err != nil {
		return nil, err
	}
	s.sameDB, s.server = sameDB, b.postmasterPID
	go s.loop(ctx, b)
	return s, nil
}

func (s *sampler) loop(ctx context.Context, b *bench) {
	defer close(s.done)
	ticker := time.NewTicker(b.o.sampleEvery)
	defer ticker.Stop()
	var events []string
	for {
		select {
		case <-s.stopping:
			return
		case <-ticker.C:
		}
		events = events[:0]
		rows, err := s.conn.Query(ctx, `select coalesce(wait_event_type || ':' || wait_event, 'CPU (no wait event)')
			from pg_stat_activity where application_name = $1 and state = 'active'`, workerApplication)
		if err == nil {
			events, err = pgx.AppendRows(events, rows, pgx.RowTo[string])
		}
		if s.sameDB {
			b.ownPolls.Add(1)
		}
		s.mu.Lock()
		if err != nil {
			s.err = err
			s.mu.Unlock()
			return
		}
		s.ticks++
		s.seen += len(events)
		for _, event := range events {
			s.counts[event]++
		}
		s.mu.Unlock()
	}
}

// stop ends the sampling and records the top five wait events.
func (s *sampler) stop(stats *runStats) {
	if s.conn == nil {
		return
	}
	close(s.stopping)
	<-s.done
	// The sampler's backend is the benchmark's, not the run's: its CPU is
	// left out of PostgreSQL's (runStats.ownCPU), read before it exits.
	if f, ok := procStat(int(s.conn.PgConn().PID())); ok && s.server > 0 && f.ppid == s.server {
		stats.ownCPU += f.cpu()
	}
	_ = s.conn.Close(context.Background())
	if s.err != nil {
		fmt.Fprintln(os.Stderr, "geneva-bench: sampling wait events:", s.err)
	}
	stats.seen, stats.ticks = s.seen, s.ticks
	for event, n := range s.counts {
		stats.waits = append(stats.waits, waitShare{event: event, share: float64(n) / float64(s.seen)})
	}
	sortWaits(stats.waits)
	if len(stats.waits) > 5 {
		stats.waits = stats.waits[:5]
	}
}

// topWaits formats the top wait events.
func (s runStats) topWaits() string {
	if len(s.waits) == 0 {
		return "—"
	}
	parts := make([]string, len(s.waits))
	for i, w := range s.waits {
		parts[i] = fmt.Sprintf("%s %.0f%%", w.event, 100*w.share)
	}
	return strings.Join(parts, ", ")
}

// mergeRuns pools runs of one kind into one: their steps, times, counters
// and CPU added (so its rate is all their steps over all their time, and
// its figures per step are weighted by steps), their wait events weighted
// by the backends sampled, the largest peak memory.
func mergeRuns(runs ...runStats) runStats {
	var (
		m      runStats
		events = map[string]float64{}
	)
	for _, s := range runs {
		m.units += s.units
		m.elapsed += s.elapsed
		m.window += s.window
		m.commits += s.commits
		m.walBytes += s.walBytes
		m.walSyncs += s.walSyncs
		m.walFPIs += s.walFPIs
		m.syncTime += s.syncTime
		m.workerCPU += s.workerCPU
		m.ownCPU += s.ownCPU
		m.benchCPU += s.benchCPU
		m.machineCPU += s.machineCPU
		m.rss = max(m.rss, s.rss)
		m.seen += s.seen
		m.ticks += s.ticks
		for _, w := range s.waits {
			events[w.event] += w.share * float64(s.seen)
		}
	}
	// PostgreSQL's CPU only when every run saw it
	for _, s := range runs {
		if s.serverCPU <= 0 {
			m.serverCPU = 0
			break
		}
		m.serverCPU += s.serverCPU
	}
	for event, n := range events {
		m.waits = append(m.waits, waitShare{event: event, share: n / float64(max(m.seen, 1))})
	}
	sortWaits(m.waits)
	if len(m.waits) > 5 {
		m.waits = m.waits[:5]
	}
	return m
}

// sortWaits sorts wait events by share, most first.
func sortWaits(waits []waitShare) {
	slices.SortFunc(waits, func(a, b waitShare) int {
		if a.share != b.share {
			if a.share > b.share {
				return -1
			}
			return 1
		}
		return strings.Compare(a.event, b.event)
	})
}
