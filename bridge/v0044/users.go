package v0044

import (
	"context"
	"fmt"
	"strings"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/slurmerr"
	api "github.com/droverhq/drover/openapi/v0044"
)

// userToWire writes a user as slurmdbd lists one. The default account
// comes with the associations (with_assocs), as slurmdbd reads it from
// them only then; WCKeys and coordinators are not kept.
func (s *Server) userToWire(m *assoc.Model, u assoc.User, withAssocs bool) api.V0044User {
	w := api.V0044User{
		AdministratorLevel: []api.V0044UserAdministratorLevelItem{api.V0044UserAdministratorLevelItem(u.AdminLevel.String())},
		Associations:       api.V0044AssocShortList{},
		Coordinators:       api.V0044CoordList{},
		Flags:              []api.V0044UserFlagsItem{api.V0044UserFlagsItemNONE},
		Name:               u.Name,
		OldName:            api.NewOptString(""),
		Wckeys:             api.V0044WckeyList{},
	}
	def := api.V0044UserDefault{Account: api.NewOptString(""), Qos: api.NewOptInt32(0), Wckey: api.NewOptString("")}
	if withAssocs {
		def.Account = api.NewOptString(u.DefaultAccount)
		w.Associations = s.assocShorts(m, func(a assoc.Association) bool { return a.User == u.Name })
	}
	w.Default = api.NewOptV0044UserDefault(def)
	return w
}

// usersResp lists users, with slurmrestd's warning when there are none.
func (s *Server) usersResp(ctx context.Context, list []assoc.User, withAssocs bool) *api.V0044OpenapiUsersResp {
	m := s.ctl.Accounting()
	out := api.V0044UserList{}
	for _, u := range list {
		out = append(out, s.userToWire(m, u, withAssocs))
	}
	warning := nothingFound(len(list), "slurmdb_users_get")
	return &api.V0044OpenapiUsersResp{Users: out, Meta: s.dbMeta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: dbWarnings("_dump_users", warning)}
}

// SlurmdbV0044GetUsers implements GET /slurmdb/v0.0.44/users/.
func (s *Server) SlurmdbV0044GetUsers(ctx context.Context, params api.SlurmdbV0044GetUsersParams) (api.SlurmdbV0044GetUsersRes, error) {
	defaults := csv(params.DefaultAccount)
	var out []assoc.User
	for _, u := range s.ctl.Accounting().Users() {
		if !matches(defaults, u.DefaultAccount) {
			continue
		}
		if lvl, ok := params.AdminLevel.Get(); ok && !strings.EqualFold(string(lvl), u.AdminLevel.String()) {
			continue
		}
		out = append(out, u)
	}
	return s.usersResp(ctx, out, flagSet(params.WithAssocs)), nil
}

// SlurmdbV0044GetUser implements GET /slurmdb/v0.0.44/user/{name}; an
// unknown user is an empty list with slurmrestd's warning.
func (s *Server) SlurmdbV0044GetUser(ctx context.Context, params api.SlurmdbV0044GetUserParams) (api.SlurmdbV0044GetUserRes, error) {
	u, ok := s.ctl.Accounting().User(params.Name)
	if !ok {
		return s.usersResp(ctx, nil, false), nil
	}
	return s.usersResp(ctx, []assoc.User{u}, flagSet(params.WithAssocs)), nil
}

// userFromWire reads a posted user over the one it updates (old; zero for
// a new one): a default or level the request leaves out is kept.
func userFromWire(w *api.V0044User, old assoc.User) (assoc.User, error) {
	u := old
	u.Name = w.Name
	if d, ok := w.Default.Get(); ok {
		if a, ok := d.Account.Get(); ok {
			u.DefaultAccount = a
		}
	}
	if len(w.AdministratorLevel) > 0 {
		lvl := string(w.AdministratorLevel[0])
		if lvl != string(api.V0044UserAdministratorLevelItemNotSet) {
			l, err := assoc.ParseAdminLevel(lvl)
			if err != nil {
				return u, slurmerr.New(slurmerr.InvalidQuery, "user %s: %v", w.Name, err)
			}
			u.AdminLevel = l
		}
	}
	return u, nil
}

