// Package pgtemp starts a throwaway PostgreSQL server: a new cluster in a
// temporary directory (initdb, then pg_ctl), listening on a free port of
// 127.0.0.1, tuned for tests (fsync off), and removed when stopped.
//
// A server can have hot standbys (StartStandby: pg_basebackup, streaming
// replication), be killed as the loss of its machine would kill it (Kill),
// and a standby promoted in its place (Promote): the failover tests' pair.
// fsync off loses nothing when processes die, only when the machine does.
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
	binDir   string
	dir      string
	port     int
	runAs    *syscall.Credential
	settings map[string]string // postgresql.auto.conf's
	stopped  bool
	halted   bool
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
	srv, err := newServer()
	if err != nil {
		return nil, err
	}
	if err := srv.run(ctx, "initdb", "--pgdata", srv.dataDir(), "--username", "postgres",
		"--auth", "trust", "--encoding", "UTF8", "--no-locale", "--no-sync"); err != nil {
		srv.removeDir()
		return nil, err
	}
	if err := srv.start(ctx, opts.Settings); err != nil {
		return nil, err
	}
	return srv, nil
}

// newServer finds PostgreSQL's programs, the user to run them as, and makes
// the server's directory.
func newServer() (*Server, error) {
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
	if err := srv.chown(srv.dir); err != nil {
		srv.removeDir()
		return nil, err
	}
	return srv, nil
}

// start writes pgtemp's settings and extra, and starts the server on a free
// port; it removes the directory when it cannot.
func (srv *Server) start(ctx context.Context, extra map[string]string) error {
	settings := map[string]string{
		"listen_addresses":        "127.0.0.1",
		"unix_socket_directories": srv.dir,
		"fsync":                   "off",
		"synchronous_commit":      "off",
		"full_page_writes":        "off",
		"max_connections":         "400",
	}
	for name, value := range extra {
		settings[name] = value
	}
	srv.settings = settings

	// A port can be taken between choosing and binding it; try a few.
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			srv.removeDir()
			return err
		}
		srv.port = port
		settings["port"] = strconv.Itoa(port)
		if err = srv.writeSettings(); err != nil {
			srv.removeDir()
			return err
		}
		err = srv.run(ctx, "pg_ctl", "--pgdata", srv.dataDir(), "--log", srv.logFile(),
			"--wait", "--timeout", "60", "start")
		if err == nil {
			return nil
		}
		if attempt == 2 {
			log, _ := os.ReadFile(srv.logFile())
			srv.removeDir()
			return fmt.Errorf("%w\nserver log:\n%s", err, log)
		}
	}
}

// URL returns a libpq URL for database (e.g. "postgres") as the superuser
// "postgres".
func (s *Server) URL(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, database)
}

// Port returns the port the server listens on, at 127.0.0.1.
func (s *Server) Port() int { return s.port }

// MultiHostURL returns a libpq URL for database as user (a role that needs
// no password) on every server, for a session that can write: a client
// tries the hosts in turn and keeps the first that is not a standby
// (target_session_attrs=read-write), so it finds the primary wherever a
// failover put it.
func MultiHostURL(user, database string, servers ...*Server) string {
	hosts := make([]string, len(servers))
	for i, srv := range servers {
		hosts[i] = fmt.Sprintf("127.0.0.1:%d", srv.port)
	}
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable&target_session_attrs=read-write",
		user, strings.Join(hosts, ","), database)
}

// StartStandby makes a hot standby of s and starts it: a base backup of s
// (pg_basebackup) in a directory of its own, on a free port, streaming s's
// WAL under the application name name (which s's synchronous_standby_names
// may name; see Reconfigure). opts.Settings are its settings beyond
// pgtemp's own, as for Start. Stop it with Stop.
func (s *Server) StartStandby(ctx context.Context, name string, opts *Options) (*Server, error) {
	if opts == nil {
		opts = &Options{}
	}
	standby, err := newServer()
	if err != nil {
		return nil, err
	}
	if err := standby.run(ctx, "pg_basebackup", "--pgdata", standby.dataDir(), "--host", "127.0.0.1",
		"--port", strconv.Itoa(s.port), "--username", "postgres", "--checkpoint", "fast", "--no-sync"); err != nil {
		standby.removeDir()
		return nil, err
	}
	// the primary's own settings (its port, its directory) stay behind:
	// start writes the standby's over them
	if err := standby.writeFile(filepath.Join(standby.dataDir(), "standby.signal"), ""); err != nil {
		standby.removeDir()
		return nil, err
	}
	settings := map[string]string{
		"primary_conninfo": fmt.Sprintf("host=127.0.0.1 port=%d user=postgres application_name=%s", s.port, name),
	}
	for name, value := range opts.Settings {
		settings[name] = value
	}
	if err := standby.start(ctx, settings); err != nil {
		return nil, err
	}
	return standby, nil
}

