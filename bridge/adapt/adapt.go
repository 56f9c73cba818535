// Package adapt serves the slurmrestd API versions other than v0.0.44
// through the v0.0.44 bridge: a request of version N is translated to
// v0.0.44's wire types, answered by bridge/v0044, and the answer translated
// back to version N's types. The translation goes through each version's
// JSON, so that a field the versions share keeps its meaning, a field one
// version lacks is left out, and nothing is written by hand per field; the
// per-operation glue is generated (gen/) from the ogen packages.
package adapt

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Convert copies src into dst through JSON: ogen's wire types encode and
// decode themselves as the API's JSON, plain parameter structs with
// encoding/json's rules (the same field names in every version).
func Convert(src, dst any) error {
	b, err := json.Marshal(src)
	if err != nil {
		return fmt.Errorf("translate %T: %w", src, err)
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("translate %T to %T: %w", src, dst, err)
	}
	return nil
}

// Answer converts src, an answer of the version that served the request,
// into dst, the same answer of spec's version: its JSON is reshaped to
// that version's schema for op's status ("200", "default") and names
// that version's data parser.
func Answer(spec *Spec, op, status string, src, dst any) error {
	v, err := decode(src)
	if err != nil {
		return err
	}
	v = spec.Project(v, spec.ResponseSchema(op, status))
	if m, ok := v.(map[string]any); ok {
		if meta, ok := m["meta"].(map[string]any); ok {
			if plugin, ok := meta["plugin"].(map[string]any); ok {
				if _, ok := plugin["data_parser"]; ok {
					plugin["data_parser"] = "data_parser/" + spec.Version
				}
			}
		}
	}
	return encode(v, dst)
}

// Request converts a request body src (a pointer: ogen's types encode
// themselves through pointer methods) into dst, the body of the version
// that serves it (next), reshaped to next's schema for op.
func Request(next *Spec, op string, src, dst any) error {
	v, err := decode(src)
	if err != nil {
		return err
	}
	if schema := next.RequestSchema(op); schema != nil && v != nil {
		v = next.Project(v, schema)
	}
	return encode(v, dst)
}

func decode(src any) (any, error) {
	b, err := json.Marshal(src)
	if err != nil {
		return nil, fmt.Errorf("translate %T: %w", src, err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("translate %T: %w", src, err)
	}
	return v, nil
}

func encode(v any, dst any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("translate to %T: %w", dst, err)
	}
	return nil
}
