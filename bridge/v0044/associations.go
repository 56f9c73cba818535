package v0044

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/droverhq/drover/bridge/v0044/limitwire"
	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/slurmerr"
	api "github.com/droverhq/drover/openapi/v0044"
)

var assocTemplate = sync.OnceValue(dbFilled[api.V0044Assoc])

// lineage is an association's path in slurmdbd's notation: "/" for root,
// "/acct/" for an account below root, "/acct/0-user/" (with
// "partition/" after) for a user's association.
func lineage(m *assoc.Model, a assoc.Association) string {
	if a.User != "" {
		acct, _ := m.Assoc(a.Account, "", "")
		l := lineage(m, acct) + "0-" + a.User + "/"
		if a.Partition != "" {
			l += a.Partition + "/"
		}
		return l
	}
	var path []string
	for cur, seen := a, 0; cur.Account != assoc.RootAccount && cur.Account != "" && seen < 64; seen++ {
		path = append(path, cur.Account)
		next, ok := m.Assoc(cur.ParentAccount, "", "")
		if !ok {
			break
		}
		cur = next
	}
	slices.Reverse(path)
	if len(path) == 0 {
		return "/"
	}
	return "/" + strings.Join(path, "/") + "/"
}

// isDefault reports whether a is its user's default association: the one
// with the user's default account (and no partition, when there is one).
func isDefault(m *assoc.Model, a assoc.Association) bool {
	if a.User == "" {
		return false
	}
	u, ok := m.User(a.User)
	if !ok || u.DefaultAccount != a.Account {
		return false
	}
	if a.Partition == "" {
		return true
	}
	_, plain := m.Assoc(a.Account, a.User, "")
	return !plain
}

// assocToWire writes an association as slurmdbd lists it: with raw, what
// it sets itself (sacctmgr's WOPLimits); otherwise the QOS, default QOS and
// priority it inherits filled in from its parents.
func (s *Server) assocToWire(m *assoc.Model, a assoc.Association, raw bool) api.V0044Assoc {
	w := assocTemplate()
	qos, def, prio, prioSet := a.QOS, a.DefaultQOS, a.Priority, a.PrioritySet
	if !raw {
		e := m.Effective(a)
		qos, def, prio = e.QOS, e.DefaultQOS, e.Priority
		prioSet = prioSet || e.Priority != 0
	}
	w.Account = api.NewOptString(a.Account)
	w.Accounting = api.V0044AccountingList{}
	w.Cluster = api.NewOptString(s.ctl.ClusterName())
	w.Comment = api.NewOptString("")
	w.Default = api.NewOptV0044AssocDefault(api.V0044AssocDefault{Qos: api.NewOptString(def)})
	w.Flags = []api.V0044AssocFlagsItem{}
	w.ID = api.NewOptInt32(int32(a.ID))
	w.IsDefault = api.NewOptBool(isDefault(m, a))
	w.Lineage = api.NewOptString(lineage(m, a))
	parent := ""
	if a.User == "" && a.Account != assoc.RootAccount {
		parent = a.ParentAccount
	}
	w.ParentAccount = api.NewOptString(parent)
	w.Partition = api.NewOptString(a.Partition)
	w.Priority = api.NewOptV0044Uint32NoValStruct(u32Inf())
	if prioSet {
		w.Priority = api.NewOptV0044Uint32NoValStruct(u32(prio))
	}
	w.Qos = api.V0044QosStringIDList(append([]string{}, qos...))
	w.SharesRaw = api.NewOptInt32(int32(a.Shares))
	w.User = a.User
	limitwire.AssocToWire(a.Limits, &w)
	return w
}

// assocFilter is the association condition of a query: each list, when
// given, keeps the associations with one of its values ("" included: user=
// with no value keeps the accounts' own associations).
type assocFilter struct {
	accounts, users, partitions, parents []string
	qos, defQOS, ids, clusters           []string
	hasAccounts, hasUsers, hasPartitions bool
	hasParents, hasQOS, hasDefQOS        bool
	hasIDs, hasClusters                  bool
	onlyDefaults, raw                    bool
}

