package sqlerr_test

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/sqlerr"
)

func TestMap(t *testing.T) {
	t.Parallel()

	duplicate := &pgconn.PgError{Code: "23505", ConstraintName: "workflows_one_ongoing_per_hero",
		Message: "hero User 7 already has an ongoing Two workflow"}

	t.Run("MapsEachCodeToItsSentinel", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			name string
			err  *pgconn.PgError
			want error // nil: left as it is
		}{
			{"NotFound", &pgconn.PgError{Code: "P0002"}, sqlerr.ErrNotFound},
			{"InvalidArgument", &pgconn.PgError{Code: "22023"}, sqlerr.ErrInvalidArgument},
			{"NullArgument", &pgconn.PgError{Code: "22004"}, sqlerr.ErrInvalidArgument},
			{"TooLong", &pgconn.PgError{Code: "22001"}, sqlerr.ErrInvalidArgument},
			{"IllegalTransition", &pgconn.PgError{Code: "55000"}, sqlerr.ErrIllegalTransition},
			{"UnknownWorkflowType", &pgconn.PgError{Code: sqlerr.CodeUnknownWorkflowType}, sqlerr.ErrUnknownWorkflowType},
			{"DuplicateWorkflow", duplicate, sqlerr.ErrDuplicateWorkflow},
			{"OtherUniqueViolation", &pgconn.PgError{Code: "23505", ConstraintName: "accounts_pkey"}, nil},
			{"Other", &pgconn.PgError{Code: "40001"}, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				err := sqlerr.Map(c.err)
				if c.want == nil {
					require.Same(t, c.err, err)
					return
				}
				require.ErrorIs(t, err, c.want)
				var pgErr *pgconn.PgError
				require.ErrorAs(t, err, &pgErr)
				require.Same(t, c.err, pgErr)
			})
		}
	})

	t.Run("LeavesOtherErrorsAlone", func(t *testing.T) {
		t.Parallel()
		other := errors.New("connection refused")
		require.Same(t, other, sqlerr.Map(other))
		require.NoError(t, sqlerr.Map(nil))
	})

	t.Run("SeesThroughWrapping", func(t *testing.T) {
		t.Parallel()
		pgErr := &pgconn.PgError{Code: "P0002", Message: "workflow 404 not found"}
		err := sqlerr.Map(errors.Join(errors.New("scan"), pgErr))
		var mapped *sqlerr.Error
		require.ErrorAs(t, err, &mapped)
		require.Equal(t, sqlerr.Error{Kind: sqlerr.ErrNotFound, PgError: pgErr}, *mapped)
		require.EqualError(t, err, "geneva: workflow 404 not found")
	})

	// One type per condition: a duplicate is a *DuplicateWorkflowError from
	// either function, never an *Error; MapCreate names the workflow.
	t.Run("DuplicateIsADuplicateWorkflowError", func(t *testing.T) {
		t.Parallel()
		var mapped *sqlerr.Error
		require.False(t, errors.As(sqlerr.Map(duplicate), &mapped))

		var named *sqlerr.DuplicateWorkflowError
		require.ErrorAs(t, sqlerr.MapCreate(duplicate, "Two", "User", "7"), &named)
		require.Equal(t, sqlerr.DuplicateWorkflowError{WorkflowType: "Two", HeroType: "User", HeroID: "7", PgError: duplicate}, *named)

		var unnamed *sqlerr.DuplicateWorkflowError
		require.ErrorAs(t, sqlerr.Map(duplicate), &unnamed)
		require.Empty(t, unnamed.HeroID)
		for _, err := range []error{named, unnamed} { // the names, or SQL's message naming them
			require.EqualError(t, err, "geneva: hero User 7 already has an ongoing Two workflow")
		}
	})
}
