package scontrol

import (
	"strings"
	"testing"
	"time"

	"github.com/go-faster/jx"
	"github.com/google/go-cmp/cmp"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// words splits a fuzz input into command words (one per line, so that
// values may hold blanks).
func words(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// roundTrip encodes a request body with the generated encoder and decodes
// it back: what scontrol builds must survive the wire unchanged.
func roundTrip[T any, P interface {
	*T
	Encode(*jx.Encoder)
	Decode(*jx.Decoder) error
}](t *testing.T, v P) {
	var e jx.Encoder
	v.Encode(&e)
	var back T
	if err := P(&back).Decode(jx.DecodeBytes(e.Bytes())); err != nil {
		t.Fatalf("request %s does not decode: %v", e.Bytes(), err)
	}
	var e2 jx.Encoder
	P(&back).Encode(&e2)
	if string(e.Bytes()) != string(e2.Bytes()) {
		t.Fatalf("request changed on the wire:\n%s\n%s", e.Bytes(), e2.Bytes())
	}
}

func FuzzParseJobUpdate(f *testing.F) {
	for _, seed := range []string{
		"JobId=128\nTimeLimit=30",
		"jobid=999999\nTimeLimit=10",
		"JobId=130\nPriority=0",
		"JobId=128\nTimeLimit+=1:00:00",
		"JobId=128\nTimeLimit=-5",
		"JobId\n130\nPartition\ndebug",
		"JobName=foo\nNice",
		"JobId=12_[1-3]\nNumNodes=2-4\nGres=gpu:2",
		"JobId=1\nMailType=ALL\nStartTime=now+1hour\nDeadline=2027-01-01",
		"JobId=1\nComment+=x",
		"JobId=1\nOverSubscribe=yes\nContiguous=no\nReboot=1",
		"JobId=1\nNumCPUs=4-8\nMinMemoryNode=1024\nCoreSpec=*",
		"JobId=1\nSwitches=2@1:00\nDelayBoot=5:00",
	} {
		f.Add(seed)
	}
	env := jobUpdateEnv{
		now:     time.Date(2026, 11, 29, 15, 1, 1, 0, time.UTC),
		jobTime: func(string) (uint64, *updateError) { return 60, nil },
	}
	f.Fuzz(func(t *testing.T, in string) {
		argv := words(in)
		u, err := parseJobUpdate(argv, env)
		u2, err2 := parseJobUpdate(argv, env)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("parse is not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			if err.msg == "" {
				t.Fatalf("empty error message for %q", argv)
			}
			if diff := cmp.Diff(err, err2, cmp.AllowUnexported(updateError{})); diff != "" {
				t.Fatalf("errors differ: %s", diff)
			}
			return
		}
		if u.Changes == 0 {
			t.Fatalf("accepted %q without changes", argv)
		}
		var e1, e2 jx.Encoder
		u.Desc.Encode(&e1)
		u2.Desc.Encode(&e2)
		if string(e1.Bytes()) != string(e2.Bytes()) || u.JobID != u2.JobID {
			t.Fatalf("parse is not deterministic for %q", argv)
		}
		roundTrip[v0044.V0044JobDescMsg](t, &u.Desc)
		if u.JobID != "" {
			// Whatever JobId= says, splitting it must not panic and
			// must give ids made of digits, '_' and task ranges only.
			if ids, ok := expandJobIDs(u.JobID); ok {
				for _, id := range ids {
					if id == "" || strings.ContainsAny(id, " []") {
						t.Fatalf("bad job id %q from %q", id, u.JobID)
					}
				}
			}
		}
	})
}

func FuzzParseNodeUpdate(f *testing.F) {
	for _, seed := range []string{
		"NodeName=rc1\nState=DRAIN\nReason=disk",
		"NodeName=n[1-4]\nState=DOWN\nReason=\"x\"",
		"NodeName=rc1\nState=RESUME",
		"nodename=rc1\nstate=idle",
		"NodeName=rc1\nState=DRAIN\nReason=x\nResumeAfter=60",
		"NodeName=rc1\nFeatures=a,b\nWeight=5\nGres=gpu:2",
		"NodeName=rc1\nState=POWER_DOWN_FORCE",
		"NodeName=rc1\nState=bogus",
		"NodeName=rc1\nFoo",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		argv := words(in)
		u, err := parseNodeUpdate(argv)
		if err != nil {
			if err.msg == "" {
				t.Fatalf("empty error message for %q", argv)
			}
			return
		}
		if u.Changes == 0 {
			t.Fatalf("accepted %q without changes", argv)
		}
		for _, s := range u.Msg.State {
			if (s == "DOWN" || s == "DRAIN" || s == "FAIL") && u.Msg.Reason.Or("") == "" {
				t.Fatalf("accepted %q: %s without a reason", argv, s)
			}
		}
		roundTrip[v0044.V0044UpdateNodeMsg](t, &u.Msg)
	})
}

func FuzzExpandJobIDs(f *testing.F) {
	for _, seed := range []string{"128", "128,129", "131_1", "131_[1-3]", "[100-102]", "12+1", "1 2", "[1-3]_[4-5]", "a", "1-2"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ids, ok := expandJobIDs(in)
		if !ok {
			return
		}
		if len(ids) == 0 {
			t.Fatalf("%q accepted without ids", in)
		}
		for _, id := range ids {
			// Every id is a job number, optionally followed by "_" and
			// an array task list of digits, ',' and '-'.
			job, task, hasTask := strings.Cut(id, "_")
			if job == "" || strings.Trim(job, "0123456789+") != "" || job[0] == '+' {
				t.Fatalf("%q gave id %q", in, id)
			}
			if hasTask && (strings.Trim(task, "0123456789,-") != "" || !strings.ContainsAny(task, "0123456789")) {
				t.Fatalf("%q gave id %q", in, id)
			}
		}
	})
}

func FuzzParseReservation(f *testing.F) {
	for _, seed := range []string{
		"reservation\nReservationName=train\nStartTime=now\nDuration=60\nNodes=n[1-4]\nUsers=root",
		"ReservationName=r\nStartTime=now+1hour\nEndTime=2026-12-01T10:00:00\nNodeCnt=2\nAccounts=ml\nFlags=maint,ignore_jobs",
		"ReservationName=r\nDuration=UNLIMITED\nNodes=n[1-",
		"ReservationName=r\nNodeCnt=0",
		"bogus=1",
	} {
		f.Add(seed)
	}
	now := time.Unix(1_800_000_000, 0)
	f.Fuzz(func(t *testing.T, in string) {
		argv := words(in)
		r, err := parseReservation(argv, now)
		if err != nil {
			if err.msg == "" {
				t.Fatalf("empty error message for %q", argv)
			}
			return
		}
		roundTrip[v0044.V0044ReservationDescMsg](t, &r.desc)
	})
}
