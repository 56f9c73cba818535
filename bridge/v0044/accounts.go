package v0044

import (
	"context"
	"fmt"
	"strings"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/slurmerr"
	api "github.com/droverhq/drover/openapi/v0044"
)

// accountToWire writes an account as slurmdbd lists it; with assocs, the
// associations of the account (its own and its users').
func (s *Server) accountToWire(m *assoc.Model, a assoc.Account, withAssocs bool) api.V0044Account {
	w := api.V0044Account{
		Associations: api.V0044AssocShortList{}, Coordinators: api.V0044CoordList{},
		Description: a.Description, Name: a.Name, Organization: a.Organization,
		Flags: []api.V0044AccountFlagsItem{},
	}
	if withAssocs {
		w.Associations = s.assocShorts(m, func(as assoc.Association) bool { return as.Account == a.Name })
	}
	return w
}

// assocShorts lists the associations keep selects, as an account or a
// user lists its own.
func (s *Server) assocShorts(m *assoc.Model, keep func(assoc.Association) bool) api.V0044AssocShortList {
	out := api.V0044AssocShortList{}
	for _, a := range m.Associations() {
		if keep(a) {
			out = append(out, s.assocShort(a))
		}
	}
	return out
}

func (s *Server) assocShort(a assoc.Association) api.V0044AssocShort {
	return api.V0044AssocShort{
		Account: api.NewOptString(a.Account), Cluster: api.NewOptString(s.ctl.ClusterName()),
		ID: api.NewOptInt32(int32(a.ID)), Partition: api.NewOptString(a.Partition), User: a.User,
	}
}

// accountsResp lists accounts, with slurmrestd's warning when there are
// none.
func (s *Server) accountsResp(ctx context.Context, list []assoc.Account, withAssocs bool) *api.V0044OpenapiAccountsResp {
	m := s.ctl.Accounting()
	out := api.V0044AccountList{}
	for _, a := range list {
		out = append(out, s.accountToWire(m, a, withAssocs))
	}
	warning := nothingFound(len(list), "slurmdb_accounts_get")
	return &api.V0044OpenapiAccountsResp{Accounts: out, Meta: s.dbMeta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: dbWarnings("_dump_accounts", warning)}
}

// findAccount looks an account up by name, as slurmdbd's queries compare
// names: exactly, else ignoring case.
func findAccount(m *assoc.Model, name string) (assoc.Account, bool) {
	if a, ok := m.Account(name); ok {
		return a, true
	}
	for _, a := range m.Accounts() {
		if strings.EqualFold(a.Name, name) {
			return a, true
		}
	}
	return assoc.Account{}, false
}

// SlurmdbV0044GetAccounts implements GET /slurmdb/v0.0.44/accounts/.
func (s *Server) SlurmdbV0044GetAccounts(ctx context.Context, params api.SlurmdbV0044GetAccountsParams) (api.SlurmdbV0044GetAccountsRes, error) {
	descs := csv(params.Description)
	var out []assoc.Account
	for _, a := range s.ctl.Accounting().Accounts() {
		if matches(descs, a.Description) {
			out = append(out, a)
		}
	}
	return s.accountsResp(ctx, out, flagSet(params.WithAssociations)), nil
}

// SlurmdbV0044GetAccount implements GET /slurmdb/v0.0.44/account/{name};
// an unknown account is an empty list with slurmrestd's warning.
func (s *Server) SlurmdbV0044GetAccount(ctx context.Context, params api.SlurmdbV0044GetAccountParams) (api.SlurmdbV0044GetAccountRes, error) {
	a, ok := findAccount(s.ctl.Accounting(), params.AccountName)
	if !ok {
		return s.accountsResp(ctx, nil, false), nil
	}
	return s.accountsResp(ctx, []assoc.Account{a}, flagSet(params.WithAssocs)), nil
}

// SlurmdbV0044PostAccounts implements POST /slurmdb/v0.0.44/accounts/:
// accounts added or their description and organization replaced, in one
// change. Associations are not made here (slurmrestd: "They must be set
// via the associations end point").
func (s *Server) SlurmdbV0044PostAccounts(ctx context.Context, req api.OptV0044OpenapiAccountsResp) (api.SlurmdbV0044PostAccountsRes, error) {
	body, _ := req.Get()
	ch, warnings, err := accountItems(body.Accounts)
	if err != nil {
		return s.dbFail(ctx, err, "_foreach_update_acct"), nil
	}
	return s.applyChange(ctx, ch, warnings, "_foreach_update_acct"), nil
}

// accountItems are the changes a list of account records asks for.
func accountItems(list api.V0044AccountList) (assoc.Change, []string, error) {
	var ch assoc.Change
	var warnings []string
	for _, w := range list {
		if w.Name == "" {
			return nil, nil, slurmerr.New(slurmerr.InvalidAccount, "account without a name")
		}
		if len(w.Associations) > 0 {
			warnings = append(warnings, "Account associations ignored. They must be set via the associations end point.")
		}
		a := assoc.Account{Name: w.Name, Description: w.Description, Organization: w.Organization}
		ch = append(ch, assoc.Item{Kind: assoc.KindAccount, Account: &a})
	}
	return ch, warnings, nil
}

