package droverv1

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/acctdb"
	"github.com/droverhq/drover/internal/authctx"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/reportproto"
	"github.com/droverhq/drover/internal/slurmerr"
)

// reportRoutes adds sreport's and sacct's paths (internal/reportproto)
// to mux.
func reportRoutes(mux *http.ServeMux, ctl *controller.Controller) {
	stepUsageRoute(mux, ctl)
	mux.HandleFunc("GET "+reportproto.PathUsage, func(w http.ResponseWriter, r *http.Request) {
		caller, _ := authctx.From(r.Context())
		q, err := usageQuery(r, ctl.ClusterName())
		var usage []acctdb.ClusterUsage
		if err == nil {
			usage, err = ctl.AccountingUsage(r.Context(), caller.Identity, q)
		}
		if err != nil {
			ReplyError(w, err, "accounting usage")
			return
		}
		out := reportproto.Usage{Clusters: []reportproto.Cluster{}}
		for _, u := range usage {
			c := reportproto.Cluster{Name: u.Cluster, Reported: u.Reported, Allocated: u.Allocated, Down: u.Down, Planned: u.Planned,
				Idle: u.Idle(), Assocs: []reportproto.Assoc{}, Sizes: []reportproto.Size{}}
			for _, a := range u.Assocs {
				c.Assocs = append(c.Assocs, reportproto.Assoc{Account: a.Account, User: a.User, UID: a.UID, CPUSeconds: a.CPUSeconds})
			}
			for _, z := range u.Sizes {
				c.Sizes = append(c.Sizes, reportproto.Size{Account: z.Account, CPUs: z.CPUs, Jobs: z.Jobs, CPUSeconds: z.CPUSeconds})
			}
			out.Clusters = append(out.Clusters, c)
		}
		replyJSON(w, http.StatusOK, out)
	})
}

// stepUsageRoute adds sacct's step usage path to mux.
func stepUsageRoute(mux *http.ServeMux, ctl *controller.Controller) {
	mux.HandleFunc("GET "+reportproto.PathStepUsage, func(w http.ResponseWriter, r *http.Request) {
		caller, _ := authctx.From(r.Context())
		f := acctdb.Filter{Clusters: []string{ctl.ClusterName()}, Duplicates: true}
		if c := r.URL.Query().Get("cluster"); c != "" {
			f.Clusters = []string{c}
		}
		for _, v := range strings.Split(r.URL.Query().Get("jobs"), ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
			if err != nil || n == 0 {
				ReplyError(w, slurmerr.New(slurmerr.InvalidJobID, "Invalid job id: %s", v), "step usage")
				return
			}
			f.JobIDs = append(f.JobIDs, uint32(n))
		}
		if len(f.JobIDs) > 1000 {
			ReplyError(w, slurmerr.New(slurmerr.InvalidQuery, "at most 1000 jobs at once"), "step usage")
			return
		}
		_, steps, err := ctl.AccountingJobs(r.Context(), caller.Identity, f)
		if err != nil {
			ReplyError(w, err, "step usage")
			return
		}
		out := reportproto.StepUsages{Steps: []reportproto.StepUsage{}}
		for _, st := range steps {
			if st.Usage.Stats.Tasks > 0 {
				out.Steps = append(out.Steps, reportproto.StepUsage{JobID: st.JobID, Run: st.Run, StepID: st.StepID, Stats: st.Usage.Stats})
			}
		}
		replyJSON(w, http.StatusOK, out)
	})
}

// usageQuery reads ?start, ?end (epoch seconds) and ?clusters.
func usageQuery(r *http.Request, local string) (acctdb.UsageQuery, error) {
	v := r.URL.Query()
	q := acctdb.UsageQuery{Clusters: []string{local}}
	for name, dst := range map[string]*time.Time{"start": &q.Start, "end": &q.End} {
		n, err := strconv.ParseInt(v.Get(name), 10, 64)
		if err != nil || n < 0 {
			return q, slurmerr.New(slurmerr.InvalidTimeValue, "invalid %s %q", name, v.Get(name))
		}
		*dst = time.Unix(n, 0)
	}
	if !q.End.After(q.Start) {
		return q, slurmerr.New(slurmerr.InvalidTimeValue, "the period ends before it starts")
	}
	if c := v.Get("clusters"); c != "" {
		q.Clusters = strings.Split(c, ",")
		if c == "all" {
			q.Clusters = nil
		}
	}
	return q, nil
}
