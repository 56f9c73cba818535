package slurmjson

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// listFormat writes resp through a List, element by element.
func listFormat(t *testing.T, resp v0044.V0044OpenapiJobInfoResp) string {
	t.Helper()
	var b bytes.Buffer
	l, err := NewList(&b, JobInfoResp(), "jobs")
	if err != nil {
		t.Fatal(err)
	}
	for i := range resp.Jobs {
		if err := l.Element(&resp.Jobs[i]); err != nil {
			t.Fatal(err)
		}
	}
	rest := resp
	rest.Jobs = v0044.V0044JobInfoMsg{}
	if err := l.Close(&rest); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A list written element by element is the text Format writes of the
// whole response: none, one and every captured job, with escapes and a
// fractional double.
func TestListMatchesFormat(t *testing.T) {
	resp := referenceJobs(t)
	odd := resp.Jobs[0]
	odd.Comment = v0044.NewOptString("quote \" backslash \\ slash / tab \t é")
	odd.BillableTres = v0044.NewOptV0044Float64NoValStruct(v0044.V0044Float64NoValStruct{
		Set: v0044.NewOptBool(true), Number: v0044.NewOptFloat64(0.1),
	})
	resp.Jobs = append(resp.Jobs, odd)
	for _, n := range []int{0, 1, len(resp.Jobs)} {
		part := resp
		part.Jobs = resp.Jobs[:n]
		if n == 0 {
			part.Jobs = v0044.V0044JobInfoMsg{}
		}
		want, err := Format(&part, JobInfoResp())
		if err != nil {
			t.Fatal(err)
		}
		if got := listFormat(t, part); got != want {
			t.Errorf("%d jobs: List differs from Format (-Format +List):\n%s", n, cmp.Diff(want, got))
		}
	}
}

// Nothing is written until an element or the end comes.
func TestListWritesNothingFirst(t *testing.T) {
	var b bytes.Buffer
	if _, err := NewList(&b, JobInfoResp(), "jobs"); err != nil {
		t.Fatal(err)
	}
	if b.Len() != 0 {
		t.Errorf("wrote %q before any element", b.String())
	}
	if _, err := NewList(&b, JobInfoResp(), "meta"); err == nil {
		t.Error("a list that is not the response's first member was taken")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestListWriteError(t *testing.T) {
	resp := referenceJobs(t)
	l, err := NewList(failWriter{}, JobInfoResp(), "jobs")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Element(&resp.Jobs[0]); err == nil {
		t.Error("a failed write was not reported")
	}
}