// SlurmdbV0044DeleteAccount implements DELETE
// /slurmdb/v0.0.44/account/{name}: the account goes with every
// association below it.
func (s *Server) SlurmdbV0044DeleteAccount(ctx context.Context, params api.SlurmdbV0044DeleteAccountParams) (api.SlurmdbV0044DeleteAccountRes, error) {
	resp := api.V0044OpenapiAccountsRemovedResp{RemovedAccounts: api.V0044StringList{}, Meta: s.dbMeta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}
	fail := func(err error) (api.SlurmdbV0044DeleteAccountRes, error) {
		resp.Errors = dbErrors(err, "_delete_account")
		return &api.V0044OpenapiAccountsRemovedRespStatusCode{StatusCode: dbStatus(err), Response: resp}, nil
	}
	a, ok := findAccount(s.ctl.Accounting(), params.AccountName)
	if !ok {
		return fail(slurmerr.New(slurmerr.InvalidAccount, "account %s does not exist", params.AccountName))
	}
	if err := s.changeAccounting(ctx, assoc.Change{{Kind: assoc.KindAccount, Delete: true, Account: &assoc.Account{Name: a.Name}}}); err != nil {
		return fail(err)
	}
	resp.RemovedAccounts = api.V0044StringList{a.Name}
	return &resp, nil
}

// assocRecOptions applies an add request's association options
// (fairshare, priority, QOS, default QOS) to a new association.
func assocRecOptions(a *assoc.Association, rec api.V0044AssocRecSet) {
	if n, ok := rec.Fairshare.Get(); ok && n > 0 {
		a.Shares = uint32(n)
	}
	if n, how := readU32(rec.Priority); how == noValNumber {
		a.Priority, a.PrioritySet = n, true
	}
	if len(rec.Qoslevel) > 0 {
		a.QOS = append([]string{}, rec.Qoslevel...)
	}
	if q, ok := rec.Defaultqos.Get(); ok {
		a.DefaultQOS = q
	}
}

// SlurmdbV0044PostAccountsAssociation implements POST
// /slurmdb/v0.0.44/accounts_association/, sacctmgr add account: accounts
// that do not exist are added (description and organization default as
// slurmdbd defaults them), each with its association under the parent
// (root by default), in one change. added_accounts is slurmdbd's report
// of what was done, which sacctmgr prints.
func (s *Server) SlurmdbV0044PostAccountsAssociation(ctx context.Context, req api.OptV0044OpenapiAccountsAddCondResp) (api.SlurmdbV0044PostAccountsAssociationRes, error) {
	body, _ := req.Get()
	cond := body.AssociationCondition
	short := body.Account.Or(api.V0044AccountShort{})
	rec := cond.Association.Or(api.V0044AssocRecSet{})
	cluster := s.ctl.ClusterName()
	m := s.ctl.Accounting()
	answer := func(status int, text string, err error) (api.SlurmdbV0044PostAccountsAssociationRes, error) {
		r := api.V0044OpenapiAccountsAddCondRespStr{AddedAccounts: text, Meta: s.dbMeta(ctx), Errors: dbErrors(err, "_add_accounts_association"), Warnings: api.V0044OpenapiWarnings{}}
		if status == 200 {
			return &r, nil
		}
		return &api.V0044OpenapiAccountsAddCondRespStrStatusCode{StatusCode: status, Response: r}, nil
	}
	if len(cond.Accounts) == 0 {
		return answer(422, "", slurmerr.New(slurmerr.InvalidQuery, "Need name of account to add"))
	}
	parent := rec.Parent.Or("")
	if parent == "" {
		parent = assoc.RootAccount
	}
	if _, ok := m.Assoc(parent, "", ""); !ok {
		err := slurmerr.New(slurmerr.InvalidParentAccount, "No parent account '%s' on cluster '%s'", parent, cluster)
		return answer(dbStatus(err), err.Detail, err)
	}
	desc, org := short.Description.Or(""), short.Organization.Or("")
	var ch assoc.Change
	var added, assocs strings.Builder
	addedAssoc := false
	for _, name := range cond.Accounts {
		if _, ok := findAccount(m, name); !ok {
			a := assoc.Account{Name: name, Description: desc, Organization: org}
			if a.Description == "" {
				a.Description = name
			}
			if a.Organization == "" {
				a.Organization = name
				if parent != assoc.RootAccount {
					a.Organization = parent
				}
			}
			ch = append(ch, assoc.Item{Kind: assoc.KindAccount, Account: &a})
			if added.Len() == 0 {
				added.WriteString(" Adding Account(s)\n")
			}
			fmt.Fprintf(&added, "  %s\n", name)
		}
		if _, ok := m.Assoc(name, "", ""); ok {
			fmt.Fprintf(&assocs, "Already existing account %s on cluster %s\n", name, cluster)
			continue
		}
		a := assoc.Association{Account: name, ParentAccount: parent, Shares: 1}
		assocRecOptions(&a, rec)
		ch = append(ch, assoc.Item{Kind: assoc.KindAssoc, Assoc: &a})
		if assocs.Len() == 0 {
			assocs.WriteString(" Associations =\n")
		}
		fmt.Fprintf(&assocs, "  C = %-10s A = %-20s\n", cluster, name)
		addedAssoc = true
	}
	if added.Len() > 0 {
		d, o := desc, org
		if d == "" {
			d = "Account Name"
		}
		if o == "" {
			o = "Parent/Account Name"
		}
		fmt.Fprintf(&added, " Settings\n  Description     = %s\n  Organization    = %s\n", d, o)
	}
	if !addedAssoc && added.Len() == 0 {
		return answer(500, affected(assocs.String()), slurmerr.New(slurmerr.NoChangeInData, "slurmdb_accounts_add_cond() failed"))
	}
	if err := s.changeAccounting(ctx, ch); err != nil {
		return answer(dbStatus(err), refusal(err, "Only admins/operators/coordinators can add accounts"), err)
	}
	return answer(200, added.String()+assocs.String(), nil)
}
