package assoc

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/droverhq/drover/internal/slurmerr"
	"github.com/google/go-cmp/cmp"
)

// Items, as the change builders of the tests.

func putQOS(q QOS) Item        { return Item{Kind: KindQOS, QOS: &q} }
func delQOS(name string) Item  { return Item{Kind: KindQOS, Delete: true, QOS: &QOS{Name: name}} }
func putAcct(name string) Item { return Item{Kind: KindAccount, Account: &Account{Name: name}} }
func delAcct(name string) Item {
	return Item{Kind: KindAccount, Delete: true, Account: &Account{Name: name}}
}
func putUser(name, def string) Item {
	return Item{Kind: KindUser, User: &User{Name: name, DefaultAccount: def}}
}
func delUser(name string) Item { return Item{Kind: KindUser, Delete: true, User: &User{Name: name}} }
func delAssoc(account, user, partition string) Item {
	return Item{Kind: KindAssoc, Delete: true, Assoc: &Association{Account: account, User: user, Partition: partition}}
}

// assocB builds an association item.
type assocB struct{ a Association }

// acctAssoc starts an account association under parent.
func acctAssoc(account, parent string) *assocB {
	return &assocB{Association{Account: account, ParentAccount: parent}}
}

// userAssoc starts a user association under account.
func userAssoc(account, user string) *assocB {
	return &assocB{Association{Account: account, User: user}}
}

func (b *assocB) part(p string) *assocB   { b.a.Partition = p; return b }
func (b *assocB) qos(q ...string) *assocB { b.a.QOS = q; return b }
func (b *assocB) def(q string) *assocB    { b.a.DefaultQOS = q; return b }
func (b *assocB) prio(p uint32) *assocB   { b.a.Priority, b.a.PrioritySet = p, true; return b }
func (b *assocB) shares(s uint32) *assocB { b.a.Shares = s; return b }
func (b *assocB) id(id uint32) *assocB    { b.a.ID = id; return b }
func (b *assocB) item() Item              { a := b.a; return Item{Kind: KindAssoc, Assoc: &a} }

// base is New plus QOS hi and lo, accounts a (under root) and b (under
// a), user u1 in a (default a) and u2 in b (default b).
func base(t testing.TB) *Model {
	t.Helper()
	m, err := New().Apply(Change{
		putQOS(QOS{Name: "hi", Priority: 100, Preempt: []string{"lo"}}),
		putQOS(QOS{Name: "lo", Priority: 10}),
		putAcct("a"), putAcct("b"),
		acctAssoc("a", "root").item(),
		acctAssoc("b", "a").item(),
		putUser("u1", "a"), putUser("u2", "b"),
		userAssoc("a", "u1").item(),
		userAssoc("b", "u2").item(),
	})
	if err != nil {
		t.Fatalf("base: %v", err)
	}
	return m
}