// keepEmpty splits a comma-separated condition, keeping an empty value.
func keepEmpty(o api.OptString) ([]string, bool) {
	v, ok := o.Get()
	if !ok {
		return nil, false
	}
	var out []string
	for _, f := range strings.Split(v, ",") {
		out = append(out, strings.TrimSpace(f))
	}
	return out, true
}

func (f *assocFilter) selects() bool {
	return f.hasAccounts || f.hasUsers || f.hasPartitions || f.hasParents || f.hasIDs || f.hasQOS || f.hasDefQOS
}

func (f *assocFilter) keep(m *assoc.Model, a assoc.Association, cluster string) bool {
	in := func(has bool, list []string, v string) bool { return !has || slices.Contains(list, v) }
	if !in(f.hasClusters, f.clusters, cluster) || !in(f.hasAccounts, f.accounts, a.Account) ||
		!in(f.hasPartitions, f.partitions, a.Partition) || !in(f.hasIDs, f.ids, strconv.FormatUint(uint64(a.ID), 10)) {
		return false
	}
	if f.hasUsers && !slices.Contains(f.users, a.User) {
		return false
	}
	if f.hasParents {
		parent := a.ParentAccount
		if a.User != "" {
			parent = ""
		}
		if !slices.Contains(f.parents, parent) {
			return false
		}
	}
	e := m.Effective(a)
	if f.hasQOS && !slices.ContainsFunc(e.QOS, func(q string) bool { return slices.Contains(f.qos, q) }) {
		return false
	}
	if f.hasDefQOS && !slices.Contains(f.defQOS, e.DefaultQOS) {
		return false
	}
	return !f.onlyDefaults || isDefault(m, a)
}

func (f *assocFilter) read(account, cluster, defQOS, onlyDefs, raw, wopl, id, parent, partition, qos, user api.OptString) {
	f.accounts, f.hasAccounts = keepEmpty(account)
	f.clusters, f.hasClusters = keepEmpty(cluster)
	f.defQOS, f.hasDefQOS = keepEmpty(defQOS)
	f.ids, f.hasIDs = keepEmpty(id)
	f.parents, f.hasParents = keepEmpty(parent)
	f.partitions, f.hasPartitions = keepEmpty(partition)
	f.qos, f.hasQOS = keepEmpty(qos)
	f.users, f.hasUsers = keepEmpty(user)
	f.onlyDefaults = flagSet(onlyDefs)
	f.raw = flagSet(raw) || flagSet(wopl)
}

func (s *Server) selectAssocs(m *assoc.Model, f *assocFilter) []assoc.Association {
	var out []assoc.Association
	cluster := s.ctl.ClusterName()
	for _, a := range m.Associations() {
		if f.keep(m, a, cluster) {
			out = append(out, a)
		}
	}
	return out
}

func (s *Server) assocsResp(ctx context.Context, m *assoc.Model, list []assoc.Association, raw bool, warning string) *api.V0044OpenapiAssocsResp {
	out := api.V0044AssocList{}
	for _, a := range list {
		out = append(out, s.assocToWire(m, a, raw))
	}
	return &api.V0044OpenapiAssocsResp{Associations: out, Meta: s.dbMeta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: dbWarnings("_dump_assoc_cond", warning)}
}

// SlurmdbV0044GetAssociations implements GET
// /slurmdb/v0.0.44/associations/, in tree order.
func (s *Server) SlurmdbV0044GetAssociations(ctx context.Context, p api.SlurmdbV0044GetAssociationsParams) (api.SlurmdbV0044GetAssociationsRes, error) {
	var f assocFilter
	f.read(p.Account, p.Cluster, p.DefaultQos, p.FilterToOnlyDefaults, p.IncludeTheRawQOSOrDeltaQos, p.ExcludeLimitsFromParents, p.ID, p.ParentAccount, p.Partition, p.Qos, p.User)
	m := s.ctl.Accounting()
	list := s.selectAssocs(m, &f)
	warning := ""
	if len(list) == 0 {
		warning = "slurmdb_associations_get() found nothing"
	}
	return s.assocsResp(ctx, m, list, f.raw, warning), nil
}

