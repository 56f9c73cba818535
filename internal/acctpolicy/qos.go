package acctpolicy

import (
	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/job"
)

// QOSOrder is the QOS whose limits hold job request r in model m, first
// the one whose limits win: the partition's QOS partQOS (PartitionName
// QOS=), then the job's own, or its own first when it has OverPartQOS, as
// slurmctld orders them. A partition QOS the accounting does not know is
// skipped. The limits a job runs under and those its submission is
// counted against both come from this order.
func QOSOrder(m *assoc.Model, r *job.Request, partQOS string) []assoc.QOS {
	var out []assoc.QOS
	own, ok := m.QOS(r.QOS)
	if ok && r.QOS != "" {
		out = append(out, own)
	}
	if partQOS != "" && partQOS != r.QOS {
		if pq, ok := m.QOS(partQOS); ok {
			if len(out) == 1 && own.HasFlag(assoc.FlagOverPartQOS) {
				out = append(out, pq)
			} else {
				out = append([]assoc.QOS{pq}, out...)
			}
		}
	}
	return out
}
