package trace

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadSWF(t *testing.T) {
	tr, err := Open("testdata/small.swf")
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{ID: "1", Submit: 0, Run: 100, Estimate: 100, Procs: 2, Wait: 0, User: 1},
		{ID: "2", Submit: 1, Run: 100, Estimate: 100, Procs: 4, Wait: 99, User: 2},
		// No requested processors: the allocated ones.
		{ID: "3", Submit: 2, Run: 30, Estimate: 30, Procs: 1, Wait: 28, User: 3},
		{ID: "6", Submit: 5, Run: 20, Estimate: 60, Procs: 8, Wait: 195, User: 3},
	}
	if diff := cmp.Diff(want, tr.Jobs); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
	if tr.Kind != CPU || tr.MaxProcs != 4 || tr.Skipped != 2 {
		t.Errorf("kind %v max procs %d skipped %d, want CPU 4 2", tr.Kind, tr.MaxProcs, tr.Skipped)
	}
}

func TestReadErrors(t *testing.T) {
	tests := map[string]string{
		"; c\n1 0 0 10 1\n": "line 2: 5 fields, SWF has 18",
		"1 0 0 ten 1 -1 -1 1 10 -1 1 1 -1 -1 1 -1 -1 -1\n":     `line 1: field 4: "ten" is not a number`,
		"job_id,submission_time,duration\n":                    "header: no num_gpu column (want job_id,submission_time,duration,num_gpu)",
		"job_id,submission_time,duration,num_gpu\na,1,2,x\n":   `line 2: num_gpu "x" is not a number`,
		"job_id,submission_time,duration,num_gpu\na,1,2,3,4\n": "record on line 2: wrong number of fields",
	}
	for in, want := range tests {
		_, err := Read(strings.NewReader(in), "t")
		if err == nil || err.Error() != want {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

// A .tar.gz of GPU traces is read whole (sorted by submission time) or
// one member at a time; gzip is found by its magic number.
func TestOpenCompressed(t *testing.T) {
	dir := t.TempDir()
	var tarball bytes.Buffer
	zw := gzip.NewWriter(&tarball)
	tw := tar.NewWriter(zw)
	members := map[string]string{
		"a.csv":     "job_id,submission_time,duration,num_gpu\nx,50,10,8\ny,10,5,1\nz,20,3,0\n",
		"b.csv":     "job_id,submission_time,duration,num_gpu\nw,30,7,16\n",
		"notes.txt": "not a trace",
	}
	for _, name := range []string{"a.csv", "b.csv", "notes.txt"} {
		body := members[name]
		if err := tw.WriteHeader(&tar.Header{Name: "traces/" + name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	path := filepath.Join(dir, "gpu.tar.gz")
	if err := os.WriteFile(path, tarball.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	all, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range all.Jobs {
		ids = append(ids, j.ID)
	}
	if got := strings.Join(ids, ","); got != "y,w,x" || all.Skipped != 1 || all.Kind != GPU {
		t.Errorf("whole tarball: jobs %s skipped %d kind %v", got, all.Skipped, all.Kind)
	}
	one, err := Open(path + ":b.csv")
	if err != nil || len(one.Jobs) != 1 || one.Jobs[0].GPUs != 16 || one.Jobs[0].Wait != -1 {
		t.Errorf("one member: %+v %v", one, err)
	}
	if _, err := Open(path + ":c.csv"); err == nil || !strings.Contains(err.Error(), `no member "c.csv"`) {
		t.Errorf("missing member: %v", err)
	}

	var gz bytes.Buffer
	zw = gzip.NewWriter(&gz)
	swf, _ := os.ReadFile("testdata/small.swf")
	zw.Write(swf)
	zw.Close()
	gzPath := filepath.Join(dir, "small.swf.gz")
	os.WriteFile(gzPath, gz.Bytes(), 0o644)
	if tr, err := Open(gzPath); err != nil || len(tr.Jobs) != 4 {
		t.Errorf("gzip SWF: %v %v", tr, err)
	}
}

// The real traces beside the repository read in full, with the job counts
// their README gives.
func TestRealTraces(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "traces")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("traces not found at %s", dir)
	}
	for name, want := range map[string]int{
		"CTC-SP2-1996-3.1-cln.swf.gz":                 77222,
		"HPC2N-2002-2.2-cln.swf.gz":                   202871,
		"microsoft-itp-elasticflow-raw-traces.tar.gz": 69351,
	} {
		tr, err := Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Jobs)+tr.Skipped != want {
			t.Errorf("%s: %d jobs and %d skipped, want %d in all", name, len(tr.Jobs), tr.Skipped, want)
		}
	}
}

func FuzzRead(f *testing.F) {
	swf, _ := os.ReadFile("testdata/small.swf")
	f.Add(swf)
	f.Add([]byte("job_id,submission_time,duration,num_gpu\na,1,2,3\n"))
	f.Add([]byte("1 0 0 1e400 1 -1 -1 1 10 -1 1 1 -1 -1 1 -1 -1 -1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Read(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		for _, j := range tr.Jobs {
			if j.Run < 0 || j.Submit < 0 || (j.Procs <= 0 && j.GPUs <= 0) || j.Estimate < 0 {
				t.Fatalf("replayable job out of range: %+v", j)
			}
		}
	})
}

// The header's MaxNodes and UnixStartTime are kept beside MaxProcs: the
// simulator makes nodes of MaxProcs/MaxNodes processors and dates its
// progress from the start.
func TestSWFMachineHeader(t *testing.T) {
	in := "; MaxNodes: 5832\n; MaxProcs: 93312 (16 a node)\n; UnixStartTime: 1000000000\n" +
		"1 0 0 10 16 -1 -1 16 60 -1 1 1 -1 -1 1 -1 -1 -1\n"
	tr, err := ReadSWF(strings.NewReader(in), "big")
	if err != nil {
		t.Fatal(err)
	}
	if tr.MaxNodes != 5832 || tr.MaxProcs != 93312 || tr.Start != 1000000000 {
		t.Errorf("nodes %d procs %d start %d, want 5832 93312 1000000000", tr.MaxNodes, tr.MaxProcs, tr.Start)
	}
}

// Scale makes the machine n times as large and the arrivals n times as
// fast, keeping each job's size and length; the logged waits go.
func TestScale(t *testing.T) {
	tr := &Trace{MaxProcs: 4, MaxNodes: 2, Jobs: []Job{
		{ID: "1", Submit: 100, Run: 50, Procs: 2, Wait: 3},
		{ID: "2", Submit: 130, Run: 60, Procs: 4, Wait: 0},
		{ID: "3", Submit: 400, Run: 70, Procs: 1, Wait: 9},
	}}
	if err := tr.Scale(10); err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{ID: "1", Submit: 100, Run: 50, Procs: 2, Wait: -1},
		{ID: "2", Submit: 103, Run: 60, Procs: 4, Wait: -1},
		{ID: "3", Submit: 130, Run: 70, Procs: 1, Wait: -1},
	}
	if d := cmp.Diff(want, tr.Jobs); d != "" {
		t.Errorf("jobs (-want +got):\n%s", d)
	}
	if tr.MaxProcs != 40 || tr.MaxNodes != 20 {
		t.Errorf("machine %d procs on %d nodes, want 40 on 20", tr.MaxProcs, tr.MaxNodes)
	}
	if err := tr.Scale(0); err == nil {
		t.Error("scale 0 accepted")
	}
}