// SlurmdbV0044GetAssociation implements GET
// /slurmdb/v0.0.44/association/: at most one association, or an error.
func (s *Server) SlurmdbV0044GetAssociation(ctx context.Context, p api.SlurmdbV0044GetAssociationParams) (api.SlurmdbV0044GetAssociationRes, error) {
	var f assocFilter
	f.read(p.Account, p.Cluster, p.DefaultQos, p.FilterToOnlyDefaults, p.IncludeTheRawQOSOrDeltaQos, p.ExcludeLimitsFromParents, p.ID, p.ParentAccount, p.Partition, p.Qos, p.User)
	m := s.ctl.Accounting()
	list := s.selectAssocs(m, &f)
	if len(list) > 1 {
		err := slurmerr.New(slurmerr.DataAmbiguousQuery, "Ambiguous request: More than 1 association would have been dumped.")
		r := s.assocsResp(ctx, m, nil, f.raw, "")
		r.Errors = dbErrors(err, "_dump_assoc_cond")
		return &api.V0044OpenapiAssocsRespStatusCode{StatusCode: 422, Response: *r}, nil
	}
	warning := ""
	if len(list) == 0 {
		warning = "slurmdb_associations_get() found nothing"
	}
	return s.assocsResp(ctx, m, list, f.raw, warning), nil
}

// removedName names a removed association as slurmdbd's remove list does.
func removedName(cluster string, a assoc.Association) string {
	switch {
	case a.Partition != "":
		return fmt.Sprintf("C = %-10s A = %-10s U = %-9s P = %s", cluster, a.Account, a.User, a.Partition)
	case a.User != "":
		return fmt.Sprintf("C = %-10s A = %-10s U = %-9s", cluster, a.Account, a.User)
	case a.ParentAccount != "" && a.Account != assoc.RootAccount:
		return fmt.Sprintf("C = %-10s A = %s of %s", cluster, a.Account, a.ParentAccount)
	}
	return fmt.Sprintf("C = %-10s A = %s", cluster, a.Account)
}

// deleteAssocs removes what f selects (an account's association with
// everything below it) in one change and answers with the associations
// removed; one refuses removing more than one.
func (s *Server) deleteAssocs(ctx context.Context, f *assocFilter, one bool) assocsRemovedRes {
	resp := api.V0044OpenapiAssocsRemovedResp{RemovedAssociations: api.V0044StringList{}, Meta: s.dbMeta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}
	fail := func(err error) assocsRemovedRes {
		resp.Errors = dbErrors(err, "_delete_assoc")
		return &api.V0044OpenapiAssocsRemovedRespStatusCode{StatusCode: dbStatus(err), Response: resp}
	}
	if !f.selects() {
		return fail(slurmerr.New(slurmerr.InvalidQuery, "no association conditions given to remove"))
	}
	m := s.ctl.Accounting()
	list := s.selectAssocs(m, f)
	if len(list) == 0 {
		return fail(slurmerr.New(slurmerr.NoChangeInData, "remove associations failed: nothing matched"))
	}
	// An account's association takes what is below it along; name only
	// the topmost of what was selected.
	var ch assoc.Change
	var tops []string
	for _, a := range list {
		l := lineage(m, a)
		if slices.ContainsFunc(tops, func(t string) bool { return strings.HasPrefix(l, t) }) {
			continue
		}
		if a.User == "" {
			tops = append(tops, l)
		}
		a := a
		ch = append(ch, assoc.Item{Kind: assoc.KindAssoc, Delete: true, Assoc: &a})
	}
	next, err := m.Apply(ch)
	if err != nil {
		return fail(err)
	}
	removed := m.Removed(next)
	if one && len(removed) > 1 {
		return fail(slurmerr.New(slurmerr.DataAmbiguousModify, "ambiguous request: More than 1 association would have been deleted."))
	}
	if err := s.changeAccounting(ctx, ch); err != nil {
		return fail(err)
	}
	cluster := s.ctl.ClusterName()
	for _, a := range removed {
		resp.RemovedAssociations = append(resp.RemovedAssociations, removedName(cluster, a))
	}
	return &resp
}

