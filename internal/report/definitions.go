package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/geneva-dev/geneva/goclient"
)

// policy is an exception policy of a definition (docs/sql-api.md, "Definitions").
type policy struct {
	Action         string          `json:"action"`
	Handler        string          `json:"handler"`
	Matching       []string        `json:"matching"`
	Wait           json.RawMessage `json:"wait"`
	MaxWait        json.RawMessage `json:"max_wait"`
	Backoff        *float64        `json:"backoff"`
	MaxReattempts  json.RawMessage `json:"max_reattempts"`
	TerminalAction string          `json:"terminal_action"`
	Report         string          `json:"report"`
}

// Policies says what a definition's on_exception does, in the order it is
// tried: "RateLimited: reattempt (wait 30 seconds, at most 5, then cancel);
// pause". It is "" for none, and the JSON itself when it is not policies.
func Policies(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return ""
	}
	var list []policy
	if strings.HasPrefix(s, "{") {
		var p policy
		if err := json.Unmarshal(raw, &p); err != nil {
			return s
		}
		list = []policy{p}
	} else if err := json.Unmarshal(raw, &list); err != nil {
		return s
	}
	parts := make([]string, len(list))
	for i, p := range list {
		parts[i] = p.String()
	}
	return strings.Join(parts, "; ")
}

func (p policy) String() string {
	var b strings.Builder
	if len(p.Matching) > 0 {
		b.WriteString(strings.Join(p.Matching, ", ") + ": ")
	}
	if p.Handler != "" {
		b.WriteString("handler " + p.Handler)
	} else {
		b.WriteString(p.Action)
	}
	var details []string
	if len(p.Wait) > 0 {
		details = append(details, "wait "+waitText(p.Wait))
	}
	if p.Backoff != nil {
		backoff := fmt.Sprintf("backoff ×%g", *p.Backoff)
		if len(p.MaxWait) > 0 {
			backoff += " up to " + waitText(p.MaxWait)
		}
		details = append(details, backoff)
	}
	switch m := strings.TrimSpace(string(p.MaxReattempts)); {
	case m == "null":
		details = append(details, "no limit")
	case m != "":
		details = append(details, "at most "+m)
	}
	if p.TerminalAction != "" {
		details = append(details, "then "+p.TerminalAction)
	}
	if p.Report != "" {
		details = append(details, "report "+strings.ReplaceAll(p.Report, "_", " "))
	}
	if len(details) > 0 {
		b.WriteString(" (" + strings.Join(details, ", ") + ")")
	}
	return b.String()
}

// waitText is a definition's wait: an interval's text, or a number of
// seconds.
func waitText(raw json.RawMessage) string {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text
	}
	var seconds float64
	if json.Unmarshal(raw, &seconds) == nil {
		return (time.Duration(seconds * float64(time.Second))).String()
	}
	return string(raw)
}

// TypeRules says what a definition decides for its whole type, each a line:
// its exception policies (tried after a step's own), its concurrency and its
// rate limit, and the events that cancel it (cancel_on). None when it has
// none.
func TypeRules(definition json.RawMessage) []string {
	var d struct {
		OnException json.RawMessage `json:"on_exception"`
		Concurrency *struct {
			By    string `json:"by"`
			Limit int    `json:"limit"`
		} `json:"concurrency"`
		RateLimit *struct {
			By    string          `json:"by"`
			Limit int             `json:"limit"`
			Per   json.RawMessage `json:"per"`
		} `json:"rate_limit"`
		CancelOn []string `json:"cancel_on"`
	}
	if json.Unmarshal(definition, &d) != nil {
		return nil
	}
	var rules []string
	if c := d.Concurrency; c != nil {
		rules = append(rules, fmt.Sprintf("concurrency: %d in progress at once per %s", c.Limit, c.By))
	}
	if r := d.RateLimit; r != nil {
		rules = append(rules, fmt.Sprintf("rate limit: %d starts per %s, per %s", r.Limit, waitText(r.Per), r.By))
	}
	if p := Policies(d.OnException); p != "" {
		rules = append(rules, "on exception (after a step's own): "+p)
	}
	if len(d.CancelOn) > 0 {
		rules = append(rules, "canceled by the events: "+strings.Join(d.CancelOn, ", "))
	}
	return rules
}

