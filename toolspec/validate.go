package toolspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// ArgumentError says why a tool call's arguments cannot run. Its message is
// written for the model: it names each offending field.
type ArgumentError struct {
	Tool     string
	Problems []string // e.g. "field `path`: required"
}

func (e *ArgumentError) Error() string {
	return fmt.Sprintf("invalid arguments for tool %s: %s", e.Tool, strings.Join(e.Problems, "; "))
}

// compiled caches compiled schemas by their text. Compilation is pure, so
// the cache is safe to use from workflow code: a replay compiles the same
// schema to the same validator.
var compiled sync.Map // string -> *jsonschema.Schema

// ValidateArguments checks a call's raw JSON arguments against the tool's
// parameter schema. It is deterministic and does no I/O, so the workflow
// calls it before anyone is asked to approve the call. The error is an
// *ArgumentError whose problems are sorted so the text is stable.
func ValidateArguments(spec Spec, args string) error {
	sch, err := compile(spec)
	if err != nil {
		return err
	}
	trimmed := strings.TrimSpace(args)
	if trimmed == "" {
		trimmed = "{}"
	}
	dec := json.NewDecoder(strings.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return &ArgumentError{Tool: spec.Name, Problems: []string{fmt.Sprintf("arguments are not valid JSON (%v); send one JSON object such as {\"path\": \"README.md\"}", err)}}
	}
	if dec.More() {
		return &ArgumentError{Tool: spec.Name, Problems: []string{"arguments hold more than one JSON value; send exactly one JSON object"}}
	}
	if _, ok := v.(map[string]any); !ok {
		return &ArgumentError{Tool: spec.Name, Problems: []string{fmt.Sprintf("arguments must be a JSON object, got %s", jsonKind(v))}}
	}
	err = sch.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &ArgumentError{Tool: spec.Name, Problems: []string{err.Error()}}
	}
	problems := describe(ve)
	sort.Strings(problems)
	return &ArgumentError{Tool: spec.Name, Problems: dedupe(problems)}
}

func compile(spec Spec) (*jsonschema.Schema, error) {
	key := string(spec.Parameters)
	if s, ok := compiled.Load(key); ok {
		return s.(*jsonschema.Schema), nil
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	url := "mem://tools/" + spec.Name + ".json"
	if err := c.AddResource(url, bytes.NewReader(spec.Parameters)); err != nil {
		return nil, fmt.Errorf("tool %s: parameter schema: %w", spec.Name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("tool %s: compile parameter schema: %w", spec.Name, err)
	}
	compiled.Store(key, s)
	return s, nil
}

var (
	missingRe    = regexp.MustCompile(`'([^']*)'`)
	additionalRe = regexp.MustCompile(`additionalProperties (.*) not allowed`)
)

// describe flattens a validation error tree into one line per leaf, each
// naming the field it concerns.
func describe(ve *jsonschema.ValidationError) []string {
	if len(ve.Causes) > 0 {
		var out []string
		for _, c := range ve.Causes {
			out = append(out, describe(c)...)
		}
		return out
	}
	field := fieldName(ve.InstanceLocation)
	switch {
	case strings.HasSuffix(ve.KeywordLocation, "/required"):
		var out []string
		for _, m := range missingRe.FindAllStringSubmatch(ve.Message, -1) {
			out = append(out, fmt.Sprintf("field `%s`: required", join(field, m[1])))
		}
		if len(out) > 0 {
			return out
		}
	case strings.HasSuffix(ve.KeywordLocation, "/additionalProperties"):
		if m := additionalRe.FindStringSubmatch(ve.Message); m != nil {
			var out []string
			for _, n := range missingRe.FindAllStringSubmatch(m[1], -1) {
				out = append(out, fmt.Sprintf("field `%s`: unknown field, not allowed", join(field, n[1])))
			}
			if len(out) > 0 {
				return out
			}
		}
	}
	if field == "" {
		return []string{ve.Message}
	}
	return []string{fmt.Sprintf("field `%s`: %s", field, ve.Message)}
}

// fieldName turns a JSON pointer ("/edits/0/path") into a dotted name
// ("edits.0.path").
func fieldName(ptr string) string {
	ptr = strings.TrimPrefix(ptr, "/")
	if ptr == "" {
		return ""
	}
	parts := strings.Split(ptr, "/")
	for i, p := range parts {
		p = strings.ReplaceAll(p, "~1", "/")
		parts[i] = strings.ReplaceAll(p, "~0", "~")
	}
	return strings.Join(parts, ".")
}

func join(parent, child string) string {
	if parent == "" {
		return child
	}
	return parent + "." + child
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// CheckSchema reports whether spec's parameter schema compiles: a tool
// whose schema does not would refuse every call.
func CheckSchema(spec Spec) error {
	_, err := compile(spec)
	return err
}
