package jobfmt

import (
	"github.com/droverhq/drover/internal/cli/readmodel"

	"strings"
	"testing"
	"time"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// benchRecord is a running job as the bridge sends it whole: squeue's
// per-record work is reading such a record into a row and printing it.
const benchRecord = `{"account":"physics","array_job_id":{"set":true,"infinite":false,"number":0},
"array_task_id":{"set":false,"infinite":false,"number":0},"batch_flag":true,"batch_host":"n001",
"cpus":{"set":true,"infinite":false,"number":64},"cpus_per_task":{"set":true,"infinite":false,"number":1},
"current_working_directory":"/home/alice","end_time":{"set":true,"infinite":false,"number":1700003600},
"exit_code":{"status":["SUCCESS"],"return_code":{"set":true,"infinite":false,"number":0}},
"group_id":1000,"group_name":"alice","job_id":4242,"job_state":["RUNNING"],"name":"train-llm",
"node_count":{"set":true,"infinite":false,"number":8},"nodes":"n[001-008]","partition":"gpu",
"priority":{"set":true,"infinite":false,"number":1000},"qos":"normal",
"shared":[],"start_time":{"set":true,"infinite":false,"number":1700000000},
"state_reason":"None","submit_time":{"set":true,"infinite":false,"number":1699999000},
"tasks":{"set":true,"infinite":false,"number":64},"time_limit":{"set":true,"infinite":false,"number":60},
"tres_alloc_str":"cpu=64,mem=512G,node=8,billing=64,gres/gpu=32","user_id":1000,"user_name":"alice",
"memory_per_node":{"set":true,"infinite":false,"number":65536},"memory_per_cpu":{"set":false,"infinite":false,"number":0}}`

// BenchmarkSqueueRecord is squeue's cost per job of its default layout:
// one reused row filled from the wire record, then printed.
func BenchmarkSqueueRecord(b *testing.B) {
	var w v0044.V0044JobInfo
	if err := w.UnmarshalJSON([]byte(benchRecord)); err != nil {
		b.Fatal(err)
	}
	f, invalid := ParseLongFormat("jobarrayid:.18 ,partition:.9 ,name:.8 ,username:.8 ,statecompact:.2 ,timeused:.10 ,numnodes:.6 ,reasonlist:0")
	if len(invalid) > 0 {
		b.Fatal(invalid)
	}
	ctx := &Context{Now: time.Unix(1700001800, 0)}
	var sb strings.Builder
	var j Job
	b.ReportAllocs()
	for b.Loop() {
		j = fill(&w)
		sb.Reset()
		f.WriteRow(&sb, &j, ctx)
	}
}

// BenchmarkFill is the reading alone.
func BenchmarkFill(b *testing.B) {
	var w v0044.V0044JobInfo
	if err := w.UnmarshalJSON([]byte(benchRecord)); err != nil {
		b.Fatal(err)
	}
	var j Job
	b.ReportAllocs()
	for b.Loop() {
		j = fill(&w)
	}
	_ = j
}

func fill(w *v0044.V0044JobInfo) Job { return readmodel.FromV0044Job(w) }
