package tools

import (
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// outputSchema is the JSON Schema of the values of v's type, as
// encoding/json writes them: nil slices, maps and pointers are null, so
// they are typed ["null", T] (jsonschema-go does so for slices and
// pointers already, not for maps). nil v: no schema.
func outputSchema(v any) (*jsonschema.Schema, error) {
	if v == nil {
		return nil, nil
	}
	s, err := jsonschema.ForType(reflect.TypeOf(v), nil)
	if err != nil {
		return nil, err
	}
	nullableMaps(s)
	optionalEmbedded(reflect.TypeOf(v), s)
	return s, nil
}

// optionalEmbedded drops from the required list the fields that come from
// an embedded pointer (WriteResult's *Persisted): encoding/json omits them
// all when the pointer is nil, which jsonschema-go does not know.
func optionalEmbedded(t reflect.Type, s *jsonschema.Schema) {
deref:
	for {
		switch t.Kind() {
		case reflect.Pointer:
			t = t.Elem()
		case reflect.Slice, reflect.Array:
			t = t.Elem()
			if s != nil {
				s = s.Items
			}
		default:
			break deref
		}
	}
	if s == nil || t.Kind() != reflect.Struct {
		return
	}
	drop := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
			for _, n := range jsonNames(f.Type.Elem()) {
				drop[n] = true
			}
			addMissing(f.Type.Elem(), s)
			continue
		}
		if name := jsonName(f); name != "" {
			optionalEmbedded(f.Type, s.Properties[name])
		}
	}
	kept := s.Required[:0]
	for _, r := range s.Required {
		if !drop[r] {
			kept = append(kept, r)
		}
	}
	s.Required = kept
}

// addMissing adds the properties of an embedded struct that
// jsonschema-go lost: it drops a field named like its embedded struct
// (Persisted.Persisted, "persisted").
func addMissing(t reflect.Type, s *jsonschema.Schema) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := jsonName(f)
		if f.Anonymous || name == "" || s.Properties[name] != nil {
			continue
		}
		ps, err := jsonschema.ForType(f.Type, nil)
		if err != nil {
			continue
		}
		if s.Properties == nil {
			s.Properties = map[string]*jsonschema.Schema{}
		}
		s.Properties[name] = ps
	}
}

// jsonNames are the JSON names of t's fields, embedded ones flattened.
func jsonNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && ft.Kind() == reflect.Struct && f.Tag.Get("json") == "" {
			out = append(out, jsonNames(ft)...)
			continue
		}
		if n := jsonName(f); n != "" {
			out = append(out, n)
		}
	}
	return out
}

func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "-":
		return ""
	case "":
		return f.Name
	}
	return name
}

func nullableMaps(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Type == "object" && s.Properties == nil && s.AdditionalProperties != nil {
		s.Types, s.Type = []string{"null", "object"}, ""
	}
	for _, p := range s.Properties {
		nullableMaps(p)
	}
	nullableMaps(s.Items)
	nullableMaps(s.AdditionalProperties)
	for _, p := range s.AnyOf {
		nullableMaps(p)
	}
}

// acronyms stay upper case in titles.
var acronyms = map[string]string{"sql": "SQL", "pr": "PR", "id": "ID", "stdin": "stdin"}

// TitleOf makes a display title of a snake_case tool name: "git_status"
// → "Git status", "exec_sql" → "Exec SQL".
func TitleOf(name string) string {
	words := strings.Split(name, "_")
	for i, w := range words {
		if a, ok := acronyms[w]; ok {
			words[i] = a
			continue
		}
		if i == 0 && w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}
