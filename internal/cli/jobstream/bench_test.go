package jobstream_test

import (
	"bytes"
	"testing"

	"github.com/go-faster/jx"

	"github.com/droverhq/drover/internal/cli/jobstream"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// manyRecords is an answer whose "jobs" member lists n copies of the
// first record of ref, the rest of ref's members after it.
func manyRecords(b *testing.B, ref []byte, n int) []byte {
	b.Helper()
	var first jx.Raw
	var others []string
	var raws []jx.Raw
	err := jx.DecodeBytes(ref).Obj(func(d *jx.Decoder, key string) error {
		if key != "jobs" {
			raw, err := d.Raw()
			others, raws = append(others, key), append(raws, append(jx.Raw(nil), raw...))
			return err
		}
		return d.Arr(func(d *jx.Decoder) error {
			raw, err := d.Raw()
			if first == nil {
				first = append(jx.Raw(nil), raw...)
			}
			return err
		})
	})
	if err != nil {
		b.Fatal(err)
	}
	var e jx.Encoder
	e.ObjStart()
	e.FieldStart("jobs")
	e.ArrStart()
	for range n {
		e.Raw(first)
	}
	e.ArrEnd()
	for i, k := range others {
		e.FieldStart(k)
		e.Raw(raws[i])
	}
	e.ObjEnd()
	return e.Bytes()
}

// BenchmarkSplit is squeue's job list of 10,000 records read record by
// record.
func BenchmarkSplit(b *testing.B) {
	body := manyRecords(b, references(b)["job_running.json"], 10_000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for range b.N {
		if _, err := jobstream.Split(bytes.NewReader(body), func(*v0044.V0044JobInfo) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSplitAcct is sacct's accounting job list of 10,000 runs read
// run by run.
func BenchmarkSplitAcct(b *testing.B) {
	body := manyRecords(b, acctReferences(b)["slurmdb_jobs.json"], 10_000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for range b.N {
		if _, err := jobstream.SplitAcct(bytes.NewReader(body), func(*v0044.V0044Job) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
