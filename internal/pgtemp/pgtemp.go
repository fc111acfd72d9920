// Package pgtemp starts a throwaway PostgreSQL server: a new cluster in a
// temporary directory (initdb, then pg_ctl), listening on a free port of
// 127.0.0.1, tuned for tests (fsync off), and removed when stopped.
//
// It is what `make test`, `make demo` and the geneva binary use when no
// database URL is given, so a machine with PostgreSQL installed needs nothing
// else. PostgreSQL refuses to run as root; run as root, pgtemp runs the server
// as the "postgres" user.
package pgtemp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Server is a running throwaway PostgreSQL server.
type Server struct {
	binDir  string
	dir     string
	port    int
	runAs   *syscall.Credential
	stopped bool
	halted  bool
}

// Options are options for Start.
type Options struct {
	// Settings are extra server settings (name → value), e.g. "max_wal_size".
	//
	// Defaults to none beyond pgtemp's own (fsync, synchronous_commit and
	// full_page_writes off; max_connections 400).
	Settings map[string]string
}

// Start creates and starts a new cluster. Stop it with Stop.
func Start(ctx context.Context, opts *Options) (*Server, error) {
	if opts == nil {
		opts = &Options{}
	}

	binDir, err := findBinDir()
	if err != nil {
		return nil, err
	}

	srv := &Server{binDir: binDir}

	if os.Geteuid() == 0 {
		pgUser, err := user.Lookup("postgres")
		if err != nil {
			return nil, errors.New("pgtemp: PostgreSQL cannot run as root and there is no \"postgres\" user to run it as; run as another user or give a database URL")
		}
		uid, _ := strconv.ParseUint(pgUser.Uid, 10, 32)
		gid, _ := strconv.ParseUint(pgUser.Gid, 10, 32)
		srv.runAs = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}

	srv.dir, err = os.MkdirTemp("", "geneva-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtemp: %w", err)
	}
	if srv.runAs != nil {
		if err := os.Chown(srv.dir, int(srv.runAs.Uid), int(srv.runAs.Gid)); err != nil {
			srv.removeDir()
			return nil, fmt.Errorf("pgtemp: %w", err)
		}
	}

	if err := srv.run(ctx, "initdb", "--pgdata", srv.dataDir(), "--username", "postgres",
		"--auth", "trust", "--encoding", "UTF8", "--no-locale", "--no-sync"); err != nil {
		srv.removeDir()
		return nil, err
	}

	settings := map[string]string{
		"listen_addresses":        "127.0.0.1",
		"unix_socket_directories": srv.dir,
		"fsync":                   "off",
		"synchronous_commit":      "off",
		"full_page_writes":        "off",
		"max_connections":         "400",
	}
	for name, value := range opts.Settings {
		settings[name] = value
	}

	// A port can be taken between choosing and binding it; try a few.
	for attempt := 0; ; attempt++ {
		srv.port, err = freePort()
		if err != nil {
			srv.removeDir()
			return nil, err
		}
		settings["port"] = strconv.Itoa(srv.port)
		if err = srv.writeSettings(settings); err != nil {
			srv.removeDir()
			return nil, err
		}
		err = srv.run(ctx, "pg_ctl", "--pgdata", srv.dataDir(), "--log", srv.logFile(),
			"--wait", "--timeout", "60", "start")
		if err == nil {
			return srv, nil
		}
		if attempt == 2 {
			log, _ := os.ReadFile(srv.logFile())
			srv.removeDir()
			return nil, fmt.Errorf("%w\nserver log:\n%s", err, log)
		}
	}
}

// URL returns a libpq URL for database (e.g. "postgres") as the superuser
// "postgres".
func (s *Server) URL(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, database)
}

// Stop stops the server at once and removes its directory.
func (s *Server) Stop() error {
	if s.stopped {
		return nil
	}
	s.stopped = true
	var err error
	if !s.halted {
		err = s.run(context.Background(), "pg_ctl", "--pgdata", s.dataDir(), "--mode", "immediate", "--wait", "stop")
	}
	s.removeDir()
	return err
}

// Halt stops the server at once, as a crash would (every connection is cut),
// and keeps its cluster for Resume: an outage, for tests of what survives one.
func (s *Server) Halt(ctx context.Context) error {
	if s.stopped || s.halted {
		return errors.New("pgtemp: the server is not running")
	}
	if err := s.run(ctx, "pg_ctl", "--pgdata", s.dataDir(), "--mode", "immediate", "--wait", "stop"); err != nil {
		return err
	}
	s.halted = true
	return nil
}

