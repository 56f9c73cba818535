package adapt

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/droverhq/drover/openapi"
)

// Spec is one API version's OpenAPI document, read for the shapes of its
// requests and answers.
type Spec struct {
	Version string
	schemas map[string]any
	ops     map[string]map[string]any // normalised operationId -> operation
}

var (
	specMu sync.Mutex
	loaded = map[string]*Spec{}
)

// LoadSpec reads (once) the document of version ("v0.0.42").
func LoadSpec(version string) (*Spec, error) {
	specMu.Lock()
	defer specMu.Unlock()
	if s := loaded[version]; s != nil {
		return s, nil
	}
	data, err := openapi.Spec(version)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Paths      map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("OpenAPI document %s: %w", version, err)
	}
	s := &Spec{Version: version, schemas: doc.Components.Schemas, ops: map[string]map[string]any{}}
	for _, item := range doc.Paths {
		for _, op := range item {
			o, ok := op.(map[string]any)
			if !ok {
				continue
			}
			if id, ok := o["operationId"].(string); ok {
				s.ops[normalise(id)] = o
			}
		}
	}
	loaded[version] = s
	return s, nil
}

// MustLoadSpec is LoadSpec for documents built into the program.
func MustLoadSpec(version string) *Spec {
	s, err := LoadSpec(version)
	if err != nil {
		panic(err)
	}
	return s
}

func normalise(id string) string {
	return strings.ToLower(strings.ReplaceAll(id, "_", ""))
}

// resolve follows a schema's $ref.
func (s *Spec) resolve(schema any) map[string]any {
	m, _ := schema.(map[string]any)
	for depth := 0; m != nil && depth < 32; depth++ {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		m, _ = s.schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
	}
	return m
}

func jsonSchema(content any) any {
	c, _ := content.(map[string]any)
	mt, _ := c["application/json"].(map[string]any)
	return mt["schema"]
}

// ResponseSchema is the answer's schema of an operation (by its ogen
// method name or operationId) for status ("200", "default").
func (s *Spec) ResponseSchema(op, status string) map[string]any {
	o := s.ops[normalise(op)]
	resps, _ := o["responses"].(map[string]any)
	r, _ := resps[status].(map[string]any)
	if r == nil {
		r, _ = resps["default"].(map[string]any)
	}
	return s.resolve(jsonSchema(r["content"]))
}

// RequestSchema is an operation's request body schema, nil without one.
func (s *Spec) RequestSchema(op string) map[string]any {
	o := s.ops[normalise(op)]
	rb, _ := o["requestBody"].(map[string]any)
	if rb == nil {
		return nil
	}
	return s.resolve(jsonSchema(rb["content"]))
}

// Project reshapes a decoded JSON value to schema, so that it is what
// that schema's version says: properties the schema lacks are dropped,
// required ones it lacks get empty values, and the changes slurmrestd
// made between versions are bridged (a number where the schema wants a
// {set, infinite, number} object or the reverse, a flags array where an
// old version had a number, flags the schema's enum does not know).
func (s *Spec) Project(v any, schema map[string]any) any {
	return s.project(v, schema, 0)
}

func (s *Spec) project(v any, schema map[string]any, depth int) any {
	if schema == nil || depth > 64 {
		return v
	}
	switch typeOf(schema) {
	case "object":
		props, _ := schema["properties"].(map[string]any)
		src, ok := v.(map[string]any)
		if !ok {
			if n, isNum := v.(json.Number); isNum && props["number"] != nil && props["set"] != nil {
				// A plain number where the schema has {set, infinite, number}.
				return map[string]any{"set": true, "infinite": false, "number": n}
			}
			if props["number"] != nil && props["set"] != nil && props["infinite"] != nil {
				// A missing number, as slurmrestd writes an unset one.
				return map[string]any{"set": false, "infinite": false, "number": json.Number("0")}
			}
			src = map[string]any{}
		}
		if len(props) == 0 {
			return src
		}
		out := make(map[string]any, len(props))
		for name, p := range props {
			if val, ok := src[name]; ok {
				out[name] = s.project(val, s.resolve(p), depth+1)
			}
		}
		for _, r := range required(schema) {
			if _, ok := out[r]; !ok {
				out[r] = s.project(nil, s.resolve(props[r]), depth+1)
			}
		}
		return out
	case "array":
		items := s.resolve(schema["items"])
		src, ok := v.([]any)
		if !ok {
			return []any{}
		}
		enum, _ := items["enum"].([]any)
		out := make([]any, 0, len(src))
		for _, e := range src {
			pe := s.project(e, items, depth+1)
			if len(enum) > 0 && !inEnum(pe, enum) {
				continue
			}
			out = append(out, pe)
		}
		return out
	case "integer", "number":
		switch x := v.(type) {
		case json.Number:
			return x
		case map[string]any:
			if n, ok := x["number"].(json.Number); ok {
				return n
			}
		case string:
			if n, err := strconv.ParseFloat(x, 64); err == nil && !math.IsNaN(n) && !math.IsInf(n, 0) {
				return json.Number(x)
			}
		case bool:
			if x {
				return json.Number("1")
			}
		}
		return json.Number("0")
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
		return false
	case "string":
		switch x := v.(type) {
		case string:
			return x
		case json.Number:
			return x.String()
		case bool:
			return strconv.FormatBool(x)
		}
		return ""
	}
	return v
}

func typeOf(schema map[string]any) string {
	switch t := schema["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
	}
	if schema["properties"] != nil {
		return "object"
	}
	return ""
}

func required(schema map[string]any) []string {
	var out []string
	if r, ok := schema["required"].([]any); ok {
		for _, x := range r {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func inEnum(v any, enum []any) bool {
	for _, e := range enum {
		if e == v {
			return true
		}
	}
	return false
}

// Properties returns the properties of the object schema a response of
// op has at status, each resolved, by name (nil when it has none).
func (s *Spec) Properties(schema map[string]any) map[string]map[string]any {
	props, _ := s.resolve(schema)["properties"].(map[string]any)
	if props == nil {
		return nil
	}
	out := make(map[string]map[string]any, len(props))
	for name, p := range props {
		out[name] = s.resolve(p)
	}
	return out
}

// TypeOf is a resolved schema's JSON type ("object" for one with
// properties but no type).
func TypeOf(schema map[string]any) string { return typeOf(schema) }

// Component is the resolved schema of a component by name.
func (s *Spec) Component(name string) map[string]any { return s.resolve(s.schemas[name]) }
