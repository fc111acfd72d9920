package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Iterate runs fn for each item of items from where the cursor says, the
// index of the next item as the cursor: item i done sets the cursor to i+1.
// It returns what fn returns (ending early) and the *StopError of Set when
// the step must hand over; nil when every item is done.
//
// Only for a slice that is the same in every execution of the step (a fixed
// list, a sorted snapshot): the cursor is an index into it.
func Iterate[T any](ctx context.Context, it *Iteration, items []T, fn func(ctx context.Context, item T) error) error {
	var next int
	if _, err := it.Cursor(&next); err != nil {
		return err
	}
	if next < 0 {
		return fmt.Errorf("geneva: Iterate: negative cursor %d", next)
	}
	for i := next; i < len(items); i++ {
		if err := fn(ctx, items[i]); err != nil {
			return err
		}
		if err := it.Set(ctx, i+1); err != nil {
			return err
		}
	}
	return nil
}

// Querier runs a query: a *pgxpool.Pool, a *pgx.Conn or a pgx.Tx.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// QueryOpts are options for IterateQuery and IterateQueryBatches.
type QueryOpts struct {
	// Column is the cursor column: a column of the query's rows whose values
	// are unique, not null and ordered (a primary key, a serial, a
	// (created_at) that never ties). Rows are read in its order, and the
	// cursor is its value in the last row done.
	//
	// Defaults to "id".
	Column string

	// BatchSize is how many rows one query reads (and one batch holds).
	//
	// Defaults to 100.
	BatchSize int
}