// SlurmdbV0044PostUsers implements POST /slurmdb/v0.0.44/users/: users
// added or updated (default account, admin level) in one change. Their
// associations are made through /associations/ or /users_association/.
func (s *Server) SlurmdbV0044PostUsers(ctx context.Context, req api.OptV0044OpenapiUsersResp) (api.SlurmdbV0044PostUsersRes, error) {
	body, _ := req.Get()
	ch, warnings, err := userItems(s.ctl.Accounting(), body.Users)
	if err != nil {
		return s.dbFail(ctx, err, "_foreach_update_user"), nil
	}
	return s.applyChange(ctx, ch, warnings, "_foreach_update_user"), nil
}

// userItems are the changes a list of user records asks for.
func userItems(m *assoc.Model, list api.V0044UserList) (assoc.Change, []string, error) {
	var ch assoc.Change
	var warnings []string
	for i := range list {
		w := &list[i]
		if w.Name == "" {
			return nil, nil, slurmerr.New(slurmerr.UserIDMissing, "user without a name")
		}
		if len(w.Associations) > 0 {
			warnings = append(warnings, fmt.Sprintf("User %s associations list ignored. They must be set via the associations end point.", w.Name))
		}
		old, _ := m.User(w.Name)
		u, err := userFromWire(w, old)
		if err != nil {
			return nil, nil, err
		}
		ch = append(ch, assoc.Item{Kind: assoc.KindUser, User: &u})
	}
	return ch, warnings, nil
}

// SlurmdbV0044DeleteUser implements DELETE /slurmdb/v0.0.44/user/{name}:
// the user goes with every association of theirs.
func (s *Server) SlurmdbV0044DeleteUser(ctx context.Context, params api.SlurmdbV0044DeleteUserParams) (api.SlurmdbV0044DeleteUserRes, error) {
	if _, ok := s.ctl.Accounting().User(params.Name); !ok {
		return s.dbFail(ctx, slurmerr.New(slurmerr.UserIDMissing, "user %s does not exist", params.Name), "_delete_user"), nil
	}
	return s.applyChange(ctx, assoc.Change{{Kind: assoc.KindUser, Delete: true, User: &assoc.User{Name: params.Name}}}, nil, "_delete_user"), nil
}

