// Package dashboard is Geneva's web dashboard for operators: what runs, what
// is paused and why, what is stuck, what awaits an event, how long steps wait
// and run, and the operator's verbs (pause, resume, cancel, skip, run now,
// send an event; bulk resume and cancel of a filtered set).
//
// It is an http.Handler, so an application can mount it in its own server
// behind its own authentication, or `geneva dashboard` serves it:
//
//	handler, err := dashboard.New(pool, &dashboard.Config{Prefix: "/geneva"})
//	if err != nil {
//		return err
//	}
//	mux.Handle("/geneva/", requireAdmin(handler))
//
// # What it reads and calls
//
// The dashboard reads only Geneva's views (geneva.workflow_counts,
// paused_workflows, stuck_executions, step_stats, workflow_list, step_errors,
// definition_steps, definition_versions, step_throughput, queue_lag,
// awaiting_events, limit_usage, workflow_timeline, action_log) and public
// read functions (geneva.get_workflow, step_history, list_workflows and
// count_workflows, which read the one workflow filter bulk_workflows acts
// on), most of them through package goclient, and it acts only through
// goclient's methods of the SQL functions (pause_workflow, resume_workflow,
// cancel_workflow, skip_step, schedule_step, send_event, bulk_workflows), so
// it works with a role that holds geneva_reader (read only) or
// geneva_operator. The engine decides every transition; an action
// it refuses is shown as the sentence its error carries. Config.ReadPool
// sends the reads to a hot standby, the actions still to the primary.
//
// # Pages
//
// Every page has a stable URL (filters are query parameters) and refreshes
// its live part every few seconds with htmx, keeping the filter and the
// scroll position:
//
//	/                      overview: counts by type and state, steps ended per minute, queue lag
//	/workflows             list: state (or "ongoing"), type, hero, error class, created between; unfiltered, the paused first
//	/workflows/{id}        one workflow: fields, steps, timeline of executions (a step's cursor, the event it received)
//	/paused                paused workflows grouped by error class
//	/waiting               what awaits which event, since when, timeout in; Send event (a JSON payload)
//	/limits                limits in use per limit and key: in progress / concurrency, waiting, starts in the window / rate
//	/stuck                 what housekeeping would recover, with its thresholds
//	/definitions           every type's definition: version, defined when and by whom, what the type decides, each step and what it does (wait, await, limits, queue, endpoint, exception policies), earlier versions
//	/actions               the operators' actions (geneva.action_log): filters verb, operator, workflow, time; newest first, paged by id
//	/stats                 per type and step: outcomes, queue lag and run time
//
// # Safety
//
// Every state-changing request must be a POST that passes
// net/http.CrossOriginProtection and carries the dashboard's CSRF token.
// Config.ReadOnly hides and refuses every action. Config.Token and
// Config.BasicAuthUser protect the whole dashboard; without one of them,
// ListenAndServe refuses a non-loopback address and answers only to a
// loopback Host (against DNS rebinding). An application that mounts the
// handler without these credentials answers for both: its own authentication,
// or a server that only its operators reach and that checks the Host.
package dashboard

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/httpauth"
)

//go:embed all:assets all:templates
var files embed.FS

// Config configures the dashboard. A nil Config takes every default.
type Config struct {
	// BasicAuthUser and BasicAuthPassword, when BasicAuthUser is set, require
	// HTTP basic authentication with these credentials (or Token).
	//
	// Defaults to none.
	BasicAuthUser     string
	BasicAuthPassword string

	// BulkBatchSize is how many workflows a bulk action acts on per batch.
	//
	// Defaults to 100.
	BulkBatchSize int

	// BulkLimit is how many workflows one bulk request acts on at most, so
	// that a request ends in reasonable time; the result offers to go on
	// with the rest.
	//
	// Defaults to 10,000.
	BulkLimit int

	// CSRFKey derives the token every form carries. Give the same key to
	// every replica behind one address.
	//
	// Defaults to a random key per handler.
	CSRFKey []byte

	// Logger logs failed requests.
	//
	// Defaults to slog.Default().
	Logger *slog.Logger

	// Metrics, when set, is served at Prefix + "/metrics" (for example a
	// Prometheus handler of the engine's metrics).
	//
	// Defaults to nil: no /metrics.
	Metrics http.Handler

	// PageSize is how many workflows a list shows per page.
	//
	// Defaults to 50.
	PageSize int

	// ReadPool, when set, is the pool the pages read through: a pool on a
	// hot standby, so that operators' reading loads the primary less and
	// goes on while it fails over (give Metrics a handler on it too). The actions
	// still go through the pool given to New (the primary: a standby refuses
	// writes). A standby's pages lag the primary by its replication delay
	// (none for commits its primary waited for with synchronous_commit
	// remote_apply), so the page an action leads to may not show it yet.
	//
	// Defaults to the pool given to New.
	ReadPool *pgxpool.Pool

	// Prefix is the path the handler is mounted at, without a trailing
	// slash, e.g. "/geneva". The handler serves the paths under it, so mount
	// it with the prefix kept (not behind http.StripPrefix).
	//
	// Defaults to "" (the root).
	Prefix string

	// ReadOnly hides every action and refuses them with 403 Forbidden.
	//
	// Defaults to false.
	ReadOnly bool

	// RefreshInterval is how often the live parts of a page refresh
	// themselves. Negative disables refreshing.
	//
	// Defaults to 5 seconds.
	RefreshInterval time.Duration

	// Token, when set, is required as "Authorization: Bearer TOKEN", or once
	// as ?token=TOKEN, which sets a cookie for the rest of the visit (or
	// basic authentication, when configured).
	//
	// Defaults to none.
	Token string

	// TrustedOrigins are origins (scheme://host[:port]) allowed to send
	// state-changing requests from another origin, for a dashboard behind a
	// proxy that rewrites the host.
	//
	// Defaults to none.
	TrustedOrigins []string
}

