package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/report"
)

// parseTemplates parses every page with the layout, by page name.
func parseTemplates() (map[string]*template.Template, error) {
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, name := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(name, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(files, "templates/layout.html", name)
		if err != nil {
			return nil, fmt.Errorf("geneva: dashboard template %s: %w", base, err)
		}
		pages[base] = t
	}
	return pages, nil
}

var funcs = template.FuncMap{
	"add": func(a, b any) int64 { return toInt64(a) + toInt64(b) },
	"deref": func(v any) string {
		switch s := v.(type) {
		case *string:
			return deref(s)
		case *goclient.Outcome:
			return string(deref(s))
		}
		panic(fmt.Sprintf("deref of a %T", v)) // (a template's mistake: its test fails)
	},
	// the version a workflow started under when it follows another now; 0
	// when they are the same (or the row has none)
	"startedUnder": func(wf *goclient.Workflow) int {
		if wf.StartedVersion == nil || wf.DefinitionVersion == nil || *wf.StartedVersion == *wf.DefinitionVersion {
			return 0
		}
		return *wf.StartedVersion
	},
	"dur": func(v any) string {
		switch d := v.(type) {
		case *time.Duration:
			if d == nil {
				return ""
			}
			return humanDuration(*d)
		case time.Duration:
			return humanDuration(d)
		}
		return ""
	},
	"formValues": func(f *filter) map[string]string {
		values, _ := url.ParseQuery(f.query())
		m := map[string]string{}
		for k := range values {
			m[k] = values.Get(k)
		}
		return m
	},
	"hasJSON": hasJSON,
	// shortJSON is JSON's first n characters, marked when cut
	"shortJSON": func(v any, n int) string {
		if r := []rune(jsonText(v)); len(r) > n {
			return string(r[:n-1]) + "…"
		}
		return jsonText(v)
	},
	"longJSON": func(v any, n int) bool { return len([]rune(jsonText(v))) > n },
	"int64":    toInt64,
	"label":    func(action string) string { return verbs[action].label },
	"lower":    strings.ToLower,
	"notMatched": func(d *bulkData) int64 {
		return max(0, d.Count-int64(d.Acted)-int64(d.Refusals)-d.Remaining)
	},
	"outcomes": sortedOutcomes,
	// plural is one when n is 1, else many: {{plural .Count "matches" "match"}}
	"plural": func(n any, one, many string) string {
		if toInt64(n) == 1 {
			return one
		}
		return many
	},
	// what a definition's step does (as geneva definitions prints it)
	"policies": func(raw json.RawMessage) string { return report.Policies(raw) },
	"awaitDetail": func(s *goclient.DefinitionStep) string {
		if t := report.AwaitTimeout(s); t != "" {
			return "(" + t + ")"
		}
		return ""
	},
	"waitText": report.Wait,
	"skipIf":   func(raw json.RawMessage) string { return strings.Trim(string(raw), `"`) },
	"prettyJSON": func(raw json.RawMessage) string {
		var b bytes.Buffer
		if err := json.Indent(&b, raw, "", "  "); err != nil {
			return string(raw)
		}
		return b.String()
	},
	"secs": func(s *float64) string {
		if s == nil {
			return ""
		}
		return humanDuration(time.Duration(*s * float64(time.Second)))
	},
	"slug": func(s string) string { return strings.ReplaceAll(s, " ", "-") },
	// wrapable lets a name of words joined by underscores (a step, an
	// outcome) wrap after each underscore: reattempted_<wbr>by_<wbr>exception
	"wrapable": func(v any) template.HTML {
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case *string:
			s = deref(x)
		case goclient.Outcome:
			s = string(x)
		case *goclient.Outcome:
			s = string(deref(x))
		case goclient.ExecutionState:
			s = string(x)
		}
		return template.HTML(strings.ReplaceAll(template.HTMLEscapeString(s), "_", "_<wbr>"))
	},
	"ts": func(v any) template.HTML {
		var t time.Time
		switch x := v.(type) {
		case time.Time:
			t = x
		case *time.Time:
			if x == nil {
				return ""
			}
			t = *x
		default:
			return ""
		}
		t = t.UTC()
		// (the date and the time each kept whole where a narrow column wraps
		// them)
		return template.HTML(fmt.Sprintf(`<time datetime="%s" title="%s"><span>%s</span> <span>%s</span></time>`,
			t.Format(time.RFC3339Nano), t.Format("2006-01-02 15:04:05.000 UTC"), t.Format("2006-01-02"), t.Format("15:04:05")))
	},
}

// jsonText is JSON's text, from a json.RawMessage or a string.
func jsonText(v any) string {
	switch x := v.(type) {
	case json.RawMessage:
		return string(x)
	case string:
		return x
	case *string:
		return deref(x)
	}
	return ""
}

// hasJSON tells whether raw is a JSON value other than null.
func hasJSON(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s != "" && s != "null"
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int64:
		return x
	case *int64:
		if x == nil {
			return 0
		}
		return *x
	case *time.Duration:
		if x == nil {
			return 0
		}
		return int64(*x)
	case time.Duration:
		return int64(x)
	}
	return 0
}

// humanDuration shows a duration with about three significant digits:
// 850µs, 12.3ms, 4.56s, 3m12s, 2h05m, 3d04h.
func humanDuration(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	switch {
	case d == 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%s%dµs", sign, d.Microseconds())
	case d < time.Second:
		return sign + trimFloat(float64(d)/float64(time.Millisecond)) + "ms"
	case d < time.Minute:
		return sign + trimFloat(d.Seconds()) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%s%dm%02ds", sign, int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%s%dh%02dm", sign, int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%s%dd%02dh", sign, int(d.Hours())/24, int(d.Hours())%24)
}

func trimFloat(f float64) string {
	switch {
	case f >= 100:
		return fmt.Sprintf("%.0f", math.Round(f))
	case f >= 10:
		return fmt.Sprintf("%.1f", f)
	}
	return fmt.Sprintf("%.2f", f)
}