// Await says what a step awaits: "approved (3 days, then cancel)",
// "approved | rejected (2 days, then run; only since the wait)"; "" for
// none.
func Await(s *goclient.DefinitionStep) string {
	if s.AwaitEvent == nil {
		return ""
	}
	if timeout := AwaitTimeout(s); timeout != "" {
		return AwaitNames(s) + " (" + timeout + ")"
	}
	return AwaitNames(s)
}

// AwaitNames is the names a step awaits, any of them: "approved | rejected";
// "" for none.
func AwaitNames(s *goclient.DefinitionStep) string {
	if len(s.AwaitEvents) > 0 {
		return strings.Join(s.AwaitEvents, " | ")
	}
	return Deref(s.AwaitEvent)
}

// AwaitTimeout says how long a step awaits its event and what its timeout
// then does, and, for an await "since": "wait", that it counts only events
// sent after the step was reached: "3 days, then cancel; only since the
// wait"; "" for a step that awaits none.
func AwaitTimeout(s *goclient.DefinitionStep) string {
	if s.AwaitEvent == nil || s.AwaitTimeout == nil {
		return ""
	}
	text := humanWait(*s.AwaitTimeout) + ", then " + Deref(s.OnTimeout)
	if Deref(s.AwaitSince) == "wait" {
		text += "; only since the wait"
	}
	return text
}

// Wait is a step's wait for people: "" for none, "1 day", "30m".
func Wait(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return humanWait(d)
}

// humanWait writes whole days as days, and other durations without Go's
// trailing zero units (1h, 15m, 1h30m).
func humanWait(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d == day:
		return "1 day"
	case d > day && d%day == 0:
		return fmt.Sprintf("%d days", d/day)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Definitions prints each type's current definition, a step a line with
// labelled columns (what each does: wait, await, limits, queue, HTTP
// endpoint, exception policies), then its earlier versions. versions are
// geneva.definition_versions' rows, newest first per type; steps,
// geneva.definition_steps' rows.
func Definitions(out io.Writer, versions []*goclient.DefinitionVersion, steps []*goclient.DefinitionStep) error {
	if len(versions) == 0 {
		_, err := fmt.Fprintln(out, "No definition.")
		return err
	}
	byType := map[string][]*goclient.DefinitionStep{}
	for _, s := range steps {
		byType[s.WorkflowType] = append(byType[s.WorkflowType], s)
	}
	for i := 0; i < len(versions); {
		current := versions[i]
		var earlier []string
		j := i + 1
		for ; j < len(versions) && versions[j].WorkflowType == current.WorkflowType; j++ {
			v := versions[j]
			earlier = append(earlier, fmt.Sprintf("v%d %s by %s (%s%s)", v.Version, Stamp(v.DefinedAt), v.DefinedBy,
				Count(len(v.StepNames), "step", "steps"), ongoing(v.Ongoing)))
		}
		if i > 0 {
			fmt.Fprintln(out)
		}
		state := "current"
		if !current.Current {
			state = "not current" // (a type's newest version is its current one)
		}
		fmt.Fprintf(out, "%s  version %d (%s), defined %s by %s, %s (%d over HTTP)%s\n", current.WorkflowType,
			current.Version, state, Stamp(current.DefinedAt), current.DefinedBy,
			Count(len(current.StepNames), "step", "steps"), current.HTTPSteps, ongoing(current.Ongoing))
		for _, rule := range TypeRules(current.Definition) {
			fmt.Fprintf(out, "  %s\n", rule)
		}
		if typeSteps := byType[current.WorkflowType]; len(typeSteps) > 0 {
			w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(w, "  #\tstep\twait\tawait\tlimits\tqueue\thttp\ton exception\tskip if")
			for _, s := range typeSteps {
				http := ""
				if s.HTTPURL != nil {
					http = "POST " + *s.HTTPURL
				}
				skipIf := strings.Trim(string(s.SkipIf), `"`)
				fmt.Fprintf(w, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Position, s.StepName, Wait(s.Wait), Await(s),
					strings.Join(s.Limits, ", "), s.Queue, http, Policies(s.OnException), skipIf)
			}
			if err := w.Flush(); err != nil {
				return err
			}
		}
		if len(earlier) > 0 {
			fmt.Fprintf(out, "  earlier: %s\n", strings.Join(earlier, "; "))
		}
		i = j
	}
	return nil
}

// ongoing says how many workflows started under a version are still ongoing
// (geneva.definition_versions' drain count): ", 3 ongoing", or nothing for
// none.
func ongoing(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d ongoing", n)
}
