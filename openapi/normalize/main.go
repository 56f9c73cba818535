// Command normalize rewrites an upstream slurmrestd OpenAPI document into one
// that ogen accepts, without changing what goes over the wire.
//
// The upstream specs name some component schemas exactly as ogen names the
// inline schemas it derives from a parent's property (v0.0.44_job_res_nodes
// collides with the inline "nodes" of v0.0.44_job_res). Renaming the
// component, and every $ref to it, removes the collision; schema names never
// appear in JSON bodies, so the wire format is untouched.
//
// Usage: normalize -in upstream.json -out normalized.json
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// renameSuffix is appended to a colliding component schema name. It is fixed
// so that the output, and the generated Go type names, are reproducible.
const renameSuffix = "_list"

func main() {
	in := flag.String("in", "", "upstream OpenAPI JSON document")
	out := flag.String("out", "", "normalised OpenAPI JSON document to write")
	flag.Parse()
	if *in == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: normalize -in upstream.json -out normalized.json")
		os.Exit(2)
	}
	if err := run(*in, *out); err != nil {
		fmt.Fprintf(os.Stderr, "normalize: %v\n", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	raw, err := os.ReadFile(in)
	if err != nil {
		return fmt.Errorf("read spec: %w", err)
	}
	normalized, renames, err := Normalize(raw)
	if err != nil {
		return fmt.Errorf("normalize %s: %w", in, err)
	}
	for _, r := range renames {
		fmt.Fprintf(os.Stderr, "normalize: renamed schema %s\n", r)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("create output folder: %w", err)
	}
	if err := os.WriteFile(out, normalized, 0o644); err != nil {
		return fmt.Errorf("write normalised spec: %w", err)
	}
	return nil
}

// Normalize returns the normalised document and a description of each rename.
// Numbers are kept as written (json.Number) so that large integers such as
// NO_VAL (4294967294) survive the round trip.
func Normalize(raw []byte) ([]byte, []string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, fmt.Errorf("parse: %w", err)
	}
	components, _ := doc["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	if schemas == nil {
		return nil, nil, fmt.Errorf("no components.schemas")
	}

	collisions := findCollisions(schemas)
	var renames []string
	refMap := map[string]string{}
	for _, old := range collisions {
		newName := old + renameSuffix
		if _, taken := schemas[newName]; taken {
			return nil, nil, fmt.Errorf("cannot rename %s: %s already exists", old, newName)
		}
		schemas[newName] = schemas[old]
		delete(schemas, old)
		refMap["#/components/schemas/"+old] = "#/components/schemas/" + newName
		renames = append(renames, old+" -> "+newName)
	}
	rewriteRefs(doc, refMap)

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, nil, fmt.Errorf("encode: %w", err)
	}
	return buf.Bytes(), renames, nil
}

// findCollisions lists component schemas whose name equals "<parent>_<prop>"
// for a schema <parent> whose property <prop> is an inline object or array
// schema: ogen names that inline schema the same way and refuses the clash.
func findCollisions(schemas map[string]any) []string {
	seen := map[string]bool{}
	for parentName, s := range schemas {
		parent, _ := s.(map[string]any)
		props, _ := parent["properties"].(map[string]any)
		for prop, ps := range props {
			p, _ := ps.(map[string]any)
			if _, isRef := p["$ref"]; isRef || !isInlineComposite(p) {
				continue
			}
			candidate := parentName + "_" + prop
			if _, exists := schemas[candidate]; exists && goName(candidate) == goName(parentName)+goName(prop) {
				seen[candidate] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for name := range seen {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func isInlineComposite(s map[string]any) bool {
	switch s["type"] {
	case "object", "array":
		return true
	}
	_, hasProps := s["properties"]
	return hasProps
}

// goName approximates ogen's identifier derivation closely enough to compare
// two names: separators dropped, each word capitalised.
func goName(s string) string {
	var b strings.Builder
	upper := true
	for _, r := range s {
		switch {
		case r == '_' || r == '.' || r == '-' || r == '/':
			upper = true
		case upper:
			b.WriteString(strings.ToUpper(string(r)))
			upper = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func rewriteRefs(v any, refMap map[string]string) {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if k == "$ref" {
				if s, ok := child.(string); ok {
					if repl, ok := refMap[s]; ok {
						t[k] = repl
					}
				}
				continue
			}
			rewriteRefs(child, refMap)
		}
	case []any:
		for _, child := range t {
			rewriteRefs(child, refMap)
		}
	}
}
