package sacct

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// capturedRows are the lines of real sacct's job 2 (testdata/real-22.05):
// its usage, as the records would carry it.
func capturedRows() []row {
	m := func(maxV, minV, ave, tot float64, maxNode, minNode string, maxTask, minTask int64) measure {
		return measure{max: maxV, min: minV, ave: ave, tot: tot, maxNode: maxNode, minNode: minNode, maxTask: maxTask, minTask: minTask}
	}
	job := row{jobID: "2", rawID: "2", nnodes: 2, start: 1, reqNodes: 2}
	batch := row{step: true, batch: true, jobID: "2.batch", rawID: "2.batch", nnodes: 1, hasUsage: true, layout: "Unknown",
		use: stepUse{
			cpu: m(0, 0, 0, 0, "n1", "n1", 0, 0), read: m(29622, 29622, 29622, 29622, "n1", "n1", 0, 0),
			write: m(1623, 1623, 1623, 1623, "n1", "n1", 0, 0), mem: m(10838016, 10838016, 10838016, 10838016, "n1", "n1", 0, 0),
			vmem: m(292880384, 292880384, 292880384, 292880384, "n1", "n1", 0, 0), pages: m(0, 0, 0, 0, "n1", "n1", 0, 0)}}
	step := row{step: true, jobID: "2.0", rawID: "2.0", nnodes: 2, hasUsage: true, layout: "Block",
		use: stepUse{
			cpu: m(50000, 17000, 27000, 108000, "n2", "n1", 3, 0), read: m(1685835, 1685835, 1685835, 6743340, "n2", "n2", 3, 3),
			write: m(1694, 1694, 1694, 6776, "n2", "n2", 3, 3), mem: m(66142208, 65945600, 66083840, 264335360, "n2", "n1", 3, 1),
			vmem: m(146305024, 146305024, 146305024, 585220096, "n2", "n2", 3, 3), pages: m(3, 0, 1, 4, "n2", "n1", 3, 2)}}
	return []row{job, batch, step}
}

// TestUsageMatchesRealSacct prints job 2's lines as real sacct did,
// field by field.
func TestUsageMatchesRealSacct(t *testing.T) {
	for _, file := range []string{"usage_P.out", "tres_P.out"} {
		data, err := os.ReadFile("testdata/real-22.05/" + file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		names := strings.Split(lines[0], "|")
		rows := capturedRows()
		for i, line := range lines[1:] {
			want := strings.Split(line, "|")
			var got []string
			for k, n := range names {
				f, ok := fields()[strings.ToLower(n)]
				if !ok {
					t.Fatalf("no field %s", n)
				}
				got = append(got, f.cell(&rows[i], &cellCtx{}))
				if i == 0 && (n == "ConsumedEnergy" || n == "ConsumedEnergyRaw") {
					want[k] = "" // 25.11 leaves the job's line empty (sacct_l_completed)
				}
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s, line %s (-real +ours):\n%s", file, want[0], d)
			}
		}
	}
}

// TestFieldList: every field real sacct lists with -e is known, with the
// width real sacct gives it.
func TestFieldList(t *testing.T) {
	data, err := os.ReadFile("testdata/real-22.05/header_all.out")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	help, err := os.ReadFile("testdata/real-22.05/helpformat.out")
	if err != nil {
		t.Fatal(err)
	}
	names, dashes := strings.Fields(string(help)), strings.Fields(lines[1])
	if len(names) != len(dashes) {
		t.Fatalf("%d names, %d columns", len(names), len(dashes))
	}
	for i, n := range names {
		f, ok := fields()[strings.ToLower(n)]
		switch {
		case !ok:
			t.Errorf("field %s unknown", n)
		case f.width != len(dashes[i]):
			t.Errorf("field %s: width %d, real sacct's %d", n, f.width, len(dashes[i]))
		}
	}
}
