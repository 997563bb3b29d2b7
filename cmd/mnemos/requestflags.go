package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// RequestFlags are what a caller may say about a request besides the
// command: its reason, and the context.* and scope.* fields that policy
// conditions read. They come from the caller, so a policy should use them
// to tighten (deny, ask) rather than as the only ground for an allow.
type RequestFlags struct {
	Reason  string   `help:"Why the agent runs this command: context.reason for policy conditions, and shown to vaglio's judge."`
	Context []string `placeholder:"KEY=VALUE" sep:"none" help:"Set a context.* field for policy conditions, e.g. --context ticket=OPS-12 (repeatable; a dotted KEY nests; a JSON number is a number, true and false are booleans, anything else is text)."`
	Scope   []string `placeholder:"KEY=VALUE" sep:"none" help:"Set a scope.* field for policy conditions, e.g. --scope max_size=1048576 (as --context)."`
}

// maxFieldFlags bounds the fields one request may carry; maxFieldDepth how
// deeply a dotted key may nest.
const (
	maxFieldFlags = 64
	maxFieldDepth = 16
)

// fieldFlags turns --context or --scope KEY=VALUE flags into the nested map
// policy conditions read. Any malformed flag is a usage error naming it:
// nothing is decided on a half-read request.
func fieldFlags(flag string, kvs []string) (map[string]any, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	if len(kvs) > maxFieldFlags {
		return nil, usageErr(fmt.Sprintf("--%s given %d times; at most %d", flag, len(kvs), maxFieldFlags), "")
	}
	out := map[string]any{}
	for _, kv := range kvs {
		key, raw, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, usageErr(fmt.Sprintf("--%s %q: want KEY=VALUE", flag, kv), "e.g. --"+flag+" ticket=OPS-12")
		}
		path := strings.Split(key, ".")
		if len(path) > maxFieldDepth {
			return nil, usageErr(fmt.Sprintf("--%s %q: the key nests deeper than %d levels", flag, key, maxFieldDepth), "")
		}
		for _, p := range path {
			if p == "" || strings.TrimSpace(p) != p {
				return nil, usageErr(fmt.Sprintf("--%s %q: empty or padded part in the key %q", flag, kv, key), "keys are names joined by dots, e.g. metadata.priority")
			}
		}
		if flag == "context" && key == "reason" {
			return nil, usageErr("--context reason=...: give the reason with --reason", "")
		}
		m := out
		for i, p := range path[:len(path)-1] {
			switch v := m[p].(type) {
			case nil:
				n := map[string]any{}
				m[p] = n
				m = n
			case map[string]any:
				m = v
			default:
				return nil, usageErr(fmt.Sprintf("--%s %q: %s already has a value, it cannot also hold fields", flag, kv, strings.Join(path[:i+1], ".")), "")
			}
		}
		last := path[len(path)-1]
		switch m[last].(type) {
		case nil:
		case map[string]any:
			return nil, usageErr(fmt.Sprintf("--%s %q: %s already holds fields, it cannot also have a value", flag, kv, key), "")
		default:
			return nil, usageErr(fmt.Sprintf("--%s %q: %s is given twice", flag, kv, key), "")
		}
		m[last] = fieldValue(raw)
	}
	return out, nil
}

// fieldValue reads a flag's value: a JSON number as a number (for
// less_than and greater_than), true and false as booleans, anything else
// as the text given.
func fieldValue(raw string) any {
	switch raw {
	case "true":
		return true
	case "false":
		return false
	}
	if raw != "" && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') && json.Valid([]byte(raw)) {
		if f, err := strconv.ParseFloat(raw, 64); err == nil && !math.IsInf(f, 0) {
			return f
		}
	}
	return raw
}

func usageErr(msg, hint string) error {
	return &exitError{code: exitUsage, msg: msg, hint: hint}
}
