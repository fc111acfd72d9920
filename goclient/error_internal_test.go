package goclient

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

func TestMapError(t *testing.T) {
	t.Parallel()

	for _, c := range []struct {
		name string
		err  *pgconn.PgError
		want error // nil: left as it is
	}{
		{"NotFound", &pgconn.PgError{Code: "P0002"}, ErrNotFound},
		{"InvalidArgument", &pgconn.PgError{Code: "22023"}, ErrInvalidArgument},
		{"NullArgument", &pgconn.PgError{Code: "22004"}, ErrInvalidArgument},
		{"IllegalTransition", &pgconn.PgError{Code: "55000"}, ErrIllegalTransition},
		{"UnknownWorkflowType", &pgconn.PgError{Code: CodeUnknownWorkflowType}, ErrUnknownWorkflowType},
		{"DuplicateWorkflow", &pgconn.PgError{Code: "23505", ConstraintName: "workflows_one_ongoing_per_hero"}, ErrDuplicateWorkflow},
		{"OtherUniqueViolation", &pgconn.PgError{Code: "23505", ConstraintName: "accounts_pkey"}, nil},
		{"Other", &pgconn.PgError{Code: "40001"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := mapError(c.err)
			if c.want == nil {
				require.Same(t, c.err, err)
				return
			}
			require.ErrorIs(t, err, c.want)
			var pgErr *pgconn.PgError
			require.True(t, errors.As(err, &pgErr))
			require.Same(t, c.err, pgErr)
		})
	}
}
