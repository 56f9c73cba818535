package chaos

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Unix(1800000000, 0)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func submit(tag string, id uint32, o Outcome) Op {
	return Op{Kind: Submit, Tag: tag, JobID: id, Invoked: at(0), Completed: at(1), Outcome: o}
}

func TestCheckerPassesAGoodHistory(t *testing.T) {
	ops := []Op{submit("a", 1, OK), submit("b", 2, OK), submit("c", 0, Unknown), submit("d", 0, Unknown),
		{Kind: Cancel, JobID: 2, Completed: at(3), Outcome: OK}}
	final := []Job{{1, "a", "COMPLETED"}, {2, "b", "CANCELLED"}, {3, "c", "COMPLETED"}}
	marks := []Mark{{"start", 1, "n1", at(2)}, {"end", 1, "n1", at(4)}, {"start", 3, "n2", at(2)}, {"start", 2, "n1", at(2.5)}}
	v := Check(ops, final, marks)
	if !v.OK() || v.Acknowledged != 2 || v.Unknown != 2 || v.Runs != 3 || v.Cancelled != 1 {
		t.Fatalf("%v", v)
	}
}

func TestCheckerFindsEachBrokenPromise(t *testing.T) {
	for name, tc := range map[string]struct {
		ops   []Op
		final []Job
		marks []Mark
		want  string
	}{
		"lost": {
			ops: []Op{submit("a", 1, OK)}, final: nil, want: "acknowledged job 1 (a) is lost",
		},
		"twice": {
			ops: []Op{submit("a", 1, OK)}, final: []Job{{1, "a", "PENDING"}, {2, "a", "PENDING"}}, want: "submission a made 2 jobs",
		},
		"unknown made two": {
			ops: []Op{submit("a", 0, Unknown)}, final: []Job{{1, "a", "PENDING"}, {2, "a", "PENDING"}}, want: "submission a made 2 jobs",
		},
		"id repeats": {
			ops: []Op{submit("a", 1, OK), submit("b", 1, OK)}, final: []Job{{1, "a", "PENDING"}}, want: "job id 1 acknowledged for a and b",
		},
		"id given to another": {
			ops: []Op{submit("a", 1, OK), submit("b", 2, OK)}, final: []Job{{1, "b", "PENDING"}, {2, "a", "PENDING"}}, want: "acknowledged job 1 is \"b\" in the cluster",
		},
		"ran twice at once": {
			ops: []Op{submit("a", 1, OK)}, final: []Job{{1, "a", "RUNNING"}},
			marks: []Mark{{"start", 1, "n1", at(2)}, {"double", 1, "n2", at(3)}}, want: "job 1 started on n2",
		},
		"cancelled ran": {
			ops:   []Op{submit("a", 1, OK), {Kind: Cancel, JobID: 1, Completed: at(2), Outcome: OK}},
			final: []Job{{1, "a", "CANCELLED"}}, marks: []Mark{{"start", 1, "n1", at(2.5)}}, want: "job 1 started at",
		},
		"phantom": {
			ops: nil, final: []Job{{7, "x", "PENDING"}}, want: "no client submitted",
		},
		"ran unknown": {
			ops: []Op{submit("a", 1, OK)}, final: []Job{{1, "a", "RUNNING"}}, marks: []Mark{{"start", 9, "n1", at(1)}}, want: "job 9 ran",
		},
	} {
		v := Check(tc.ops, tc.final, tc.marks)
		if v.OK() || !strings.Contains(v.String(), tc.want) {
			t.Errorf("%s: %v, want a violation with %q", name, v, tc.want)
		}
	}
}

func TestParseMarks(t *testing.T) {
	ms, err := ParseMarks(strings.NewReader("start 12 n1 1800000000000000000\n\nend 12 n1 1800000001000000000\n"))
	if err != nil || len(ms) != 2 || ms[0].JobID != 12 || ms[1].Event != "end" || !ms[1].At.Equal(at(1)) {
		t.Fatalf("%+v %v", ms, err)
	}
	for _, bad := range []string{"start 1 n1", "begin 1 n1 5", "start x n1 5", "start 1 n1 y"} {
		if _, err := ParseMarks(strings.NewReader(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func FuzzParseMarks(f *testing.F) {
	f.Add("start 12 n1 1800000000000000000\nend 12 n1 1800000001000000000\n")
	f.Add("double 4294967295 h -1\n")
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := ParseMarks(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.Event != "start" && m.Event != "end" && m.Event != "double" {
				t.Fatalf("event %q", m.Event)
			}
		}
	})
}
