package v0044

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// noValFields are the job description fields whose schema is a
// {set, infinite, number} object (v0.0.44_uint*_no_val_struct). slurmrestd's
// data parser also takes a plain number for them ("time_limit": 45 means
// {"set": true, "number": 45}), which the document does not say and the
// generated decoder refuses. TestNoValFieldsMatchSpec keeps the list equal
// to the document's.
var noValFields = map[string]bool{
	"begin_time":              true,
	"distribution_plane_size": true,
	"priority":                true,
	"time_limit":              true,
	"time_minimum":            true,
	"kill_warning_delay":      true,
	"memory_per_cpu":          true,
	"memory_per_node":         true,
	"required_switches":       true,
	"segment_size":            true,
}

// Paths of the operations whose bodies are job descriptions.
const (
	pathJobSubmit = "/slurm/v0.0.44/job/submit"
	pathJobPrefix = "/slurm/v0.0.44/job/"
)

// NormalizeBody rewrites what slurmrestd accepts in a request body but the
// v0.0.44 document does not, so that the generated decoder reads it as
// slurmrestd would: a plain number for a {set, infinite, number} field of
// a job description (POST /job/submit, POST /job/{job_id}). Any other
// body, and any body that is not a JSON object, is returned unchanged for
// the decoder to accept or refuse.
func NormalizeBody(method, path string, body []byte) []byte {
	if method != http.MethodPost || !strings.HasPrefix(path, pathJobPrefix) {
		return body
	}
	var top map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil || top == nil || len(bytes.TrimSpace(body[dec.InputOffset():])) != 0 {
		// Not one JSON object (trailing bytes included): the decoder
		// refuses it as slurmrestd does.
		return body
	}
	changed := false
	if path == pathJobSubmit {
		if desc, ok := normalizeDesc(top["job"]); ok {
			top["job"], changed = desc, true
		}
		var list []json.RawMessage
		if raw, has := top["jobs"]; has && json.Unmarshal(raw, &list) == nil {
			listChanged := false
			for i := range list {
				if desc, ok := normalizeDesc(list[i]); ok {
					list[i], listChanged = desc, true
				}
			}
			if listChanged {
				top["jobs"], _ = json.Marshal(list)
				changed = true
			}
		}
	} else {
		changed = normalizeFields(top)
	}
	if !changed {
		return body
	}
	out, err := json.Marshal(top)
	if err != nil {
		return body
	}
	return out
}

// normalizeDesc rewrites one job description object; ok is false when
// nothing changed.
func normalizeDesc(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) == 0 {
		return raw, false
	}
	var desc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &desc); err != nil || desc == nil {
		return raw, false
	}
	if !normalizeFields(desc) {
		return raw, false
	}
	out, err := json.Marshal(desc)
	if err != nil {
		return raw, false
	}
	return out, true
}

// normalizeFields turns plain numbers of no-val fields into objects.
func normalizeFields(desc map[string]json.RawMessage) bool {
	changed := false
	for name, raw := range desc {
		if !noValFields[name] {
			continue
		}
		var n json.Number
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&n) != nil {
			continue
		}
		obj, err := json.Marshal(struct {
			Set    bool        `json:"set"`
			Number json.Number `json:"number"`
		}{Set: true, Number: n})
		if err != nil {
			continue
		}
		desc[name] = obj
		changed = true
	}
	return changed
}