// IterateQuery runs fn for each row of query (with args), in the order of the
// cursor column, from the row after the cursor: keyset pagination, one query
// per batch, each
//
//	select to_jsonb(q.<column>), q.* from (<query>) q
//	where q.<column> > $cursor order by q.<column> limit <batch size>
//
// Rows are scanned into T by column name (pgx.RowToStructByName: every column
// of the query needs a field). After each row the cursor becomes the row's
// column value (as JSON: 42, "2024-05-01T00:00:00+00:00", "a3f...").
// It returns what fn returns (ending early) and the *StopError of Set when
// the step must hand over; nil when no row is left.
//
// query must not have its own ORDER BY or LIMIT; it may filter and join:
//
//	type Subscriber struct {
//		ID    int64  `db:"id"`
//		Email string `db:"email"`
//	}
//	return worker.IterateQuery(ctx, it, pool,
//		"select id, email from subscribers where list_id = $1", []any{listID}, nil,
//		func(ctx context.Context, s Subscriber) error { return send(ctx, s) })
func IterateQuery[T any](ctx context.Context, it *Iteration, db Querier, query string, args []any, opts *QueryOpts, fn func(ctx context.Context, row T) error) error {
	return iterateQuery(ctx, it, db, query, args, opts, func(ctx context.Context, rows []T, cursors []json.RawMessage) error {
		for i, row := range rows {
			if err := fn(ctx, row); err != nil {
				return err
			}
			if err := it.Set(ctx, cursors[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// IterateQueryBatches is IterateQuery with a callback for a whole batch, for
// set-based work: insert or update a batch's rows in one statement. After each
// batch the cursor becomes the last row's column value (one iteration per
// batch, for MaxIterations).
//
//	return worker.IterateQueryBatches(ctx, it, pool,
//		"select id from subscribers", nil, &worker.QueryOpts{BatchSize: 500},
//		func(ctx context.Context, batch []SubscriberID) error {
//			_, err := pool.Exec(ctx, "insert into deliveries (subscriber_id) select unnest($1::bigint[])", ids(batch))
//			return err
//		})
func IterateQueryBatches[T any](ctx context.Context, it *Iteration, db Querier, query string, args []any, opts *QueryOpts, fn func(ctx context.Context, batch []T) error) error {
	return iterateQuery(ctx, it, db, query, args, opts, func(ctx context.Context, rows []T, cursors []json.RawMessage) error {
		if err := fn(ctx, rows); err != nil {
			return err
		}
		return it.Set(ctx, cursors[len(cursors)-1])
	})
}

// iterateQuery reads query's rows batch by batch after the cursor and gives
// each batch, with the cursor after each row, to each.
func iterateQuery[T any](ctx context.Context, it *Iteration, db Querier, query string, args []any, opts *QueryOpts, each func(ctx context.Context, rows []T, cursors []json.RawMessage) error) error {
	column, batchSize := "id", 100
	if opts != nil && opts.Column != "" {
		column = opts.Column
	}
	if opts != nil && opts.BatchSize != 0 {
		batchSize = opts.BatchSize
	}
	if batchSize < 0 {
		return fmt.Errorf("geneva: IterateQuery: negative BatchSize %d", batchSize)
	}
	col := "geneva_q." + pgx.Identifier{column}.Sanitize()
	first := fmt.Sprintf("select to_jsonb(%s) as geneva_cursor, geneva_q.* from (%s) as geneva_q order by %s limit %d",
		col, query, col, batchSize)
	after := fmt.Sprintf("select to_jsonb(%s) as geneva_cursor, geneva_q.* from (%s) as geneva_q where %s > $%d order by %s limit %d",
		col, query, col, len(args)+1, col, batchSize)

	cursor := it.RawCursor()
	for {
		var (
			rows pgx.Rows
			err  error
		)
		if cursor == nil {
			rows, err = db.Query(ctx, first, args...)
		} else {
			var value string
			if value, err = cursorParam(cursor); err != nil {
				return err
			}
			rows, err = db.Query(ctx, after, append(args[:len(args):len(args)], value)...)
		}
		if err != nil {
			return fmt.Errorf("geneva: IterateQuery: %w", err)
		}
		var cursors []json.RawMessage
		batch, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (T, error) {
			var raw []byte
			value, err := pgx.RowToStructByName[T](&cursorRow{row: row, cursor: &raw})
			cursors = append(cursors, json.RawMessage(raw))
			return value, err
		})
		if err != nil {
			return fmt.Errorf("geneva: IterateQuery: %w", err)
		}
		if len(batch) == 0 {
			return nil
		}
		if err := each(ctx, batch, cursors); err != nil {
			return err
		}
		if len(batch) < batchSize {
			return nil
		}
		cursor = cursors[len(cursors)-1]
	}
}

// cursorParam is a saved column value as the query's parameter: text that
// PostgreSQL reads as the column's type.
func cursorParam(cursor json.RawMessage) (string, error) {
	var value any
	decoder := json.NewDecoder(strings.NewReader(string(cursor)))
	decoder.UseNumber()
	if err := decoder.Decode(&value); err != nil {
		return "", fmt.Errorf("geneva: IterateQuery: decoding the cursor %s: %w", cursor, err)
	}
	switch v := value.(type) {
	case string:
		return v, nil
	case json.Number:
		return v.String(), nil
	case bool:
		return strconv.FormatBool(v), nil
	}
	return "", errors.New("geneva: IterateQuery: the cursor " + string(cursor) + " is not a column value (was it set by another loop?)")
}

// cursorRow is a row of IterateQuery's query without its first column
// (geneva_cursor), which Scan puts in cursor.
type cursorRow struct {
	row    pgx.CollectableRow
	cursor *[]byte
}

func (r *cursorRow) FieldDescriptions() []pgconn.FieldDescription {
	return r.row.FieldDescriptions()[1:]
}

func (r *cursorRow) Scan(dest ...any) error {
	return r.row.Scan(append([]any{r.cursor}, dest...)...)
}

func (r *cursorRow) Values() ([]any, error) {
	values, err := r.row.Values()
	if err != nil {
		return nil, err
	}
	return values[1:], nil
}

func (r *cursorRow) RawValues() [][]byte { return r.row.RawValues()[1:] }