func mustJSON(t testing.TB, m *Model) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNew(t *testing.T) {
	m := New()
	if diff := cmp.Diff([]QOS{{ID: 1, Name: "normal", Description: "Normal QOS default", UsageFactor: 1}}, m.QOSList()); diff != "" {
		t.Errorf("QOS (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Account{{Name: "root", Description: "default root account", Organization: "root"}}, m.Accounts()); diff != "" {
		t.Errorf("accounts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]User{{Name: "root", DefaultAccount: "root", AdminLevel: AdminAdministrator}}, m.Users()); diff != "" {
		t.Errorf("users (-want +got):\n%s", diff)
	}
	// As slurmdbd's REST capture lists them: ids 1 and 2.
	want := []Association{
		{ID: 1, Account: "root", Shares: 1, QOS: []string{"normal"}},
		{ID: 2, Account: "root", User: "root", ParentAccount: "root", Shares: 1},
	}
	if diff := cmp.Diff(want, m.Associations()); diff != "" {
		t.Errorf("associations (-want +got):\n%s", diff)
	}
	if got, ok := m.Resolve("root", "", ""); !ok || got.ID != 2 {
		t.Errorf("Resolve(root) = %v %v", got, ok)
	}
	if diff := cmp.Diff(Effective{QOS: []string{"normal"}}, m.Effective(want[1])); diff != "" {
		t.Errorf("root user effective (-want +got):\n%s", diff)
	}
}

func TestAdminLevel(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    AdminLevel
		wantErr bool
	}{
		"none":          {in: "None", want: AdminNone},
		"operator":      {in: "operator", want: AdminOperator},
		"administrator": {in: "Administrator", want: AdminAdministrator},
		"admin":         {in: "admin", want: AdminAdministrator},
		"superuser":     {in: "SuperUser", want: AdminAdministrator},
		"first letter":  {in: "O", want: AdminOperator},
		"empty":         {in: "", wantErr: true},
		"unknown":       {in: "boss", wantErr: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseAdminLevel(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseAdminLevel(%q) error %v, want error %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseAdminLevel(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
	got := []string{AdminNone.String(), AdminOperator.String(), AdminAdministrator.String(), AdminLevel(7).String()}
	if diff := cmp.Diff([]string{"None", "Operator", "Administrator", "Unknown"}, got); diff != "" {
		t.Errorf("String (-want +got):\n%s", diff)
	}
}

func TestParseEnforce(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    Enforce
		str     string
		wantErr bool
	}{
		"empty":        {in: "", str: "none"},
		"zero":         {in: "0", str: "none"},
		"none":         {in: "None", str: "none"},
		"associations": {in: "associations", want: Enforce{Associations: true}, str: "associations"},
		"one":          {in: "1", want: Enforce{Associations: true}, str: "associations"},
		"limits":       {in: "limits", want: Enforce{Associations: true, Limits: true}, str: "associations,limits"},
		"two":          {in: "2", want: Enforce{Associations: true, Limits: true}, str: "associations,limits"},
		"qos":          {in: "QOS", want: Enforce{Associations: true, QOS: true}, str: "associations,qos"},
		"safe":         {in: "safe", want: Enforce{Associations: true, Limits: true, Safe: true}, str: "associations,limits,safe"},
		"wckeys":       {in: "wckeys", want: Enforce{Associations: true, WCKeys: true}, str: "associations,wckeys"},
		"nojobs":       {in: "nojobs", want: Enforce{NoJobs: true, NoSteps: true}, str: "nojobs,nosteps"},
		"nosteps":      {in: "nosteps", want: Enforce{NoSteps: true}, str: "nosteps"},
		"common":       {in: "associations,limits,qos", want: Enforce{Associations: true, Limits: true, QOS: true}, str: "associations,limits,qos"},
		"all":          {in: "all", want: Enforce{Associations: true, Limits: true, QOS: true, Safe: true, WCKeys: true}, str: "associations,limits,qos,safe,wckeys"},
		"all nojobs":   {in: "all,nojobs", want: Enforce{Associations: true, Limits: true, QOS: true, Safe: true, WCKeys: true, NoJobs: true, NoSteps: true}, str: "associations,limits,nojobs,nosteps,qos,safe,wckeys"},
		"nojobs all":   {in: "nojobs,all", want: Enforce{Associations: true, Limits: true, QOS: true, Safe: true, WCKeys: true}, str: "associations,limits,qos,safe,wckeys"},
		"empty words":  {in: ",qos,,", want: Enforce{Associations: true, QOS: true}, str: "associations,qos"},
		"unknown":      {in: "associations,tres", wantErr: true},
		"space":        {in: "associations, qos", wantErr: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseEnforce(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseEnforce(%q) error %v, want error %v", tt.in, err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseEnforce(%q) (-want +got):\n%s", tt.in, diff)
			}
			if diff := cmp.Diff(tt.str, got.String()); diff != "" {
				t.Errorf("String (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApplyRules checks each rule Apply enforces: the code a refused
// change gets (slurmerr.Unspecified for a plain error), NoError for one
// accepted; a refused change leaves the model as it was.
func TestApplyRules(t *testing.T) {
	tests := map[string]struct {
		change Change
		want   slurmerr.Code
	}{
		// Names.
		"qos empty name":        {change: Change{putQOS(QOS{})}, want: slurmerr.InvalidQOS},
		"qos name with space":   {change: Change{putQOS(QOS{Name: "a b"})}, want: slurmerr.InvalidQOS},
		"account with comma":    {change: Change{putAcct("a,b")}, want: slurmerr.InvalidAccount},
		"user with tab":         {change: Change{putUser("x\ty", "")}, want: slurmerr.Unspecified},
		"partition with space":  {change: Change{userAssoc("a", "u1").part("p 1").item()}, want: slurmerr.InvalidAccount},
		"unknown kind":          {change: Change{{Kind: "wckey"}}, want: slurmerr.Unspecified},
		"item without a record": {change: Change{{Kind: KindUser}}, want: slurmerr.Unspecified},

		// QOS.
		"preempt unknown":       {change: Change{putQOS(QOS{Name: "x", Preempt: []string{"nosuch"}})}, want: slurmerr.InvalidQOS},
		"preempt itself":        {change: Change{putQOS(QOS{Name: "x", Preempt: []string{"x"}})}, want: slurmerr.QOSPreemptionLoop},
		"preempt loop of two":   {change: Change{putQOS(QOS{Name: "lo", Preempt: []string{"hi"}})}, want: slurmerr.QOSPreemptionLoop},
		"preempt loop of three": {change: Change{putQOS(QOS{Name: "mid", Preempt: []string{"hi"}}), putQOS(QOS{Name: "lo", Preempt: []string{"mid"}})}, want: slurmerr.QOSPreemptionLoop},
		"preempt chain":         {change: Change{putQOS(QOS{Name: "mid", Preempt: []string{"lo"}}), putQOS(QOS{Name: "hi", Preempt: []string{"mid", "lo"}})}, want: slurmerr.NoError},
		"preempt before create": {change: Change{putQOS(QOS{Name: "x", Preempt: []string{"y"}}), putQOS(QOS{Name: "y"})}, want: slurmerr.NoError},
		"negative usage factor": {change: Change{putQOS(QOS{Name: "x", UsageFactor: -1})}, want: slurmerr.Unspecified},
		"NaN usage factor":      {change: Change{putQOS(QOS{Name: "x", UsageFactor: math.NaN()})}, want: slurmerr.Unspecified},
		"bad preempt mode":      {change: Change{putQOS(QOS{Name: "x", PreemptMode: "GANG"})}, want: slurmerr.Unspecified},
		"preempt mode":          {change: Change{putQOS(QOS{Name: "x", PreemptMode: "requeue"})}, want: slurmerr.NoError},
		"delete unknown qos":    {change: Change{delQOS("nosuch")}, want: slurmerr.InvalidQOS},
		"delete preempted qos":  {change: Change{delQOS("lo")}, want: slurmerr.InvalidQOS},
		"delete qos in list": {
			change: Change{userAssoc("a", "u1").qos("normal", "hi").item(), delQOS("hi")},
			want:   slurmerr.InvalidQOS,
		},
		"qos created after its use": {
			change: Change{acctAssoc("a", "root").qos("normal", "x").def("x").item(), putQOS(QOS{Name: "x"})},
			want:   slurmerr.NoError,
		},
		"delete qos still default": {
			change: Change{acctAssoc("a", "root").qos("normal", "hi").def("hi").item(), delQOS("hi")},
			want:   slurmerr.NoRemoveDefaultQOS,
		},
		"delete qos after its uses": {
			change: Change{putQOS(QOS{Name: "hi"}), delQOS("lo")},
			want:   slurmerr.NoError,
		},

		// Accounts.
		"delete root account":   {change: Change{delAcct("root")}, want: slurmerr.Unspecified},
		"delete unknown acct":   {change: Change{delAcct("nosuch")}, want: slurmerr.InvalidAccount},
		"delete users' default": {change: Change{delAcct("b")}, want: slurmerr.NoRemoveDefaultAccount},
		"delete with defaults moved": {
			change: Change{userAssoc("root", "u2").item(), putUser("u2", "root"), delAcct("b")},
			want:   slurmerr.NoError,
		},
		"delete tree with default below": {change: Change{delAcct("a")}, want: slurmerr.NoRemoveDefaultAccount},
		"delete tree with its users":     {change: Change{delUser("u1"), delUser("u2"), delAcct("a")}, want: slurmerr.NoError},

		// Associations.
		"assoc unknown account":   {change: Change{acctAssoc("x", "root").item()}, want: slurmerr.InvalidAccount},
		"account without parent":  {change: Change{putAcct("x"), putAcct("y"), acctAssoc("x", "y").item()}, want: slurmerr.InvalidParentAccount},
		"parent is itself":        {change: Change{acctAssoc("a", "a").item()}, want: slurmerr.InvalidParentAccount},
		"parent below":            {change: Change{acctAssoc("a", "b").item()}, want: slurmerr.InvalidParentAccount},
		"root with a parent":      {change: Change{acctAssoc("root", "a").item()}, want: slurmerr.InvalidParentAccount},
		"account with partition":  {change: Change{acctAssoc("a", "root").part("p1").item()}, want: slurmerr.InvalidAccount},
		"move account":            {change: Change{putAcct("c"), acctAssoc("c", "root").item(), acctAssoc("b", "c").item()}, want: slurmerr.NoError},
		"user unknown":            {change: Change{userAssoc("a", "nobody").item()}, want: slurmerr.InvalidAssoc},
		"user in bare account":    {change: Change{putAcct("x"), userAssoc("x", "u1").item()}, want: slurmerr.InvalidAccount},
		"unknown qos":             {change: Change{userAssoc("a", "u1").qos("nosuch").item()}, want: slurmerr.InvalidQOS},
		"unknown default qos":     {change: Change{userAssoc("a", "u1").def("nosuch").item()}, want: slurmerr.InvalidQOS},
		"default outside list":    {change: Change{userAssoc("a", "u1").qos("normal").def("hi").item()}, want: slurmerr.NoRemoveDefaultQOS},
		"default inherited":       {change: Change{acctAssoc("a", "root").qos("hi", "normal").def("hi").item(), userAssoc("a", "u1").qos("normal").item()}, want: slurmerr.NoRemoveDefaultQOS},
		"default in parent list":  {change: Change{acctAssoc("a", "root").qos("hi", "normal").item(), userAssoc("a", "u1").def("hi").item()}, want: slurmerr.NoError},
		"delete unknown assoc":    {change: Change{delAssoc("a", "u2", "")}, want: slurmerr.InvalidAssoc},
		"delete root assoc":       {change: Change{delAssoc("root", "", "")}, want: slurmerr.Unspecified},
		"delete account assoc":    {change: Change{delAssoc("a", "", "")}, want: slurmerr.NoRemoveDefaultAccount},
		"delete empty acct assoc": {change: Change{putAcct("c"), acctAssoc("c", "b").item(), delAssoc("c", "", "")}, want: slurmerr.NoError},

		// Users.
		"admin level out of range":   {change: Change{{Kind: KindUser, User: &User{Name: "x", AdminLevel: 9}}}, want: slurmerr.Unspecified},
		"default without assoc":      {change: Change{putUser("u1", "b")}, want: slurmerr.InvalidAccount},
		"default account unknown":    {change: Change{putUser("x", "nosuch")}, want: slurmerr.InvalidAccount},
		"delete default assoc":       {change: Change{delAssoc("a", "u1", "")}, want: slurmerr.NoRemoveDefaultAccount},
		"delete default, keep other": {change: Change{userAssoc("a", "u1").part("p1").item(), delAssoc("a", "u1", "")}, want: slurmerr.NoError},
		"delete default with user":   {change: Change{delAssoc("a", "u1", ""), delUser("u1")}, want: slurmerr.NoError},
		"delete default, new one":    {change: Change{userAssoc("b", "u1").item(), delAssoc("a", "u1", ""), putUser("u1", "b")}, want: slurmerr.NoError},
		"delete unknown user":        {change: Change{delUser("nobody")}, want: slurmerr.Unspecified},
		"default before its assoc":   {change: Change{putUser("u3", "b"), userAssoc("b", "u3").item()}, want: slurmerr.NoError},
		"user, assoc, default, any order": {
			change: Change{userAssoc("b", "u3").item(), putAcct("c"), putUser("u3", "c"), userAssoc("c", "u3").item(), acctAssoc("c", "b").item()},
			want:   slurmerr.NoError,
		},
		"user readded without assoc": {change: Change{delUser("u1"), putUser("u1", "a")}, want: slurmerr.NoRemoveDefaultAccount},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			m := base(t)
			before := mustJSON(t, m)
			got, err := m.Apply(tt.change)
			if (err == nil) != (tt.want == slurmerr.NoError) || err != nil && !slices.Contains(codes(err), tt.want) {
				t.Errorf("Apply error %v (codes %v), want code %d", err, codes(err), tt.want)
			}
			if err != nil && got != nil {
				t.Errorf("Apply returned a model with error %v", err)
			}
			if err == nil {
				if ierr := invariants(got); ierr != nil {
					t.Errorf("invariants after Apply: %v", ierr)
				}
			}
			if diff := cmp.Diff(before, mustJSON(t, m)); diff != "" {
				t.Errorf("Apply changed its receiver (-before +after):\n%s", diff)
			}
		})
	}
}

// codes returns the Slurm error number of each problem a (joined) error
// reports, slurmerr.Unspecified for a plain one.
func codes(err error) []slurmerr.Code {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []slurmerr.Code
		for _, e := range j.Unwrap() {
			out = append(out, codes(e)...)
		}
		return out
	}
	return []slurmerr.Code{slurmerr.CodeOf(err)}
}

func TestApplyReportsEveryProblem(t *testing.T) {
	_, err := base(t).Apply(Change{
		userAssoc("a", "u1").qos("nosuch").item(),
		putUser("u2", "a"),
	})
	if diff := cmp.Diff([]slurmerr.Code{slurmerr.InvalidQOS, slurmerr.InvalidAccount}, codes(err)); diff != "" {
		t.Errorf("codes (-want +got):\n%s\nerror: %v", diff, err)
	}
	if !errors.Is(err, slurmerr.Sentinel(slurmerr.InvalidAccount)) {
		t.Errorf("errors.Is(InvalidAccount) false for %v", err)
	}
}

func TestApplyIDs(t *testing.T) {
	m := base(t)
	hi, _ := m.QOS("hi")
	u1, _ := m.Assoc("a", "u1", "")
	m, err := m.Apply(Change{
		putQOS(QOS{ID: 99, Name: "hi", Priority: 7, Preempt: []string{"lo"}}),
		putQOS(QOS{ID: 99, Name: "x"}),
		userAssoc("a", "u1").id(99).prio(3).item(),
		userAssoc("a", "u1").part("p1").item(),
		delQOS("x"),
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err = m.Apply(Change{putQOS(QOS{Name: "y"}), userAssoc("a", "u1").part("p2").item()})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint32{}
	for _, q := range m.QOSList() {
		got["qos "+q.Name] = q.ID
	}
	for _, a := range m.Associations() {
		got[a.String()] = a.ID
	}
	want := map[string]uint32{
		"qos normal": 1, "qos hi": hi.ID, "qos lo": 3, "qos y": 5, // x took 4
		"A = root": 1, "A = root U = root": 2, "A = a": 3, "A = b": 4,
		"A = a U = u1": u1.ID, "A = b U = u2": 6,
		"A = a U = u1 P = p1": 7, "A = a U = u1 P = p2": 8,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
}

func TestApplyDefaults(t *testing.T) {
	m, err := base(t).Apply(Change{
		putQOS(QOS{Name: "x"}),
		putQOS(QOS{Name: "lo", Priority: 10}), // replace: factor 0 stays 0
		putQOS(QOS{Name: "hi", Preempt: []string{"x", "lo", "x"}, PreemptMode: "cancel", UsageFactor: 2}),
		putAcct("c"),
		acctAssoc("c", "").qos("normal", "lo", "normal").item(),
		acctAssoc("b", "").shares(5).item(), // keeps its parent
		userAssoc("b", "u2").prio(0).item(),
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []QOS
	for _, name := range []string{"x", "lo", "hi"} {
		q, _ := m.QOS(name)
		got = append(got, q)
	}
	want := []QOS{
		{ID: 4, Name: "x", UsageFactor: 1},
		{ID: 3, Name: "lo", Priority: 10},
		{ID: 2, Name: "hi", Preempt: []string{"lo", "x"}, PreemptMode: "CANCEL", UsageFactor: 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("QOS (-want +got):\n%s", diff)
	}
	c, _ := m.Assoc("c", "", "")
	b, _ := m.Assoc("b", "", "")
	u2, _ := m.Assoc("b", "u2", "")
	wantA := []Association{
		{ID: 7, Account: "c", ParentAccount: "root", Shares: 1, QOS: []string{"lo", "normal"}},
		{ID: 4, Account: "b", ParentAccount: "a", Shares: 5},
		{ID: 6, Account: "b", User: "u2", ParentAccount: "b", Shares: 1, PrioritySet: true},
	}
	if diff := cmp.Diff(wantA, []Association{c, b, u2}); diff != "" {
		t.Errorf("associations (-want +got):\n%s", diff)
	}
}

func TestDeleteCascades(t *testing.T) {
	m := base(t)
	next, err := m.Apply(Change{
		userAssoc("root", "u2").item(), putUser("u2", "root"),
		userAssoc("root", "u1").item(), putUser("u1", "root"),
		delAcct("a"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range next.Associations() {
		got = append(got, a.String())
	}
	want := []string{"A = root", "A = root U = root", "A = root U = u1", "A = root U = u2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("associations (-want +got):\n%s", diff)
	}
	got = nil
	for _, a := range m.Removed(next) {
		got = append(got, a.String())
	}
	if diff := cmp.Diff([]string{"A = a", "A = a U = u1", "A = b", "A = b U = u2"}, got); diff != "" {
		t.Errorf("Removed (-want +got):\n%s", diff)
	}
	// The sub-account keeps its record, as slurmdbd removes only the
	// accounts named.
	if _, ok := next.Account("b"); !ok {
		t.Errorf("account b removed with its parent")
	}
	if _, ok := next.Account("a"); ok {
		t.Errorf("account a kept")
	}

	next, err = m.Apply(Change{delUser("u1")})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := next.Assoc("a", "u1", ""); ok {
		t.Errorf("u1's association outlived u1")
	}
}

// TestInheritance follows QOS, DefaultQOS and Priority down root -> a ->
// b -> user associations.
func TestInheritance(t *testing.T) {
	m, err := base(t).Apply(Change{
		acctAssoc("a", "root").qos("normal", "hi", "lo").def("lo").prio(5).item(),
		acctAssoc("b", "a").qos("hi", "lo").item(),
		putUser("u3", "b"), userAssoc("b", "u3").def("hi").prio(9).item(),
		userAssoc("b", "u2").part("p1").qos("lo").item(),
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		account, user, partition string
		want                     Effective
	}{
		"root":           {account: "root", want: Effective{QOS: []string{"normal"}}},
		"a sets all":     {account: "a", want: Effective{QOS: []string{"hi", "lo", "normal"}, DefaultQOS: "lo", Priority: 5}},
		"user under a":   {account: "a", user: "u1", want: Effective{QOS: []string{"hi", "lo", "normal"}, DefaultQOS: "lo", Priority: 5}},
		"b sets qos":     {account: "b", want: Effective{QOS: []string{"hi", "lo"}, DefaultQOS: "lo", Priority: 5}},
		"user under b":   {account: "b", user: "u2", want: Effective{QOS: []string{"hi", "lo"}, DefaultQOS: "lo", Priority: 5}},
		"user overrides": {account: "b", user: "u3", want: Effective{QOS: []string{"hi", "lo"}, DefaultQOS: "hi", Priority: 9}},
		"partition":      {account: "b", user: "u2", partition: "p1", want: Effective{QOS: []string{"lo"}, DefaultQOS: "lo", Priority: 5}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			a, ok := m.Assoc(tt.account, tt.user, tt.partition)
			if !ok {
				t.Fatalf("no association %s/%s/%s", tt.account, tt.user, tt.partition)
			}
			if diff := cmp.Diff(tt.want, m.Effective(a)); diff != "" {
				t.Errorf("Effective (-want +got):\n%s", diff)
			}
		})
	}
	if got := m.MaxAssocPriority(); got != 9 {
		t.Errorf("MaxAssocPriority = %d, want 9", got)
	}
	if got := m.MaxQOSPriority(); got != 100 {
		t.Errorf("MaxQOSPriority = %d, want 100", got)
	}
}

func TestMaxAssocPriorityUsersOnly(t *testing.T) {
	m, err := base(t).Apply(Change{
		putAcct("c"), acctAssoc("c", "root").prio(50).item(), // no users under it
		acctAssoc("b", "a").prio(4).item(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.MaxAssocPriority(); got != 4 {
		t.Errorf("MaxAssocPriority = %d, want 4 (u2 under b)", got)
	}
	if got := New().MaxAssocPriority(); got != 0 {
		t.Errorf("New().MaxAssocPriority = %d", got)
	}
}

func TestResolve(t *testing.T) {
	m, err := base(t).Apply(Change{
		userAssoc("b", "u1").item(),
		userAssoc("a", "u1").part("gpu").item(),
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		user, account, partition string
		want                     string // Association.String, "" for none
	}{
		"default account":        {user: "u1", want: "A = a U = u1"},
		"default, partition":     {user: "u1", partition: "gpu", want: "A = a U = u1 P = gpu"},
		"default, other part":    {user: "u1", partition: "cpu", want: "A = a U = u1"},
		"named account":          {user: "u1", account: "b", want: "A = b U = u1"},
		"named, no partition":    {user: "u1", account: "b", partition: "gpu", want: "A = b U = u1"},
		"account not the user's": {user: "u2", account: "a"},
		"unknown user":           {user: "nobody"},
		"unknown account":        {user: "u1", account: "nosuch"},
		"no user":                {account: "a"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			a, ok := m.Resolve(tt.user, tt.account, tt.partition)
			got := ""
			if ok {
				got = a.String()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Resolve(%q, %q, %q) (-want +got):\n%s", tt.user, tt.account, tt.partition, diff)
			}
		})
	}
}

// TestAssociationsOrder checks the order of sacctmgr show assoc tree:
// root first, depth first, a node's users (by lineage "0-user/", so "u-x"
// before "u") before its sub-accounts.
func TestAssociationsOrder(t *testing.T) {
	m, err := base(t).Apply(Change{
		putAcct("aa"), acctAssoc("aa", "root").item(),
		putAcct("c"), acctAssoc("c", "a").item(),
		putUser("u", "a"), putUser("u-x", "a"),
		userAssoc("a", "u").item(), userAssoc("a", "u-x").item(), userAssoc("a", "u").part("p1").item(),
		userAssoc("aa", "u").item(),
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range m.Associations() {
		got = append(got, a.String())
	}
	want := []string{
		"A = root",
		"A = root U = root",
		"A = a",
		"A = a U = u-x",
		"A = a U = u",
		"A = a U = u P = p1",
		"A = a U = u1",
		"A = b",
		"A = b U = u2",
		"A = c",
		"A = aa",
		"A = aa U = u",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	m, err := base(t).Apply(Change{
		putQOS(QOS{Name: "x", Description: "d", PreemptMode: "SUSPEND", GraceTime: 30, UsageFactor: 0.5}),
		acctAssoc("b", "a").qos("hi", "lo").def("hi").prio(3).shares(7).item(),
		userAssoc("b", "u2").part("p1").item(),
		{Kind: KindUser, User: &User{Name: "u1", DefaultAccount: "a", AdminLevel: AdminOperator}},
		delQOS("x"),
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var got *Model
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, got, cmp.AllowUnexported(Model{}, key{})); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	again, _ := json.Marshal(got)
	if diff := cmp.Diff(string(b), string(again)); diff != "" {
		t.Errorf("second encoding differs (-want +got):\n%s", diff)
	}
	// Ids continue where they were, x's included.
	next, err := got.Apply(Change{putQOS(QOS{Name: "y"})})
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := next.QOS("y"); q.ID != 5 {
		t.Errorf("new QOS id %d after round trip, want 5", q.ID)
	}
	if diff := cmp.Diff(m, m.Clone(), cmp.AllowUnexported(Model{}, key{})); diff != "" {
		t.Errorf("Clone (-want +got):\n%s", diff)
	}
}

func TestUnmarshalRefusesBroken(t *testing.T) {
	tests := map[string]string{
		"unknown account": `{"qos":[{"id":1,"name":"normal","usage_factor":1}],"accounts":[{"name":"root"}],"associations":[{"id":1,"account":"root","shares":1},{"id":2,"account":"x","parent_account":"root","shares":1}]}`,
		"no root":         `{"qos":[],"accounts":[],"users":[],"associations":[]}`,
		"duplicate id":    `{"qos":[{"id":1,"name":"a"},{"id":1,"name":"b"}],"accounts":[{"name":"root"}],"associations":[{"id":1,"account":"root"}]}`,
		"not json":        `[`,
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			var m Model
			if err := json.Unmarshal([]byte(in), &m); err == nil {
				t.Errorf("Unmarshal accepted %s", in)
			}
		})
	}
}

// TestApplyAtomic: a change that fails at its last item leaves nothing of
// its first ones.
func TestApplyAtomic(t *testing.T) {
	m := base(t)
	before := mustJSON(t, m)
	next, err := m.Apply(Change{
		putQOS(QOS{Name: "x"}),
		putAcct("c"), acctAssoc("c", "root").item(),
		delUser("u1"),
		delAcct("root"),
	})
	if err == nil || next != nil {
		t.Fatalf("Apply = %v, %v; want an error", next, err)
	}
	if diff := cmp.Diff(before, mustJSON(t, m)); diff != "" {
		t.Errorf("model changed (-before +after):\n%s", diff)
	}
	if _, ok := m.QOS("x"); ok {
		t.Errorf("QOS x added by a failed change")
	}
	// Returned slices are copies.
	q, _ := m.QOS("hi")
	q.Preempt[0] = "changed"
	if q, _ := m.QOS("hi"); q.Preempt[0] != "lo" {
		t.Errorf("QOS returned the model's own slice")
	}
}

func TestParseTRES(t *testing.T) {
	got, err := ParseTRES("CPU=4, mem=10G,gres/gpu=2,node=-1,mem=1500K")
	if err != nil {
		t.Fatal(err)
	}
	want := TRES{"cpu": 4, "mem": 2, "gres/gpu": 2, "node": Unset}
	if !maps.Equal(got, want) {
		t.Fatalf("ParseTRES = %v, want %v", got, want)
	}
	if s := (TRES{"cpu": 8, "mem": 16384, "gres/gpu": 2}).String(); s != "cpu=8,gres/gpu=2,mem=16G" {
		t.Errorf("String = %q", s)
	}
	if s := (TRES{"mem": 1000}).String(); s != "mem=1000M" {
		t.Errorf("String = %q", s)
	}
	for _, bad := range []string{"cpu", "cpu=x", "bogus=1", "gres/=1", "=4", "mem=1Q"} {
		if _, err := ParseTRES(bad); err == nil {
			t.Errorf("ParseTRES(%q) succeeded", bad)
		}
	}
	merged := (TRES{"cpu": 4, "mem": 100}).Merge(TRES{"mem": Unset, "node": 2})
	if !maps.Equal(merged, TRES{"cpu": 4, "node": 2}) {
		t.Errorf("Merge = %v", merged)
	}
	if (TRES{"cpu": 1}).Merge(TRES{"cpu": Unset}) != nil {
		t.Error("an emptied list is not nil")
	}
}

// TestLimitsKept: limits survive the model's JSON (the controller's
// state) and a clone is independent.
func TestLimitsKept(t *testing.T) {
	m := New()
	q, _ := m.QOS("normal")
	q.Limits = Limits{MaxJobs: Count(2), GrpTRES: TRES{"cpu": 8}}
	m2, err := m.Apply(Change{{Kind: KindQOS, QOS: &q}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(m2)
	if err != nil {
		t.Fatal(err)
	}
	back := New()
	if err := json.Unmarshal(data, back); err != nil {
		t.Fatal(err)
	}
	got, _ := back.QOS("normal")
	if got.Limits.MaxJobs == nil || *got.Limits.MaxJobs != 2 || got.Limits.GrpTRES["cpu"] != 8 || !back.HasLimits() {
		t.Fatalf("limits after JSON: %+v", got.Limits)
	}
	c := back.Clone()
	cq, _ := c.QOS("normal")
	cq.Limits.GrpTRES["cpu"] = 1
	if again, _ := back.QOS("normal"); again.Limits.GrpTRES["cpu"] != 8 {
		t.Error("a clone shares its limits")
	}
}

func FuzzParseTRES(f *testing.F) {
	for _, s := range []string{"cpu=4,mem=10G", "gres/gpu:a100=2", "node=-1", "mem=5K", "x="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tres, err := ParseTRES(s)
		if err != nil {
			return
		}
		for name, v := range tres {
			if v == Unset {
				delete(tres, name)
			}
		}
		back, err := ParseTRES(tres.String())
		if err != nil || !maps.Equal(back, tres) && len(tres) > 0 {
			t.Fatalf("%q -> %q -> %v, %v", s, tres.String(), back, err)
		}
	})
}

// TestLimitsPrecedence: Under drops what the higher limits set, per
// count and per TRES; Over fills what the higher leave unset.
func TestLimitsPrecedence(t *testing.T) {
	hi := Limits{MaxWall: Count(60), GrpTRES: TRES{"cpu": 8}}
	lo := Limits{MaxWall: Count(120), GrpJobs: Count(3), GrpTRES: TRES{"cpu": 16, "gres/gpu": 4}}
	under := lo.Under(hi)
	if under.MaxWall != nil || under.GrpJobs == nil || *under.GrpJobs != 3 || len(under.GrpTRES) != 1 || under.GrpTRES["gres/gpu"] != 4 {
		t.Errorf("Under: %+v", under)
	}
	if lo.MaxWall == nil || lo.GrpTRES["cpu"] != 16 {
		t.Errorf("Under changed its receiver: %+v", lo)
	}
	over := hi.Over(lo)
	if *over.MaxWall != 60 || *over.GrpJobs != 3 || over.GrpTRES["cpu"] != 8 || over.GrpTRES["gres/gpu"] != 4 {
		t.Errorf("Over: %+v", over)
	}
	if hi.GrpJobs != nil || len(hi.GrpTRES) != 1 {
		t.Errorf("Over changed its receiver: %+v", hi)
	}
}