// Resume starts a halted server again, on the same port, and waits until it
// accepts connections.
func (s *Server) Resume(ctx context.Context) error {
	if s.stopped || !s.halted {
		return errors.New("pgtemp: the server is not halted")
	}
	if err := s.run(ctx, "pg_ctl", "--pgdata", s.dataDir(), "--log", s.logFile(),
		"--wait", "--timeout", "60", "start"); err != nil {
		return err
	}
	s.halted = false
	return nil
}

func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }
func (s *Server) logFile() string { return filepath.Join(s.dir, "server.log") }

func (s *Server) removeDir() { _ = os.RemoveAll(s.dir) }

// writeSettings writes postgresql.auto.conf, which the server reads last.
func (s *Server) writeSettings(settings map[string]string) error {
	names := make([]string, 0, len(settings))
	for name := range settings {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		fmt.Fprintf(&b, "%s = '%s'\n", name, strings.ReplaceAll(settings[name], "'", "''"))
	}
	path := filepath.Join(s.dataDir(), "postgresql.auto.conf")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("pgtemp: %w", err)
	}
	if s.runAs != nil {
		if err := os.Chown(path, int(s.runAs.Uid), int(s.runAs.Gid)); err != nil {
			return fmt.Errorf("pgtemp: %w", err)
		}
	}
	return nil
}

func (s *Server) run(ctx context.Context, program string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(s.binDir, program), args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.Dir = s.dir
	// The server must not die with the terminal's Ctrl-C before Stop runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.runAs}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pgtemp: %s: %w\n%s", program, err, out.String())
	}
	return nil
}

// Program returns the path of one of PostgreSQL's programs (psql, pg_dump,
// ...): on the PATH, else beside the server's binaries.
func Program(name string) (string, error) {
	if path, err := exec.LookPath(name); err == nil {
		return path, nil
	}
	dir, err := findBinDir()
	if err != nil {
		return "", err
	}
	if path := filepath.Join(dir, name); isFile(path) {
		return path, nil
	}
	return "", fmt.Errorf("pgtemp: %s is neither on the PATH nor in %s", name, dir)
}

// findBinDir finds the directory of initdb and pg_ctl: where initdb on the
// PATH really is (Debian links it from /usr/local/bin), from pg_config, or in
// the usual places of Debian, Red Hat and Homebrew packages (newest version
// first).
func findBinDir() (string, error) {
	if path, err := exec.LookPath("initdb"); err == nil {
		if resolved, err := filepath.EvalSymlinks(path); err == nil {
			path = resolved
		}
		return filepath.Dir(path), nil
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := strings.TrimSpace(string(out))
		if isFile(filepath.Join(dir, "initdb")) {
			return dir, nil
		}
	}
	var candidates []string
	for _, pattern := range []string{
		"/usr/lib/postgresql/*/bin",
		"/usr/pgsql-*/bin",
		"/opt/homebrew/opt/postgresql@*/bin",
		"/usr/local/opt/postgresql@*/bin",
		"/usr/local/pgsql/bin",
	} {
		matches, _ := filepath.Glob(pattern)
		candidates = append(candidates, matches...)
	}
	sort.Slice(candidates, func(i, j int) bool { return versionOf(candidates[i]) > versionOf(candidates[j]) })
	for _, dir := range candidates {
		if isFile(filepath.Join(dir, "initdb")) {
			return dir, nil
		}
	}
	return "", errors.New("pgtemp: cannot find PostgreSQL's initdb (not on the PATH, not from pg_config, not in /usr/lib/postgresql/*/bin); install PostgreSQL or give a database URL")
}

// versionOf reads the major version in a path such as /usr/lib/postgresql/15/bin.
func versionOf(dir string) int {
	for _, part := range strings.FieldsFunc(dir, func(r rune) bool { return r == '/' || r == '@' || r == '-' }) {
		if n, err := strconv.Atoi(part); err == nil {
			return n
		}
	}
	return 0
}

func isFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir()
}

func freePort() (int, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtemp: finding a free port: %w", err)
	}
	defer listener.Close()
	return listener.Addr().(*net.TCPAddr).Port, nil
}
