package restapi

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

// reportRoutes adds sreport's path (internal/reportproto) to mux.
func reportRoutes(mux *http.ServeMux, ctl *controller.Controller) {
	mux.HandleFunc("GET "+reportproto.PathUsage, func(w http.ResponseWriter, r *http.Request) {
		caller, _ := authctx.From(r.Context())
		q, err := usageQuery(r, ctl.ClusterName())
		var usage []acctdb.ClusterUsage
		if err == nil {
			usage, err = ctl.AccountingUsage(r.Context(), caller.Identity, q)
		}
		if err != nil {
			replyError(w, err, "accounting usage")
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
