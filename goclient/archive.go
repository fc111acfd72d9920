package goclient

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// ArchivePartition is a history partition that has expired
// (geneva.archive_partitions, docs/history.md "Archive"): the partition of
// geneva.workflows_history Name, with its executions' and events' siblings.
type ArchivePartition struct {
	// Name is the workflows' table: workflows_history_20261128, or
	// workflows_history_20261128_1 when a detached one kept the day's name.
	Name string `db:"partition"`
	// LowerDay and UpperDay are its range of ended_on (UTC days, UpperDay
	// excluded); for a detached partition, UpperDay is the day after its
	// last workflow's end.
	LowerDay time.Time `db:"lower_day"`
	UpperDay time.Time `db:"upper_day"`
	// Attached is false for a partition housekeeping's retention detached
	// (archive = 'detach').
	Attached bool `db:"attached"`
	// Workflows is how many workflows it holds.
	Workflows int64 `db:"workflows"`
}

// ArchivePartitions lists the history partitions whose range ends on or
// before the day before (its date in UTC), attached or detached, oldest
// first: what `geneva archive --before` writes out and drops. It needs the
// operator role.
//
// Errors: ErrInvalidArgument for a day after the retention's horizon (history
// retention still keeps), or when the retention keeps ended workflows for
// ever.
func (c *Client) ArchivePartitions(ctx context.Context, before time.Time) ([]ArchivePartition, error) {
	rows, err := c.db.Query(ctx, "select * from geneva.archive_partitions($1::date)", before.UTC().Format(time.DateOnly))
	if err != nil {
		return nil, mapError(err)
	}
	partitions, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ArchivePartition])
	if err != nil {
		return nil, mapError(err)
	}
	return partitions, nil
}

// ArchiveLine is one workflow of a partition as a JSON line
// (geneva.archive_partition_rows): its workflow, ended_on, executions,
// events and the operators' actions naming it.
type ArchiveLine struct {
	WorkflowID int64
	Line       string
}

// ArchivePartitionRows returns a page of a partition's JSON lines, one a
// workflow in id order after afterID, at most limit (1 to 10000). Page on
// with the last WorkflowID until a page comes back short; read the pages in
// one repeatable-read transaction for one snapshot of the partition. It
// needs the operator role.
//
// Errors: ErrNotFound for a partition that is gone; ErrInvalidArgument for a
// name that is not a history partition's, a limit out of range.
func (c *Client) ArchivePartitionRows(ctx context.Context, partition string, afterID int64, limit int) ([]ArchiveLine, error) {
	rows, err := c.db.Query(ctx, "select workflow_id, line from geneva.archive_partition_rows($1, $2, $3)",
		partition, afterID, limit)
	if err != nil {
		return nil, mapError(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ArchiveLine])
	if err != nil {
		return nil, mapError(err)
	}
	return lines, nil
}

// DropArchivedPartition drops a partition once its archive is written and
// synced (geneva.drop_archived_partition): detached first when attached,
// then dropped with its siblings, if it holds the workflows the archive
// wrote. It returns false when the partition is gone already. It needs the
// operator role.
//
// Errors: ErrIllegalTransition when the partition holds another number of
// workflows (write it again); ErrInvalidArgument for a name that is not a
// history partition's, or one retention still keeps; a *pgconn.PgError of
// SQLSTATE 55P03 (lock_not_available) when a reader of history holds a lock
// on the history tables: the drop waits for no reader, nothing was dropped,
// call it again.
func (c *Client) DropArchivedPartition(ctx context.Context, partition string, workflows int64) (bool, error) {
	var dropped bool
	if err := c.db.QueryRow(ctx, "select geneva.drop_archived_partition($1, $2)", partition, workflows).Scan(&dropped); err != nil {
		return false, mapError(err)
	}
	return dropped, nil
}
