// Package clusters reads the submit commands' -M/--clusters list as
// Slurm's do: the cluster the controller serves is the one a job can go
// to, named in the list in any case, or by "all".
package clusters

import (
	"context"
	"fmt"
	"strings"

	"github.com/droverhq/drover/internal/cli/clienv"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Select checks list against the controller's cluster. It returns that
// cluster's name, the errors to print (one per name the accounting does
// not know, then, when nothing is left, that the list cannot be reached),
// and whether the job may be submitted.
func Select(ctx context.Context, client clienv.API, list string) (string, []string, bool) {
	local := ""
	if client != nil {
		if res, err := client.SlurmV0044GetPing(ctx); err == nil {
			if r, ok := res.(*v0044.V0044OpenapiPingArrayResp); ok {
				if m, ok := r.Meta.Get(); ok {
					if s, ok := m.Slurm.Get(); ok {
						local = s.Cluster.Or("")
					}
				}
			}
		}
	}
	var msgs []string
	found := false
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
		case local != "" && (strings.EqualFold(name, "all") || strings.EqualFold(name, local)):
			found = true
		default:
			msgs = append(msgs, fmt.Sprintf("No cluster '%s' known by database.", name))
		}
	}
	if !found {
		msgs = append(msgs, fmt.Sprintf("'%s' can't be reached now, or it is an invalid entry for --cluster.  Use 'sacctmgr list clusters' to see available clusters.", list))
	}
	return local, msgs, found
}