// Reconfigure changes the server's settings (name → value; an empty value
// removes pgtemp's or an earlier one) and reloads them, for the settings a
// reload changes (synchronous_standby_names, synchronous_commit,
// primary_conninfo, ...).
func (s *Server) Reconfigure(ctx context.Context, settings map[string]string) error {
	for name, value := range settings {
		if value == "" {
			delete(s.settings, name)
		} else {
			s.settings[name] = value
		}
	}
	if err := s.writeSettings(); err != nil {
		return err
	}
	return s.run(ctx, "pg_ctl", "--pgdata", s.dataDir(), "reload")
}

// Log returns the server's log so far.
func (s *Server) Log() string {
	log, err := os.ReadFile(s.logFile())
	if err != nil {
		return err.Error()
	}
	return string(log)
}

// Promote makes a standby the primary (pg_ctl promote) and waits until it
// accepts writes.
func (s *Server) Promote(ctx context.Context) error {
	return s.run(ctx, "pg_ctl", "--pgdata", s.dataDir(), "--wait", "--timeout", "60", "promote")
}

// Kill kills every process of the server at once with SIGKILL, as the loss
// of its machine would (no shutdown, no last WAL sent to its standbys; on
// loopback its clients' connections are reset rather than left hanging). Stop
// then only removes its directory. The postmaster's children are found in
// Linux's /proc; elsewhere only the postmaster is killed, and its children
// exit when they notice.
func (s *Server) Kill() error {
	if s.stopped || s.halted {
		return errors.New("pgtemp: the server is not running")
	}
	pidFile, err := os.ReadFile(filepath.Join(s.dataDir(), "postmaster.pid"))
	if err != nil {
		return fmt.Errorf("pgtemp: %w", err)
	}
	line, _, _ := strings.Cut(string(pidFile), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return fmt.Errorf("pgtemp: postmaster.pid: %w", err)
	}
	// Stopped, the postmaster cannot start new processes or react to its
	// children's deaths; then they die, and it.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("pgtemp: stopping the postmaster: %w", err)
	}
	for _, child := range childrenOf(pid) {
		_ = syscall.Kill(child, syscall.SIGKILL)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("pgtemp: killing the postmaster: %w", err)
	}
	s.halted = true
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !alive(pid) && len(childrenOf(pid)) == 0 {
			return nil
		}
	}
	return fmt.Errorf("pgtemp: the server's processes (postmaster %d) outlived SIGKILL", pid)
}

// childrenOf lists the processes whose parent is pid (Linux's /proc).
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var children []int
	for _, entry := range entries {
		child, err := strconv.Atoi(entry.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", entry.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 1 && fields[0] != "Z" && fields[1] == strconv.Itoa(pid) {
			children = append(children, child)
		}
	}
	return children
}

// alive says whether process pid exists and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
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

// writeSettings writes s.settings to postgresql.auto.conf, which the server
// reads last.
func (s *Server) writeSettings() error {
	names := make([]string, 0, len(s.settings))
	for name := range s.settings {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		fmt.Fprintf(&b, "%s = '%s'\n", name, strings.ReplaceAll(s.settings[name], "'", "''"))
	}
	return s.writeFile(filepath.Join(s.dataDir(), "postgresql.auto.conf"), b.String())
}

// writeFile writes a file of the server's, owned by the user it runs as.
func (s *Server) writeFile(path, content string) error {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return fmt.Errorf("pgtemp: %w", err)
	}
	return s.chown(path)
}

// chown gives path to the user the server runs as, when it is not this
// process's.
func (s *Server) chown(path string) error {
	if s.runAs == nil {
		return nil
	}
	if err := os.Chown(path, int(s.runAs.Uid), int(s.runAs.Gid)); err != nil {
		return fmt.Errorf("pgtemp: %w", err)
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