// handler is the dashboard.
type handler struct {
	cfg Config
	// client and db read (Config.ReadPool); actions act through primary
	client    *goclient.Client
	db        *pgxpool.Pool
	primary   *pgxpool.Pool
	csrf      string
	guard     *httpauth.Guard
	logger    *slog.Logger
	next      http.Handler
	templates map[string]*template.Template

	// beforeBulkCall, when set (by tests), runs before each batch of a bulk
	// action (each call of geneva.bulk_workflows), to play a concurrent
	// change.
	beforeBulkCall func(ctx context.Context)
}

// New returns the dashboard reading and operating the Geneva schema through
// pool (reading through cfg.ReadPool when set). Its pages are under
// cfg.Prefix.
func New(pool *pgxpool.Pool, cfg *Config) (http.Handler, error) {
	if pool == nil {
		return nil, errors.New("geneva: dashboard needs a pool")
	}
	h := &handler{primary: pool}
	if cfg != nil {
		h.cfg = *cfg
	}
	h.db = h.cfg.ReadPool
	if h.db == nil {
		h.db = pool
	}
	h.client = goclient.New(h.db)
	c := &h.cfg
	c.Prefix = strings.TrimSuffix(c.Prefix, "/")
	if c.Prefix != "" && !strings.HasPrefix(c.Prefix, "/") {
		return nil, fmt.Errorf("geneva: dashboard prefix %q must start with /", c.Prefix)
	}
	if c.BulkBatchSize <= 0 {
		c.BulkBatchSize = 100
	}
	if c.BulkLimit <= 0 {
		c.BulkLimit = 10_000
	}
	if c.PageSize <= 0 {
		c.PageSize = 50
	}
	if c.RefreshInterval == 0 {
		c.RefreshInterval = 5 * time.Second
	}
	if c.BasicAuthUser == "" && c.BasicAuthPassword != "" {
		return nil, errors.New("geneva: dashboard basic auth needs a user")
	}
	h.guard = guard(c)
	h.logger = c.Logger
	if h.logger == nil {
		h.logger = slog.Default()
	}
	key := c.CSRFKey
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("geneva dashboard csrf"))
	h.csrf = base64.RawURLEncoding.EncodeToString(mac.Sum(nil))

	var err error
	if h.templates, err = parseTemplates(); err != nil {
		return nil, err
	}

	mux := http.NewServeMux()
	p := c.Prefix
	assets, _ := fs.Sub(files, "assets")
	mux.Handle("GET "+p+"/assets/", http.StripPrefix(p+"/assets/", assetServer(assets)))
	mux.HandleFunc("GET "+p+"/{$}", h.overview)
	mux.HandleFunc("GET "+p+"/workflows", h.workflows)
	mux.HandleFunc("GET "+p+"/workflows/{id}", h.workflow)
	mux.HandleFunc("GET "+p+"/workflows/{id}/send-event", h.confirmSendEvent)
	mux.HandleFunc("POST "+p+"/workflows/{id}/send-event", h.sendEvent)
	mux.HandleFunc("GET "+p+"/workflows/{id}/{action}", h.confirmAction)
	mux.HandleFunc("POST "+p+"/workflows/{id}/{action}", h.act)
	mux.HandleFunc("GET "+p+"/bulk/{action}", h.confirmBulk)
	mux.HandleFunc("POST "+p+"/bulk/{action}", h.actBulk)
	mux.HandleFunc("GET "+p+"/paused", h.paused)
	mux.HandleFunc("GET "+p+"/waiting", h.waiting)
	mux.HandleFunc("GET "+p+"/limits", h.limits)
	mux.HandleFunc("GET "+p+"/definitions", h.definitions)
	mux.HandleFunc("GET "+p+"/actions", h.actions)
	mux.HandleFunc("GET "+p+"/stuck", h.stuck)
	mux.HandleFunc("GET "+p+"/schedules", h.schedules)
	mux.HandleFunc("GET "+p+"/schedules/{name}/{action}", h.confirmSchedule)
	mux.HandleFunc("POST "+p+"/schedules/{name}/{action}", h.actSchedule)
	mux.HandleFunc("GET "+p+"/stats", h.stats)
	if c.Metrics != nil {
		mux.Handle("GET "+p+"/metrics", c.Metrics)
	}
	if p != "" {
		mux.Handle("GET "+p, http.RedirectHandler(p+"/", http.StatusMovedPermanently))
	}

	cop := http.NewCrossOriginProtection()
	for _, origin := range c.TrustedOrigins {
		if err := cop.AddTrustedOrigin(origin); err != nil {
			return nil, fmt.Errorf("geneva: dashboard trusted origin: %w", err)
		}
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, http.StatusForbidden, errors.New("refused: the request came from another site (cross-origin)"))
	}))
	h.next = cop.Handler(mux)
	return h, nil
}

