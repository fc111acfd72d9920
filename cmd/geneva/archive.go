package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/cobra"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/report"
)

// archivePage is how many workflows a read of a partition returns.
const archivePage = 1000

// archiveAfterWrite runs once a partition's file is written and synced,
// before its partition is dropped: tests stop there, as a crash would.
var archiveAfterWrite = func(partition string) error { return nil }

// archived is what geneva archive did with one partition (--json).
type archived struct {
	goclient.ArchivePartition
	// File is the archive written; Written, the workflows it holds.
	File    string `db:"file"`
	Written int64  `db:"written"`
	// Dropped is false when the partition was gone by the time of the drop,
	// or when Busy.
	Dropped bool `db:"dropped"`
	// Busy is true when readers of history held a lock on it: its file is
	// written, but the partition was not dropped (SQLSTATE 55P03; the next
	// run writes it again and drops it).
	Busy bool `db:"busy"`
}

func newArchiveCmd(opts *options) *cobra.Command {
	var (
		before string
		dir    string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "archive --before DATE --to DIR",
		Short: "Write expired history out as JSON lines, then drop it",
		Long: `Write each history partition whose range ends on or before DATE (a UTC day,
2006-01-02), attached or detached by housekeeping's retention (archive =
'detach'), to DIR as JSON lines, one file a partition
(DIR/workflows_2026-11-28.jsonl), one line a workflow with its executions,
events and the operators' actions naming it; then drop the partition, only
once its file is written and synced. DATE may not be after the retention's
horizon (now - retention): archive does not drop what retention keeps.

Run it again after a failure: a partition not yet dropped is written again
(its file replaced whole), one already dropped is not listed. The drop waits
for no reader of history: when one holds the history tables, the partition
is reported "not dropped" (its file is written), the others go on, and the
command exits with an error saying to run it again. A partition
that changed between the write and the drop is not dropped (its file is
written again by the next run). docs/history.md loads an archive back into a
table for inspection. Needs the operator role.`,
		Example: `  geneva archive --before 2026-10-29 --to /var/backups/geneva
  geneva archive --before 2026-10-29 --to ./archive --json`,
		Args: noArgs,
		RunE: withEnv(opts, func(ctx context.Context, env *environment, args []string) error {
			if before == "" || dir == "" {
				return usagef("archive takes --before DATE and --to DIR")
			}
			day, err := time.Parse(time.DateOnly, before)
			if err != nil {
				return usagef("--before takes a day as 2026-10-29, not %q", before)
			}
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return err
			}
			partitions, err := env.client.ArchivePartitions(ctx, day)
			if err != nil {
				return err
			}
			done := []archived{}
			busy := 0
			for _, partition := range partitions {
				result, err := archivePartition(ctx, env, dir, partition)
				if err != nil {
					return fmt.Errorf("archiving %s: %w", partition.Name, err)
				}
				done = append(done, result)
				if result.Busy {
					busy++
				}
				if !asJSON {
					state := "dropped"
					switch {
					case result.Busy:
						state = "not dropped: readers of history held it (run geneva archive again)"
					case !result.Dropped:
						state = "already gone"
					}
					env.printf("%s (%s to %s): %d workflows written to %s; %s\n", result.Name,
						result.LowerDay.Format(time.DateOnly), result.UpperDay.Format(time.DateOnly), result.Written, result.File, state)
				}
			}
			if asJSON {
				if err := report.JSON(env.stdout, done); err != nil {
					return err
				}
			} else if len(done) == 0 {
				env.printf("No history partitions end on or before %s.\n", before)
			}
			if busy > 0 {
				return fmt.Errorf("%d of %d partitions written but not dropped: readers of history held them "+
					"(the drop waits for no reader); run geneva archive again", busy, len(done))
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&before, "before", "", "archive the partitions whose range ends on or before this UTC day (2006-01-02)")
	cmd.Flags().StringVar(&dir, "to", "", "the directory to write the files to (made when missing)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts: each partition, its file, workflows written and whether it was dropped")
	return cmd
}

// archivePartition writes one partition to its file in dir (a temporary
// file, synced, renamed over any earlier one, the directory synced), then
// drops it if it still holds what the file holds.
func archivePartition(ctx context.Context, env *environment, dir string, partition goclient.ArchivePartition) (archived, error) {
	result := archived{ArchivePartition: partition}
	// workflows_history_20261128_1 → workflows_2026-11-28_1.jsonl
	suffix := strings.TrimPrefix(partition.Name, "workflows_history_")
	name := "workflows_" + suffix[:4] + "-" + suffix[4:6] + "-" + suffix[6:] + ".jsonl"
	result.File = filepath.Join(dir, name)

	file, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return result, err
	}
	defer os.Remove(file.Name()) // (gone once renamed)
	written, err := writePartition(ctx, env, file, partition.Name)
	if err == nil {
		err = file.Sync()
	}
	if closeErr := file.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return result, err
	}
	if err := os.Rename(file.Name(), result.File); err != nil {
		return result, err
	}
	if err := syncDir(dir); err != nil {
		return result, err
	}
	result.Written = written
	if err := archiveAfterWrite(partition.Name); err != nil {
		return result, err
	}

	result.Dropped, err = env.client.DropArchivedPartition(ctx, partition.Name, written)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.LockNotAvailable {
		// a reader held the history tables: the file stays, the next run
		// writes the partition again and drops it
		result.Busy = true
		return result, nil
	}
	return result, err
}

// writePartition writes a partition's JSON lines to file, a page at a time,
// all read in one repeatable-read transaction (one snapshot), and returns
// how many workflows it wrote.
func writePartition(ctx context.Context, env *environment, file *os.File, partition string) (int64, error) {
	tx, err := env.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read only: nothing to keep
	client := goclient.New(tx)
	var written, after int64
	for {
		lines, err := client.ArchivePartitionRows(ctx, partition, after, archivePage)
		if err != nil {
			return written, err
		}
		for _, line := range lines {
			if _, err := file.WriteString(line.Line + "\n"); err != nil {
				return written, err
			}
			after = line.WorkflowID
			written++
		}
		if len(lines) < archivePage {
			return written, nil
		}
	}
}

// syncDir syncs a directory, so that a file renamed into it stays there
// after a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if closeErr := d.Close(); err == nil {
		err = closeErr
	}
	return err
}
