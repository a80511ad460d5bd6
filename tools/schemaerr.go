package tools

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// violation says, in the words a model or a person reads, which rule of
// schema v breaks, at path ("timeout_ms: must be >= 100 (got 5)");
// jsonschema-go's own text ("5/1 is less than 100.000000") shows a
// rational and float formatting. ok is false for a rule this does not
// know; the caller falls back on the validator's text.
func violation(path string, s *jsonschema.Schema, v any) (msg string, ok bool) {
	if s == nil {
		return "", false
	}
	at := func(format string, args ...any) (string, bool) {
		return path + ": " + fmt.Sprintf(format, args...), true
	}
	if want := schemaTypes(s); len(want) > 0 && !typeIn(v, want) {
		return at("must be %s (got %s)", typeWords(want), describe(v))
	}
	if len(s.Enum) > 0 && !inEnum(v, s.Enum) {
		return at("must be one of %s (got %s)", enumList(s.Enum), describe(v))
	}
	switch x := v.(type) {
	case float64:
		n := num(x)
		switch {
		case s.Minimum != nil && x < *s.Minimum:
			return at("must be >= %s (got %s)", num(*s.Minimum), n)
		case s.Maximum != nil && x > *s.Maximum:
			return at("must be <= %s (got %s)", num(*s.Maximum), n)
		case s.ExclusiveMinimum != nil && x <= *s.ExclusiveMinimum:
			return at("must be > %s (got %s)", num(*s.ExclusiveMinimum), n)
		case s.ExclusiveMaximum != nil && x >= *s.ExclusiveMaximum:
			return at("must be < %s (got %s)", num(*s.ExclusiveMaximum), n)
		}
	case string:
		n := utf8.RuneCountInString(x)
		switch {
		case s.MinLength != nil && n < *s.MinLength:
			if *s.MinLength == 1 {
				return at("must not be empty")
			}
			return at("must be at least %d characters (got %d)", *s.MinLength, n)
		case s.MaxLength != nil && n > *s.MaxLength:
			return at("must be at most %d characters (got %d)", *s.MaxLength, n)
		case s.Pattern != "":
			if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(x) {
				return at("must match %s (got %s)", s.Pattern, describe(v))
			}
		}
	case []any:
		switch {
		case s.MinItems != nil && len(x) < *s.MinItems:
			return at("must have at least %d items (got %d)", *s.MinItems, len(x))
		case s.MaxItems != nil && len(x) > *s.MaxItems:
			return at("must have at most %d items (got %d)", *s.MaxItems, len(x))
		}
		for i, e := range x {
			if m, ok := violation(fmt.Sprintf("%s[%d]", path, i), s.Items, e); ok {
				return m, true
			}
		}
	case map[string]any:
		names := make([]string, 0, len(x))
		for k := range x {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, req := range s.Required {
			if _, ok := x[req]; !ok {
				return path + "." + req + " is required", true
			}
		}
		for _, k := range names {
			if sub, ok := s.Properties[k]; ok {
				if m, ok := violation(path+"."+k, sub, x[k]); ok {
					return m, true
				}
			} else if len(s.Properties) > 0 && s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil {
				return at("unknown field %q (allowed: %s)", k, strings.Join(sortedProps(s), ", "))
			}
		}
	}
	return "", false
}

// typeWords names JSON Schema types as a sentence does: "an integer",
// "a string or null".
func typeWords(types []string) string {
	words := map[string]string{"integer": "an integer", "number": "a number", "string": "a string",
		"boolean": "true or false", "array": "an array", "object": "an object", "null": "null"}
	out := make([]string, len(types))
	for i, t := range types {
		if out[i] = words[t]; out[i] == "" {
			out[i] = t
		}
	}
	return strings.Join(out, " or ")
}

func schemaTypes(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

// typeIn reports whether v (decoded JSON, numbers as float64) has one of
// the JSON Schema types.
func typeIn(v any, types []string) bool {
	for _, t := range types {
		switch x := v.(type) {
		case nil:
			if t == "null" {
				return true
			}
		case bool:
			if t == "boolean" {
				return true
			}
		case float64:
			if t == "number" || t == "integer" && x == float64(int64(x)) {
				return true
			}
		case string:
			if t == "string" {
				return true
			}
		case []any:
			if t == "array" {
				return true
			}
		case map[string]any:
			if t == "object" {
				return true
			}
		default:
			return true // not decoded JSON: leave it to the validator
		}
	}
	return false
}

// describe is a value as the message quotes it: JSON, cut when long.
func describe(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if utf8.RuneCountInString(s) > 60 {
		s = cutRunes(s, 57) + "..."
	}
	return s
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func inEnum(v any, vals []any) bool {
	for _, e := range vals {
		if describe(e) == describe(v) {
			return true
		}
	}
	return false
}

func enumList(vals []any) string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = describe(v)
	}
	return strings.Join(out, ", ")
}

func sortedProps(s *jsonschema.Schema) []string {
	out := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
