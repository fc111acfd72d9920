package main

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/geneva-dev/geneva/goclient"
)

// The workflow filter of `geneva ls` and `geneva bulk`: --filter KEY=VALUE,
// repeatable, with the keys of goclient.WorkflowFilter's JSON, which are
// geneva._workflow_filter's, so that a key added there is a key here.

var (
	// filterFields maps each key to its field of goclient.WorkflowFilter.
	filterFields = func() map[string]int {
		fields := map[string]int{}
		t := reflect.TypeFor[goclient.WorkflowFilter]()
		for i := range t.NumField() {
			key, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			fields[key] = i
		}
		return fields
	}()
	// filterKeys are the keys in the order of the fields.
	filterKeys = func() []string {
		keys := make([]string, len(filterFields))
		for key, i := range filterFields {
			keys[i] = key
		}
		return keys
	}()
	timeType = reflect.TypeFor[*time.Time]()
)

// filterHelp is the flag's help, and the keys' for a command's Long.
const filterHelp = `Filter keys (--filter KEY=VALUE, repeatable; every one must match): type,
state (ready, performing, paused, finished, canceled, or ongoing for the
first three), step (running or next), error_class (the latest error's),
hero_type, hero_id, group, created_before and created_after (RFC 3339 times,
2030-01-02T15:04:05Z, or dates), before_id, after_id and up_to_id (workflow
ids), parent_id (a workflow's children). The same keys as geneva.list_workflows, count_workflows and
bulk_workflows take, and the dashboard's Workflows page.`

// setFilter sets filter's key to value as --filter KEY=VALUE gives it.
// seen holds the keys already set: a key given twice is refused.
func setFilter(filter *goclient.WorkflowFilter, seen map[string]bool, key, value string) error {
	i, ok := filterFields[key]
	if !ok {
		return usagef("--filter: unknown key %q: use %s", key, strings.Join(filterKeys, ", "))
	}
	if seen[key] {
		return usagef("--filter: %s given twice", key)
	}
	seen[key] = true
	if value == "" {
		return usagef("--filter %s: the value is empty", key)
	}
	field := reflect.ValueOf(filter).Elem().Field(i)
	switch {
	case field.Type() == timeType:
		t, err := parseFilterTime(value)
		if err != nil {
			return usagef("--filter %s: %v", key, err)
		}
		field.Set(reflect.ValueOf(&t))
	case field.Kind() == reflect.Int64:
		id, err := strconv.ParseInt(value, 10, 64)
		if err != nil || id <= 0 {
			return usagef("--filter %s: %q is not a workflow id", key, value)
		}
		field.SetInt(id)
	case field.Kind() == reflect.String:
		field.SetString(value)
	default:
		panic(fmt.Sprintf("workflow filter key %s: no flag for %s", key, field.Type()))
	}
	return nil
}

// parseFilter reads --filter KEY=VALUE flags into filter.
func parseFilter(filter *goclient.WorkflowFilter, seen map[string]bool, filters []string) error {
	for _, kv := range filters {
		key, value, ok := strings.Cut(kv, "=")
		if !ok {
			return usagef("--filter %q: write KEY=VALUE", kv)
		}
		if err := setFilter(filter, seen, key, value); err != nil {
			return err
		}
	}
	return nil
}

func parseFilterTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time like 2030-01-02T15:04:05Z or a date", s)
}
