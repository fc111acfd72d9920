// Command withpg runs a command with a throwaway PostgreSQL server: it starts
// one (see package pgtemp), runs the command with TEST_DATABASE_URL and
// DATABASE_URL set to it, stops it, and exits with the command's status.
//
//	go run ./internal/cmd/withpg -- go test ./...
//
// `make test` and `make demo` use it when no database URL is given.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/geneva-dev/geneva/internal/pgtemp"
)

func main() {
	os.Exit(run())
}

func run() int {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: withpg [--] command [args...]")
		return 2
	}

	srv, err := pgtemp.Start(context.Background(), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "withpg:", err)
		return 1
	}
	defer srv.Stop()

	// Ctrl-C reaches the command (same process group); withpg waits for it to
	// end and then stops the server.
	signal.Ignore(syscall.SIGINT)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM)

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "TEST_DATABASE_URL="+srv.URL("postgres"), "DATABASE_URL="+srv.URL("postgres"))
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "withpg:", err)
		return 1
	}
	go func() {
		for sig := range signals {
			_ = cmd.Process.Signal(sig)
		}
	}()

	err = cmd.Wait()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exitErr) && exitErr.ExitCode() > 0:
		return exitErr.ExitCode()
	default:
		fmt.Fprintln(os.Stderr, "withpg:", err)
		return 1
	}
}
