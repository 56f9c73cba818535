package sacctmgr

import (
	"fmt"
	"github.com/droverhq/drover/bridge/v0044/limitwire"
	"github.com/droverhq/drover/internal/assoc"
	"slices"
	"strings"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// The records sacctmgr works with, read from the slurmdb operations.

type qosRec struct {
	id          uint32
	name, desc  string
	prio        uint32
	preempt     []string // names, sorted
	mode        string   // "", "CANCEL", "REQUEUE", "SUSPEND"
	usageFactor float64
	grace       uint32 // seconds
	limits      assoc.Limits
	flags       []string // sacctmgr's names, in its order
}

type acctRec struct {
	name, desc, org string
}

type userRec struct {
	name, defAcct, admin string
}

type assocRec struct {
	id                                uint32
	cluster, account, user, partition string
	parent                            string // an account association's parent account
	shares                            uint32
	prio                              uint32
	prioSet                           bool
	qos                               []string
	defQOS                            string
	isDefault                         bool
	lineage                           string
	limits                            assoc.Limits
}

// restError is a refusal from the controller: Slurm's error number, its
// fixed message (slurm_strerror) and the request's detail.
type restError struct {
	code          int32
	message, desc string
}

func (e *restError) Error() string { return e.message }

// answerError returns the first error of an answer's errors[], or nil.
func answerError(errs v0044.V0044OpenapiErrors) error {
	if len(errs) == 0 {
		return nil
	}
	e := errs[0]
	return &restError{code: e.ErrorNumber.Or(1), message: e.Error.Or("Unspecified error"), desc: e.Description.Or("")}
}

// strerror is the message sacctmgr prints for a failed request.
func strerror(err error) string {
	if re, ok := err.(*restError); ok {
		return re.message
	}
	return err.Error()
}

func unexpected(res any) error {
	return fmt.Errorf("unexpected answer %T", res)
}

func (c *cmd) getQOS() ([]qosRec, error) {
	if c.qosCache != nil {
		return c.qosCache, nil
	}
	res, err := c.env.Client.SlurmdbV0044GetQos(c.ctx, v0044.SlurmdbV0044GetQosParams{})
	if err != nil {
		return nil, err
	}
	var list v0044.V0044QosList
	switch r := res.(type) {
	case *v0044.V0044OpenapiSlurmdbdQosResp:
		list = r.Qos
	case *v0044.V0044OpenapiSlurmdbdQosRespStatusCode:
		return nil, answerError(r.Response.Errors)
	default:
		return nil, unexpected(res)
	}
	out := []qosRec{}
	for _, w := range list {
		q := qosRec{
			id: uint32(w.ID.Or(0)), name: w.Name.Or(""), desc: w.Description.Or(""),
			prio: uint32(w.Priority.Value.Number.Or(0)), usageFactor: w.UsageFactor.Value.Number.Or(1),
		}
		q.flags = limitwire.QOSFlagsFromWire(w.Flags, nil)
		if l, ok := w.Limits.Get(); ok {
			q.limits = limitwire.QOSFromWire(l, assoc.Limits{})
			q.grace = uint32(l.GraceTime.Or(0))
		}
		if p, ok := w.Preempt.Get(); ok {
			q.preempt = append([]string{}, p.List...)
			slices.Sort(q.preempt)
			for _, m := range p.Mode {
				if m != v0044.V0044QosPreemptModeItemDISABLED {
					q.mode = string(m)
				}
			}
		}
		out = append(out, q)
	}
	c.qosCache = out
	return out, nil
}

func qosToWire(q qosRec) v0044.V0044Qos {
	mode := v0044.V0044QosPreemptModeItemDISABLED
	if q.mode != "" {
		mode = v0044.V0044QosPreemptModeItem(q.mode)
	}
	limits := v0044.V0044QosLimits{GraceTime: v0044.NewOptInt32(int32(q.grace))}
	limitwire.QOSToWire(q.limits, &limits)
	flags := limitwire.QOSFlagsToWire(q.flags)
	if len(flags) == 0 {
		// An empty list would keep the flags the QOS has: remove them.
		kept := slices.DeleteFunc(slices.Clone(assoc.QOSFlagNames), func(f string) bool { return !assoc.QOSFlagKept(f) })
		flags = append([]v0044.V0044QosFlagsItem{v0044.V0044QosFlagsItemREMOVE}, limitwire.QOSFlagsToWire(kept)...)
	}
	return v0044.V0044Qos{
		Name:        v0044.NewOptString(q.name),
		Flags:       flags,
		Description: v0044.NewOptString(q.desc),
		Priority:    v0044.NewOptV0044Uint32NoValStruct(u32(q.prio)),
		UsageFactor: v0044.NewOptV0044Float64NoValStruct(v0044.V0044Float64NoValStruct{Set: v0044.NewOptBool(true), Number: v0044.NewOptFloat64(q.usageFactor)}),
		Limits:      v0044.NewOptV0044QosLimits(limits),
		Preempt: v0044.NewOptV0044QosPreempt(v0044.V0044QosPreempt{
			List: v0044.V0044QosPreemptList(append([]string{}, q.preempt...)),
			Mode: []v0044.V0044QosPreemptModeItem{mode},
		}),
	}
}

func u32(n uint32) v0044.V0044Uint32NoValStruct {
	return v0044.V0044Uint32NoValStruct{Set: v0044.NewOptBool(true), Infinite: v0044.NewOptBool(false), Number: v0044.NewOptInt32(int32(n))}
}

// plainResult reads the payload-less answer of a change.
func plainResult(res any, err error) error {
	if err != nil {
		return err
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiResp:
		return answerError(r.Errors)
	case *v0044.V0044OpenapiRespStatusCode:
		if e := answerError(r.Response.Errors); e != nil {
			return e
		}
		return fmt.Errorf("HTTP %d", r.StatusCode)
	}
	return unexpected(res)
}

func (c *cmd) postQOS(list []qosRec) error {
	body := v0044.V0044OpenapiSlurmdbdQosResp{Qos: v0044.V0044QosList{}}
	for _, q := range list {
		body.Qos = append(body.Qos, qosToWire(q))
	}
	c.qosCache = nil
	return plainResult(c.env.Client.SlurmdbV0044PostQos(c.ctx, v0044.NewOptV0044OpenapiSlurmdbdQosResp(body), v0044.SlurmdbV0044PostQosParams{}))
}

func (c *cmd) deleteQOS(name string) error {
	c.qosCache = nil
	res, err := c.env.Client.SlurmdbV0044DeleteSingleQos(c.ctx, v0044.SlurmdbV0044DeleteSingleQosParams{Qos: name})
	if err != nil {
		return err
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiSlurmdbdQosRemovedResp:
		return answerError(r.Errors)
	case *v0044.V0044OpenapiSlurmdbdQosRemovedRespStatusCode:
		if e := answerError(r.Response.Errors); e != nil {
			return e
		}
		return fmt.Errorf("HTTP %d", r.StatusCode)
	}
	return unexpected(res)
}

func (c *cmd) getAccounts() ([]acctRec, error) {
	res, err := c.env.Client.SlurmdbV0044GetAccounts(c.ctx, v0044.SlurmdbV0044GetAccountsParams{})
	if err != nil {
		return nil, err
	}
	var list v0044.V0044AccountList
	switch r := res.(type) {
	case *v0044.V0044OpenapiAccountsResp:
		list = r.Accounts
	case *v0044.V0044OpenapiAccountsRespStatusCode:
		return nil, answerError(r.Response.Errors)
	default:
		return nil, unexpected(res)
	}
	out := []acctRec{}
	for _, w := range list {
		out = append(out, acctRec{name: w.Name, desc: w.Description, org: w.Organization})
	}
	slices.SortFunc(out, func(a, b acctRec) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

func (c *cmd) postAccounts(list []acctRec) error {
	body := v0044.V0044OpenapiAccountsResp{Accounts: v0044.V0044AccountList{}}
	for _, a := range list {
		body.Accounts = append(body.Accounts, v0044.V0044Account{
			Name: a.name, Description: a.desc, Organization: a.org,
			Associations: v0044.V0044AssocShortList{}, Coordinators: v0044.V0044CoordList{}, Flags: []v0044.V0044AccountFlagsItem{},
		})
	}
	return plainResult(c.env.Client.SlurmdbV0044PostAccounts(c.ctx, v0044.NewOptV0044OpenapiAccountsResp(body)))
}

func (c *cmd) deleteAccount(name string) error {
	res, err := c.env.Client.SlurmdbV0044DeleteAccount(c.ctx, v0044.SlurmdbV0044DeleteAccountParams{AccountName: name})
	if err != nil {
		return err
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiAccountsRemovedResp:
		return answerError(r.Errors)
	case *v0044.V0044OpenapiAccountsRemovedRespStatusCode:
		if e := answerError(r.Response.Errors); e != nil {
			return e
		}
		return fmt.Errorf("HTTP %d", r.StatusCode)
	}
	return unexpected(res)
}

func (c *cmd) getUsers() ([]userRec, error) {
	res, err := c.env.Client.SlurmdbV0044GetUsers(c.ctx, v0044.SlurmdbV0044GetUsersParams{WithAssocs: v0044.NewOptString("true")})
	if err != nil {
		return nil, err
	}
	var list v0044.V0044UserList
	switch r := res.(type) {
	case *v0044.V0044OpenapiUsersResp:
		list = r.Users
	case *v0044.V0044OpenapiUsersRespStatusCode:
		return nil, answerError(r.Response.Errors)
	default:
		return nil, unexpected(res)
	}
	out := []userRec{}
	for _, w := range list {
		u := userRec{name: w.Name, admin: "None"}
		if len(w.AdministratorLevel) > 0 {
			u.admin = string(w.AdministratorLevel[0])
		}
		if d, ok := w.Default.Get(); ok {
			u.defAcct = d.Account.Or("")
		}
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b userRec) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

func (c *cmd) postUsers(list []userRec) error {
	body := v0044.V0044OpenapiUsersResp{Users: v0044.V0044UserList{}}
	for _, u := range list {
		body.Users = append(body.Users, v0044.V0044User{
			Name:               u.name,
			AdministratorLevel: []v0044.V0044UserAdministratorLevelItem{v0044.V0044UserAdministratorLevelItem(u.admin)},
			Default:            v0044.NewOptV0044UserDefault(v0044.V0044UserDefault{Account: v0044.NewOptString(u.defAcct)}),
			Associations:       v0044.V0044AssocShortList{}, Coordinators: v0044.V0044CoordList{},
			Flags: []v0044.V0044UserFlagsItem{}, Wckeys: v0044.V0044WckeyList{},
		})
	}
	return plainResult(c.env.Client.SlurmdbV0044PostUsers(c.ctx, v0044.NewOptV0044OpenapiUsersResp(body)))
}

func (c *cmd) deleteUser(name string) error {
	return plainResult(c.env.Client.SlurmdbV0044DeleteUser(c.ctx, v0044.SlurmdbV0044DeleteUserParams{Name: name}))
}

// getAssocs lists every association: raw (what each sets itself, for
// changes) or with what it inherits filled in (for listings).
func (c *cmd) getAssocs(raw bool) ([]assocRec, error) {
	p := v0044.SlurmdbV0044GetAssociationsParams{}
	if raw {
		p.ExcludeLimitsFromParents = v0044.NewOptString("true")
	}
	res, err := c.env.Client.SlurmdbV0044GetAssociations(c.ctx, p)
	if err != nil {
		return nil, err
	}
	var list v0044.V0044AssocList
	switch r := res.(type) {
	case *v0044.V0044OpenapiAssocsResp:
		list = r.Associations
	case *v0044.V0044OpenapiAssocsRespStatusCode:
		return nil, answerError(r.Response.Errors)
	default:
		return nil, unexpected(res)
	}
	out := []assocRec{}
	for _, w := range list {
		a := assocRec{
			id: uint32(w.ID.Or(0)), cluster: w.Cluster.Or(""), account: w.Account.Or(""), user: w.User,
			partition: w.Partition.Or(""), parent: w.ParentAccount.Or(""), shares: uint32(w.SharesRaw.Or(1)),
			qos: append([]string{}, w.Qos...), isDefault: w.IsDefault.Or(false), lineage: w.Lineage.Or(""),
		}
		if p, ok := w.Priority.Get(); ok && p.Set.Or(false) && !p.Infinite.Or(false) {
			a.prio, a.prioSet = uint32(p.Number.Or(0)), true
		}
		if d, ok := w.Default.Get(); ok {
			a.defQOS = d.Qos.Or("")
		}
		a.limits = limitwire.AssocFromWire(&w, assoc.Limits{})
		slices.Sort(a.qos)
		out = append(out, a)
	}
	return out, nil
}

func assocToWire(a assocRec) v0044.V0044Assoc {
	prio := v0044.V0044Uint32NoValStruct{Set: v0044.NewOptBool(false), Infinite: v0044.NewOptBool(true), Number: v0044.NewOptInt32(0)}
	if a.prioSet {
		prio = u32(a.prio)
	}
	w := v0044.V0044Assoc{
		Account: v0044.NewOptString(a.account), User: a.user, Partition: v0044.NewOptString(a.partition),
		ParentAccount: v0044.NewOptString(a.parent), SharesRaw: v0044.NewOptInt32(int32(a.shares)),
		Priority:   v0044.NewOptV0044Uint32NoValStruct(prio),
		Qos:        v0044.V0044QosStringIDList(append([]string{}, a.qos...)),
		Default:    v0044.NewOptV0044AssocDefault(v0044.V0044AssocDefault{Qos: v0044.NewOptString(a.defQOS)}),
		Accounting: v0044.V0044AccountingList{}, Flags: []v0044.V0044AssocFlagsItem{},
	}
	limitwire.AssocToWire(a.limits, &w)
	return w
}

func (c *cmd) postAssocs(list []assocRec) error {
	body := v0044.V0044OpenapiAssocsResp{Associations: v0044.V0044AssocList{}}
	for _, a := range list {
		body.Associations = append(body.Associations, assocToWire(a))
	}
	return plainResult(c.env.Client.SlurmdbV0044PostAssociations(c.ctx, v0044.NewOptV0044OpenapiAssocsResp(body)))
}

// deleteAssoc removes one association (and, an account's, what is below
// it).
func (c *cmd) deleteAssoc(a assocRec) error {
	res, err := c.env.Client.SlurmdbV0044DeleteAssociations(c.ctx, v0044.SlurmdbV0044DeleteAssociationsParams{
		Account: v0044.NewOptString(a.account), User: v0044.NewOptString(a.user), Partition: v0044.NewOptString(a.partition),
	})
	if err != nil {
		return err
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiAssocsRemovedResp:
		return answerError(r.Errors)
	case *v0044.V0044OpenapiAssocsRemovedRespStatusCode:
		if e := answerError(r.Response.Errors); e != nil {
			return e
		}
		return fmt.Errorf("HTTP %d", r.StatusCode)
	}
	return unexpected(res)
}

// addAccounts posts sacctmgr add account's request; text is what the
// controller reported (slurmdbd's, for errors).
func (c *cmd) addAccounts(names []string, desc, org string, rec v0044.V0044AssocRecSet) (string, error) {
	short := v0044.V0044AccountShort{}
	if desc != "" {
		short.Description = v0044.NewOptString(desc)
	}
	if org != "" {
		short.Organization = v0044.NewOptString(org)
	}
	body := v0044.V0044OpenapiAccountsAddCondResp{
		Account: v0044.NewOptV0044AccountShort(short),
		AssociationCondition: v0044.V0044AccountsAddCond{
			Accounts: v0044.V0044StringList(names), Clusters: v0044.V0044StringList{}, Association: v0044.NewOptV0044AssocRecSet(rec),
		},
	}
	res, err := c.env.Client.SlurmdbV0044PostAccountsAssociation(c.ctx, v0044.NewOptV0044OpenapiAccountsAddCondResp(body))
	if err != nil {
		return "", err
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiAccountsAddCondRespStr:
		return r.AddedAccounts, answerError(r.Errors)
	case *v0044.V0044OpenapiAccountsAddCondRespStrStatusCode:
		if e := answerError(r.Response.Errors); e != nil {
			return r.Response.AddedAccounts, e
		}
		return r.Response.AddedAccounts, fmt.Errorf("HTTP %d", r.StatusCode)
	}
	return "", unexpected(res)
}

// addUsers posts sacctmgr add user's request.
func (c *cmd) addUsers(users, accounts, partitions []string, defAcct, admin string, rec v0044.V0044AssocRecSet) (string, error) {
	short := v0044.V0044UserShort{Adminlevel: []v0044.V0044UserShortAdminlevelItem{}}
	if defAcct != "" {
		short.Defaultaccount = v0044.NewOptString(defAcct)
	}
	if admin != "" {
		short.Adminlevel = []v0044.V0044UserShortAdminlevelItem{v0044.V0044UserShortAdminlevelItem(admin)}
	}
	body := v0044.V0044OpenapiUsersAddCondResp{
		User: short,
		AssociationCondition: v0044.V0044UsersAddCond{
			Users: v0044.V0044StringList(users), Accounts: v0044.V0044StringList(accounts), Partitions: v0044.V0044StringList(partitions),
			Clusters: v0044.V0044StringList{}, Wckeys: v0044.V0044StringList{}, Association: v0044.NewOptV0044AssocRecSet(rec),
		},
	}
	res, err := c.env.Client.SlurmdbV0044PostUsersAssociation(c.ctx, v0044.NewOptV0044OpenapiUsersAddCondResp(body), v0044.SlurmdbV0044PostUsersAssociationParams{})
	if err != nil {
		return "", err
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiUsersAddCondRespStr:
		return r.AddedUsers, answerError(r.Errors)
	case *v0044.V0044OpenapiUsersAddCondRespStrStatusCode:
		if e := answerError(r.Response.Errors); e != nil {
			return r.Response.AddedUsers, e
		}
		return r.Response.AddedUsers, fmt.Errorf("HTTP %d", r.StatusCode)
	}
	return "", unexpected(res)
}

// clusterName is the cluster the controller serves, as the records name
// it.
func (c *cmd) clusterName() string {
	if c.cluster != "" {
		return c.cluster
	}
	if list, err := c.getAssocs(true); err == nil && len(list) > 0 {
		c.cluster = list[0].cluster
	}
	return c.cluster
}