// SlurmdbV0044PostUsersAssociation implements POST
// /slurmdb/v0.0.44/users_association/, sacctmgr add user: users that do
// not exist are added, with an association for every account (and
// partition) named that they lack, in one change, as slurmdbd's
// add_users_cond does: a new user's default account is the one named, or
// the first account of the list; accounts without an association are
// skipped; nothing is added when no association is. added_users is
// slurmdbd's report, which sacctmgr prints.
func (s *Server) SlurmdbV0044PostUsersAssociation(ctx context.Context, req api.OptV0044OpenapiUsersAddCondResp, _ api.SlurmdbV0044PostUsersAssociationParams) (api.SlurmdbV0044PostUsersAssociationRes, error) {
	body, _ := req.Get()
	cond := body.AssociationCondition
	rec := cond.Association.Or(api.V0044AssocRecSet{})
	cluster := s.ctl.ClusterName()
	m := s.ctl.Accounting()
	answer := func(status int, text string, err error) (api.SlurmdbV0044PostUsersAssociationRes, error) {
		r := api.V0044OpenapiUsersAddCondRespStr{AddedUsers: text, Meta: s.dbMeta(ctx), Errors: dbErrors(err, "_add_users_association"), Warnings: api.V0044OpenapiWarnings{}}
		if status == 200 {
			return &r, nil
		}
		return &api.V0044OpenapiUsersAddCondRespStrStatusCode{StatusCode: status, Response: r}, nil
	}
	defAcct := body.User.Defaultaccount.Or("")
	accounts := []string(cond.Accounts)
	if defAcct != "" && len(accounts) == 0 {
		accounts = []string{defAcct}
	}
	if len(cond.Users) == 0 {
		return answer(422, "", slurmerr.New(slurmerr.InvalidQuery, "Need name of user to add"))
	}
	if len(accounts) == 0 {
		return answer(422, "", slurmerr.New(slurmerr.InvalidQuery, "Need name of account(s) or wckey(s) to add"))
	}
	level, adminSet := assoc.AdminNone, false
	if len(body.User.Adminlevel) > 0 && body.User.Adminlevel[0] != api.V0044UserShortAdminlevelItemNotSet {
		l, err := assoc.ParseAdminLevel(string(body.User.Adminlevel[0]))
		if err != nil {
			return answer(422, "", slurmerr.New(slurmerr.InvalidQuery, "%v", err))
		}
		level, adminSet = l, true
	}
	partitions := []string(cond.Partitions)
	if len(partitions) == 0 {
		partitions = []string{""}
	}

	// The users first, as slurmdbd adds them to its user table.
	users := map[string]*assoc.User{}
	var added strings.Builder
	for _, name := range cond.Users {
		if _, ok := m.User(name); ok || users[name] != nil {
			continue
		}
		users[name] = &assoc.User{Name: name, DefaultAccount: defAcct, AdminLevel: level}
		if added.Len() == 0 {
			added.WriteString(" Adding User(s)\n")
		}
		fmt.Fprintf(&added, "  %s\n", name)
	}
	if added.Len() > 0 {
		added.WriteString(" Settings\n")
		if defAcct != "" {
			fmt.Fprintf(&added, "  Default Account = %s\n", defAcct)
		}
		if adminSet {
			fmt.Fprintf(&added, "  Admin Level     = %s\n", level)
		}
	}

	// Then their associations, account by account.
	var ch assoc.Change
	var assocs strings.Builder
	changed := map[string]*assoc.User{}
	addedAssoc := false
	for _, acct := range accounts {
		if _, ok := m.Assoc(acct, "", ""); !ok {
			fmt.Fprintf(&assocs, "No account %s on cluster %s, skipping.\n", acct, cluster)
			continue
		}
		for _, name := range cond.Users {
			for _, part := range partitions {
				if _, ok := m.Assoc(acct, name, part); ok {
					continue
				}
				a := assoc.Association{Account: acct, User: name, Partition: part, Shares: 1}
				assocRecOptions(&a, rec)
				ch = append(ch, assoc.Item{Kind: assoc.KindAssoc, Assoc: &a})
				addedAssoc = true
				if assocs.Len() == 0 {
					assocs.WriteString(" Associations =\n")
				}
				fmt.Fprintf(&assocs, "  C = %-10s A = %-20s U = %-9s", cluster, acct, name)
				if part != "" {
					fmt.Fprintf(&assocs, " P = %s", part)
				}
				assocs.WriteString("\n")
				switch u := users[name]; {
				case u != nil && u.DefaultAccount == "":
					// A new user's first account is its default.
					u.DefaultAccount = acct
				case u == nil && defAcct != "" && acct == defAcct:
					// A default named for an existing user moves there.
					if old, ok := m.User(name); ok && old.DefaultAccount != acct {
						old.DefaultAccount = acct
						changed[name] = &old
					}
				}
			}
		}
	}
	if !addedAssoc {
		return answer(500, affected(assocs.String()), slurmerr.New(slurmerr.NoChangeInData, "slurmdb_users_add_cond() failed"))
	}
	var head assoc.Change
	for _, name := range cond.Users {
		if u := users[name]; u != nil {
			head = append(head, assoc.Item{Kind: assoc.KindUser, User: u})
			users[name] = nil
		}
		if u := changed[name]; u != nil {
			head = append(head, assoc.Item{Kind: assoc.KindUser, User: u})
			changed[name] = nil
		}
	}
	if err := s.changeAccounting(ctx, append(head, ch...)); err != nil {
		denied := "Only admins/operators/coordinators can add accounts"
		if adminSet {
			denied = "Only admins/operators can add an admin/operator"
		}
		return answer(dbStatus(err), refusal(err, denied), err)
	}
	return answer(200, added.String()+assocs.String(), nil)
}