// ServeHTTP authenticates the request, then serves it.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.guard.Authenticate(w, r) {
		return
	}
	w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "same-origin")
	h.next.ServeHTTP(w, r)
}

const tokenCookie = "geneva_dashboard_token"

// guard is the dashboard's credentials, checked by the code geneva metrics
// shares.
func guard(cfg *Config) *httpauth.Guard {
	return &httpauth.Guard{
		BasicAuthUser: cfg.BasicAuthUser, BasicAuthPassword: cfg.BasicAuthPassword,
		Cookie: tokenCookie, Name: "dashboard", Prefix: strings.TrimSuffix(cfg.Prefix, "/"), Token: cfg.Token,
	}
}

// contentSecurityPolicy lets pages load only the dashboard's own scripts,
// styles and forms (htmx runs without eval), and be framed by no one.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

func equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// checkCSRF tells whether a state-changing request carries the token (the
// origin was checked by CrossOriginProtection).
func (h *handler) checkCSRF(w http.ResponseWriter, r *http.Request) bool {
	token := r.PostFormValue("csrf")
	if token == "" {
		token = r.Header.Get("X-CSRF-Token")
	}
	if !equal(token, h.csrf) {
		h.fail(w, r, http.StatusForbidden, errors.New("refused: the form's security token is missing or stale; reload the page and try again"))
		return false
	}
	return true
}

func assetServer(assets fs.FS) http.Handler {
	server := http.FileServerFS(assets)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		server.ServeHTTP(w, r)
	})
}

// ListenAndServe serves the dashboard for pool at addr (host:port) until ctx
// is done, then shuts the server down gracefully. Unless cfg sets Token or
// BasicAuthUser, it refuses an address that is not a loopback one
// (127.0.0.1, ::1, localhost), and answers only requests whose Host is
// localhost, 127.0.0.0/8 or [::1], with or without a port (others get 421
// Misdirected Request), so that a web page cannot reach it by DNS
// rebinding. ready, when not nil, is called with the dashboard's URL once it
// listens.
func ListenAndServe(ctx context.Context, pool *pgxpool.Pool, addr string, cfg *Config, ready func(url string)) error {
	if cfg == nil {
		cfg = &Config{}
	}
	if err := CheckAddr(addr, cfg); err != nil {
		return err
	}
	handler, err := New(pool, cfg)
	if err != nil {
		return err
	}
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("geneva: dashboard: %w", err)
	}
	g := guard(cfg)
	server := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if g.CheckHost(w, r) {
				handler.ServeHTTP(w, r)
			}
		}),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	if ready != nil {
		ready(fmt.Sprintf("http://%s%s/", listener.Addr(), strings.TrimSuffix(cfg.Prefix, "/")))
	}
	errs := make(chan error, 1)
	go func() { errs <- server.Serve(listener) }()
	select {
	case err := <-errs:
		return err
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return server.Shutdown(shutdownCtx)
	}
}

// CheckAddr returns an error when addr is not a loopback address and cfg
// sets neither Token nor BasicAuthUser: the dashboard operates workflows, so
// it is never open to a network without a credential.
func CheckAddr(addr string, cfg *Config) error {
	if cfg == nil {
		cfg = &Config{}
	}
	return guard(cfg).CheckAddr(addr)
}
