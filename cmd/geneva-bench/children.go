package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/geneva-dev/geneva/worker"
)

// The benchmark runs the worker (Geneva's, or a plain River client) in a
// child process of its own, so that its memory can be measured and it
// competes for the two cores as a real deployment's worker would.

// benchWorkflow is the workflow of the throughput runs: steps no-op steps.
func benchWorkflow(steps int) *worker.Workflow { return noopWorkflow("Bench", steps, nil) }

// noopWorkflow is a workflow type of steps no-op steps.
func noopWorkflow(name string, steps int, opts *worker.WorkflowOpts) *worker.Workflow {
	wf := worker.NewWorkflow(name, opts)
	for range steps {
		wf.Step("", func(ctx context.Context, step *worker.Step) error { return nil }, nil)
	}
	return wf
}

// benchAwaitWorkflow is the workflow of the awaited-step runs: one no-op
// step that awaits the event "go" for up to an hour.
func benchAwaitWorkflow() *worker.Workflow {
	return worker.NewWorkflow("BenchAwait", nil).
		Step("await", func(ctx context.Context, step *worker.Step) error { return nil },
			&worker.StepOpts{Await: &worker.Await{Event: awaitEvent, Timeout: time.Hour}})
}

// noopArgs is the job of the raw River baseline.
type noopArgs struct{}

func (noopArgs) Kind() string { return "bench_noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
}

func (noopWorker) Work(ctx context.Context, job *river.Job[noopArgs]) error { return nil }

// childConfig is how a child worker runs.
type childConfig struct {
	mode          string // "geneva" or "river"
	databaseURL   string
	maxWorkers    int
	poolSize      int
	steps         int
	fetchCooldown time.Duration
	// fetchPollInterval is River's FetchPollInterval (0: the larger of
	// fetchCooldown and 10ms).
	fetchPollInterval time.Duration
	inlineSteps       int
	// completeBatch, when not zero, forces the worker's completer batch size
	// (GENEVA_COMPLETE_BATCH_SIZE); 1 records every step's end alone.
	completeBatch int
	// await has a Geneva worker run BenchAwait besides Bench.
	await bool
	// limits has a Geneva worker run the limit runs' types besides Bench
	// (limitWorkflows).
	limits bool
	// http has a Geneva worker run HTTP steps too (worker.HTTPConfig).
	http bool
	// fanout has a Geneva worker run the fan-out runs' types besides Bench
	// (fanoutWorkflows).
	fanout bool
}

func (c childConfig) args() []string {
	return []string{
		"-child", c.mode,
		"-database-url", c.databaseURL,
		"-workers", fmt.Sprint(c.maxWorkers),
		"-pool", fmt.Sprint(c.poolSize),
		"-steps", fmt.Sprint(c.steps),
		"-fetch-cooldown", c.fetchCooldown.String(),
		"-inline-steps", fmt.Sprint(c.inlineSteps),
		"-fetch-poll-interval", c.fetchPollInterval.String(),
		fmt.Sprintf("-child-await=%t", c.await),
		fmt.Sprintf("-child-limits=%t", c.limits),
		fmt.Sprintf("-child-http=%t", c.http),
		fmt.Sprintf("-child-fanout=%t", c.fanout),
	}
}

// runChild is the child process: it starts the worker, says "ready", and runs
// until SIGTERM.
func runChild(config childConfig) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	poolConfig, err := pgxpool.ParseConfig(config.databaseURL)
	if err != nil {
		return err
	}
	poolConfig.MaxConns = int32(config.poolSize)
	poolConfig.ConnConfig.RuntimeParams["application_name"] = workerApplication
	pool, err := pgxpool.NewWithConfig(ctx, poolConfig)
	if err != nil {
		return err
	}
	defer pool.Close()

	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	pollInterval := config.fetchPollInterval
	if pollInterval <= 0 {
		pollInterval = max(config.fetchCooldown, 10*time.Millisecond)
	}
	riverConfig := &river.Config{
		FetchCooldown:     config.fetchCooldown,
		FetchPollInterval: pollInterval,
		Logger:            quiet,
	}

	var (
		start func(context.Context) error
		halt  func(context.Context) error
	)
	switch config.mode {
	case "geneva":
		workflows := []*worker.Workflow{benchWorkflow(config.steps)}
		if config.await {
			workflows = append(workflows, benchAwaitWorkflow())
		}
		if config.limits {
			workflows = append(workflows, limitWorkflows(config.steps)...)
		}
		if config.fanout {
			workflows = append(workflows, fanoutWorkflows()...)
		}
		workerConfig := &worker.Config{
			Workflows:    workflows,
			MaxWorkers:   config.maxWorkers,
			InlineSteps:  config.inlineSteps,
			Logger:       quiet,
			River:        riverConfig,
			Housekeeping: worker.HousekeepingConfig{Disabled: true},
		}
		if config.http {
			// (the endpoint is on the loopback address: httpEndpoint)
			workerConfig.HTTP = &worker.HTTPConfig{Secret: []byte("bench"), AllowHosts: []string{"127.0.0.1"}}
		}
		w, err := worker.New(pool, workerConfig)
		if err != nil {
			return err
		}
		start, halt = w.Start, w.Stop
	case "river":
		workers := river.NewWorkers()
		river.AddWorker(workers, noopWorker{})
		riverConfig.Workers = workers
		riverConfig.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: config.maxWorkers}}
		client, err := river.NewClient[pgx.Tx](riverpgxv5.New(pool), riverConfig)
		if err != nil {
			return err
		}
		start, halt = client.Start, client.Stop
	default:
		return fmt.Errorf("unknown child mode %q", config.mode)
	}

	if err := start(ctx); err != nil {
		return err
	}
	fmt.Println("ready")
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return halt(stopCtx)
}

// child is a running child process.
type child struct {
	cmd *exec.Cmd
}

// startChild starts a child process and waits until its worker runs.
func startChild(config childConfig) (*child, error) {
	cmd := exec.Command(os.Args[0], config.args()...)
	cmd.Stderr = os.Stderr
	if config.completeBatch > 0 {
		cmd.Env = append(os.Environ(), fmt.Sprintf("GENEVA_COMPLETE_BATCH_SIZE=%d", config.completeBatch))
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("the %s worker did not start: %q %w", config.mode, line, err)
	}
	go io.Copy(io.Discard, stdout) //nolint:errcheck // drains the rest
	return &child{cmd: cmd}, nil
}

// stop stops the child and returns its peak resident memory in bytes and the
// CPU time it used.
func (c *child) stop() (rss int64, cpu time.Duration, err error) {
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, 0, err
	}
	if err := c.cmd.Wait(); err != nil {
		return 0, 0, err
	}
	usage, ok := c.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, nil
	}
	cpu = time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
	return usage.Maxrss * 1024, cpu, nil // Maxrss is in kilobytes on Linux
}

// machineCPU returns the CPU time all processes have used so far, from
// /proc/stat (zero where it cannot be read).
func machineCPU() time.Duration {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(stat), "\n")
	fields := strings.Fields(line)
	var ticks int64
	// user, nice, system, idle, iowait, irq, softirq: all but idle and
	// iowait (steal is not ours, and guest time is counted in user).
	for i, field := range fields[1:min(len(fields), 8)] {
		if i == 3 || i == 4 {
			continue
		}
		n, _ := strconv.ParseInt(field, 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ is 100
}

// ownCPU is the CPU time this process has used so far.
func ownCPU() time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}