// assocsRemovedRes is the answer of both association removals.
type assocsRemovedRes interface {
	api.SlurmdbV0044DeleteAssociationsRes
	api.SlurmdbV0044DeleteAssociationRes
}

// SlurmdbV0044DeleteAssociations implements DELETE
// /slurmdb/v0.0.44/associations/.
func (s *Server) SlurmdbV0044DeleteAssociations(ctx context.Context, p api.SlurmdbV0044DeleteAssociationsParams) (api.SlurmdbV0044DeleteAssociationsRes, error) {
	var f assocFilter
	f.read(p.Account, p.Cluster, p.DefaultQos, p.FilterToOnlyDefaults, p.IncludeTheRawQOSOrDeltaQos, p.ExcludeLimitsFromParents, p.ID, p.ParentAccount, p.Partition, p.Qos, p.User)
	return s.deleteAssocs(ctx, &f, false), nil
}

// SlurmdbV0044DeleteAssociation implements DELETE
// /slurmdb/v0.0.44/association/: refused when it would remove more than
// one association.
func (s *Server) SlurmdbV0044DeleteAssociation(ctx context.Context, p api.SlurmdbV0044DeleteAssociationParams) (api.SlurmdbV0044DeleteAssociationRes, error) {
	var f assocFilter
	f.read(p.Account, p.Cluster, p.DefaultQos, p.FilterToOnlyDefaults, p.IncludeTheRawQOSOrDeltaQos, p.ExcludeLimitsFromParents, p.ID, p.ParentAccount, p.Partition, p.Qos, p.User)
	return s.deleteAssocs(ctx, &f, true), nil
}

// assocFromWire reads a posted association over the one it updates (old;
// zero for a new one): shares, priority, default QOS and parent left out
// are kept; the QOS list is the one given (empty: inherited).
func assocFromWire(w *api.V0044Assoc, old assoc.Association, exists bool) (assoc.Association, error) {
	a := old
	if !exists {
		a = assoc.Association{Shares: 1}
	}
	a.Account, a.User, a.Partition = w.Account.Or(""), w.User, w.Partition.Or("")
	if a.Account == "" {
		return a, slurmerr.New(slurmerr.InvalidAccount, "association without an account")
	}
	if p := w.ParentAccount.Or(""); p != "" && a.User == "" {
		a.ParentAccount = p
	}
	if n, ok := w.SharesRaw.Get(); ok && n > 0 {
		a.Shares = uint32(n)
	}
	switch n, how := readU32(w.Priority); how {
	case noValNumber:
		a.Priority, a.PrioritySet = n, true
	case noValClear:
		a.Priority, a.PrioritySet = 0, false
	}
	a.QOS = append([]string(nil), w.Qos...)
	if d, ok := w.Default.Get(); ok {
		if q, ok := d.Qos.Get(); ok {
			a.DefaultQOS = q
		}
	}
	a.Limits = limitwire.AssocFromWire(w, a.Limits)
	return a, nil
}

// SlurmdbV0044PostAssociations implements POST
// /slurmdb/v0.0.44/associations/: each association (by account, user and
// partition) added or updated, all in one change.
func (s *Server) SlurmdbV0044PostAssociations(ctx context.Context, req api.OptV0044OpenapiAssocsResp) (api.SlurmdbV0044PostAssociationsRes, error) {
	body, _ := req.Get()
	ch, err := assocItems(s.ctl.Accounting(), body.Associations)
	if err != nil {
		return s.dbFail(ctx, err, "_foreach_update_assoc"), nil
	}
	return s.applyChange(ctx, ch, nil, "_foreach_update_assoc"), nil
}

// assocItems are the changes a list of association records asks for.
func assocItems(m *assoc.Model, list api.V0044AssocList) (assoc.Change, error) {
	var ch assoc.Change
	for i := range list {
		w := &list[i]
		old, exists := m.Assoc(w.Account.Or(""), w.User, w.Partition.Or(""))
		a, err := assocFromWire(w, old, exists)
		if err != nil {
			return nil, err
		}
		ch = append(ch, assoc.Item{Kind: assoc.KindAssoc, Assoc: &a})
	}
	return ch, nil
}
