package jobfmt

import (
	"github.com/droverhq/drover/internal/cli/readmodel"

	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-faster/jx"

	"github.com/droverhq/drover/internal/cli/clitest"
	"github.com/droverhq/drover/internal/fieldsel"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// referenceRecords reads every job record of the captured GET /job and
// /jobs answers of real slurmrestd.
func referenceRecords(t *testing.T) []v0044.V0044JobInfo {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(clitest.ReferenceDir(t), "rest", "v0.0.44", "job*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures of job records: %v", err)
	}
	var out []v0044.V0044JobInfo
	for _, f := range files {
		if strings.HasSuffix(f, ".req.json") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		jobs, err := jobsOf(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, jobs...)
	}
	return out
}

// jobsOf decodes the "jobs" of a captured answer, if it has any that
// are job records. slurmrestd writes null for the job_resources of a
// pending job, which the generated decoder refuses; such members are
// dropped first.
func jobsOf(b []byte) ([]v0044.V0044JobInfo, error) {
	var out []v0044.V0044JobInfo
	err := jx.DecodeBytes(b).ObjBytes(func(d *jx.Decoder, key []byte) error {
		if string(key) != "jobs" || d.Next() != jx.Array {
			return d.Skip()
		}
		return d.Arr(func(d *jx.Decoder) error {
			var rec jx.Encoder
			rec.ObjStart()
			err := d.ObjBytes(func(d *jx.Decoder, key []byte) error {
				raw, err := d.Raw()
				if err != nil || raw.Type() == jx.Null {
					return err
				}
				rec.FieldStart(string(key))
				rec.Raw(raw)
				return nil
			})
			if err != nil {
				return err
			}
			rec.ObjEnd()
			var w v0044.V0044JobInfo
			if err := w.Decode(jx.DecodeBytes(rec.Bytes())); err != nil {
				// The jobs of /jobs/state: not job records.
				return nil
			}
			out = append(out, w)
			return nil
		})
	})
	return out, err
}

// TestFieldMembers checks every field that lists its members: printed
// from a record holding only those members (and the ids), it prints as
// from the whole record, for every record captured from real Slurm.
func TestFieldMembers(t *testing.T) {
	recs := referenceRecords(t)
	if len(recs) < 10 {
		t.Fatalf("only %d captured records", len(recs))
	}
	ctx := &Context{Now: time.Unix(1764000000, 0)}
	for name, members := range fieldMembers {
		f, invalid := ParseLongFormat(name + ":0")
		if len(invalid) > 0 || len(f.Columns) != 1 || f.Columns[0].Field == nil || f.Columns[0].Field.Name != name {
			t.Errorf("field %s: not found by its name (%v)", name, invalid)
			continue
		}
		got, ok := f.Members()
		if !ok || !slices.Equal(got, members) {
			t.Errorf("field %s: Members() = %v, %v", name, got, ok)
		}
		keep := append(slices.Clone(IDMembers), members...)
		for i := range recs {
			whole := readmodel.FromV0044Job(&recs[i])
			sparseRec := clitest.ProjectJob(t, &recs[i], toSet(keep))
			sparse := readmodel.FromV0044Job(&sparseRec)
			if a, b := f.Row(&whole, ctx), f.Row(&sparse, ctx); a != b {
				t.Errorf("field %s, record %d (job %d): %q from the whole record, %q from %v", name, i, whole.JobID, a, b, keep)
			}
		}
	}
}

func TestMembersNeedWholeRecord(t *testing.T) {
	f, _ := ParseFormat("%i %Y")
	if _, ok := f.Members(); ok {
		t.Error("a format with %Y (no member list) reports its members")
	}
	f, _ = ParseFormat("%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R")
	m, ok := f.Members()
	if !ok || !slices.Contains(m, "user_name") || !slices.Contains(m, "nodes") {
		t.Errorf("default format members %v, %v", m, ok)
	}
	if m, ok := LetterMembers('M'); !ok || !slices.Equal(m, timeUsedMembers) {
		t.Errorf("LetterMembers('M') = %v, %v", m, ok)
	}
	if _, ok := LetterMembers('#'); ok {
		t.Error("LetterMembers('#') found a field")
	}
}

func toSet(names []string) fieldsel.Set {
	s := fieldsel.Set{}
	for _, n := range names {
		s[n] = struct{}{}
	}
	return s
}
