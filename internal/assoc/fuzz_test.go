package assoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// invariants checks, through the exported API only, what every model Apply
// returns must hold.
func invariants(m *Model) error {
	all := m.Associations()
	ids := map[uint32]bool{}
	pos := map[string]int{}
	for i, a := range all {
		if ids[a.ID] || a.ID == 0 {
			return fmt.Errorf("%s: duplicate or zero id %d", a, a.ID)
		}
		ids[a.ID] = true
		pos[a.String()] = i
	}
	if len(all) == 0 || all[0].Account != RootAccount || all[0].User != "" || all[0].ParentAccount != "" {
		return fmt.Errorf("tree does not start at root: %v", all)
	}
	for i, a := range all {
		if _, ok := m.Account(a.Account); !ok {
			return fmt.Errorf("%s: account %s does not exist", a, a.Account)
		}
		if a.Shares == 0 {
			return fmt.Errorf("%s: no shares", a)
		}
		if a.User != "" {
			if _, ok := m.User(a.User); !ok {
				return fmt.Errorf("%s: user %s does not exist", a, a.User)
			}
			if a.ParentAccount != a.Account {
				return fmt.Errorf("%s: parent %s", a, a.ParentAccount)
			}
		} else if a.Partition != "" {
			return fmt.Errorf("%s: account association with a partition", a)
		}
		// Walk up to root: every step must exist and come earlier in the
		// tree order.
		cur, steps := a, 0
		for cur.Account != RootAccount || cur.User != "" {
			parentAcct := cur.ParentAccount
			p, ok := m.Assoc(parentAcct, "", "")
			if !ok {
				return fmt.Errorf("%s: parent %s has no association", cur, parentAcct)
			}
			if pos[p.String()] >= pos[cur.String()] {
				return fmt.Errorf("%s listed before its parent %s", cur, p)
			}
			if steps++; steps > len(all) {
				return fmt.Errorf("%s: parents loop", a)
			}
			cur = p
		}
		if i > 0 && a.Account == RootAccount && a.User == "" {
			return fmt.Errorf("root listed twice")
		}
		for _, q := range a.QOS {
			if _, ok := m.QOS(q); !ok {
				return fmt.Errorf("%s: qos %s does not exist", a, q)
			}
		}
		e := m.Effective(a)
		if e.DefaultQOS != "" && !slices.Contains(e.QOS, e.DefaultQOS) {
			return fmt.Errorf("%s: default qos %s outside %v", a, e.DefaultQOS, e.QOS)
		}
	}
	for _, u := range m.Users() {
		if u.DefaultAccount == "" {
			continue
		}
		found := false
		for _, a := range all {
			found = found || a.User == u.Name && a.Account == u.DefaultAccount
		}
		if !found {
			return fmt.Errorf("user %s: default account %s without association", u.Name, u.DefaultAccount)
		}
	}
	qids := map[uint32]bool{}
	for _, q := range m.QOSList() {
		if qids[q.ID] || q.ID == 0 {
			return fmt.Errorf("qos %s: duplicate or zero id %d", q.Name, q.ID)
		}
		qids[q.ID] = true
		if loop := reaches(m, q.Name, q.Name, map[string]bool{}); loop {
			return fmt.Errorf("qos %s: preemption loop", q.Name)
		}
	}
	return nil
}

// reaches reports whether from preempts target, directly or through
// others.
func reaches(m *Model, from, target string, seen map[string]bool) bool {
	q, ok := m.QOS(from)
	if !ok {
		return false
	}
	for _, p := range q.Preempt {
		if _, ok := m.QOS(p); !ok {
			panic("preempted qos " + p + " does not exist")
		}
		if p == target {
			return true
		}
		if !seen[p] {
			seen[p] = true
			if reaches(m, p, target, seen) {
				return true
			}
		}
	}
	return false
}

var (
	fuzzAccounts   = []string{"root", "a", "b", "c", "bad name"}
	fuzzUsers      = []string{"root", "u1", "u2", "u3", ""}
	fuzzQOS        = []string{"normal", "hi", "lo", "new", "bad,q"}
	fuzzPartitions = []string{"", "p1", "p2"}
)

func pick(list []string, b byte) string { return list[int(b)%len(list)] }

// pickSet picks the names whose bits are set in b.
func pickSet(list []string, b byte) []string {
	var out []string
	for i, s := range list {
		if b&(1<<i) != 0 {
			out = append(out, s)
		}
	}
	return out
}

// fuzzChange decodes up to 8 items, 4 bytes each.
func fuzzChange(data []byte) Change {
	var c Change
	for len(data) >= 4 && len(c) < 8 {
		b0, b1, b2, b3 := data[0], data[1], data[2], data[3]
		data = data[4:]
		del := b0&4 != 0
		switch b0 % 4 {
		case 0:
			q := QOS{Name: pick(fuzzQOS, b1), Preempt: pickSet(fuzzQOS[:4], b2), Priority: uint32(b3)}
			if b2&0x80 != 0 {
				q.UsageFactor = float64(int(b3%4) - 1)
			}
			c = append(c, Item{Kind: KindQOS, Delete: del, QOS: &q})
		case 1:
			c = append(c, Item{Kind: KindAccount, Delete: del, Account: &Account{Name: pick(fuzzAccounts, b1)}})
		case 2:
			def := ""
			if b2%6 < 5 {
				def = pick(fuzzAccounts, b2)
			}
			u := User{Name: pick(fuzzUsers, b1), DefaultAccount: def, AdminLevel: AdminLevel(b3 % 4)}
			c = append(c, Item{Kind: KindUser, Delete: del, User: &u})
		case 3:
			a := Association{
				Account:   pick(fuzzAccounts, b1),
				User:      pick(fuzzUsers, b2),
				Partition: pick(fuzzPartitions, b3),
				QOS:       pickSet(fuzzQOS[:4], b2>>3),
				Priority:  uint32(b1 >> 5),
			}
			if p := (b3 >> 2) % 6; p < 5 {
				a.ParentAccount = fuzzAccounts[p]
			}
			if d := (b3 >> 5) % 6; d < 5 {
				a.DefaultQOS = fuzzQOS[d]
			}
			c = append(c, Item{Kind: KindAssoc, Delete: del, Assoc: &a})
		}
	}
	return c
}

// fuzzModel is the small fixed model FuzzApply changes: New plus QOS hi
// (preempting lo) and lo, accounts a (under root) and b (under a, QOS lo
// and hi, default lo), user u1 in a and b (default a), u2 in b.
func fuzzModel(t testing.TB) *Model {
	t.Helper()
	m, err := New().Apply(Change{
		putQOS(QOS{Name: "hi", Priority: 10, Preempt: []string{"lo"}}),
		putQOS(QOS{Name: "lo", Priority: 1}),
		putAcct("a"), putAcct("b"),
		acctAssoc("a", "root").item(),
		acctAssoc("b", "a").qos("lo", "hi").def("lo").item(),
		putUser("u1", "a"), putUser("u2", "b"),
		userAssoc("a", "u1").item(), userAssoc("b", "u1").part("p1").item(),
		userAssoc("b", "u2").item(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func FuzzApply(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 3, 1, 5})                   // qos new preempting normal
	f.Add([]byte{5, 1, 0, 0})                   // delete account a
	f.Add([]byte{1, 3, 0, 0, 3, 3, 0, 0})       // account c, its association
	f.Add([]byte{0, 2, 2, 0, 0, 1, 4, 0})       // lo preempts hi: a loop
	f.Add([]byte{6, 1, 0, 0, 7, 1, 1, 0})       // delete u1, its association
	f.Add([]byte{3, 2, 1, 0x24, 2, 1, 2, 0})    // u1 under b, default b
	f.Add([]byte{4, 2, 0, 0, 3, 3, 0x0a, 0x44}) // delete lo; c/u3 assoc
	f.Add([]byte{3, 1, 0, 0x08, 3, 2, 0, 0x04}) // a under b, b under root
	f.Add([]byte{2, 3, 3, 1, 3, 3, 3, 1, 1, 3, 0, 0, 3, 3, 0, 0x04})
	f.Fuzz(func(t *testing.T, data []byte) {
		m := fuzzModel(t)
		before, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		c := fuzzChange(data)
		next, err := m.Apply(c)
		after, _ := json.Marshal(m)
		if !bytes.Equal(before, after) {
			t.Fatalf("Apply changed its receiver:\n%s\n%s", before, after)
		}
		if err != nil {
			if next != nil {
				t.Fatalf("Apply returned a model and %v", err)
			}
			return
		}
		if err := invariants(next); err != nil {
			cj, _ := json.Marshal(c)
			t.Fatalf("after %s: %v", cj, err)
		}
		// The result survives a round trip unchanged.
		b, err := json.Marshal(next)
		if err != nil {
			t.Fatal(err)
		}
		var back Model
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("round trip: %v\n%s", err, b)
		}
		again, _ := json.Marshal(&back)
		if !bytes.Equal(b, again) {
			t.Fatalf("round trip differs:\n%s\n%s", b, again)
		}
	})
}

func FuzzParseEnforce(f *testing.F) {
	for _, s := range []string{"", "0", "none", "associations,limits,qos", "all,nojobs", "nojobs,all", "safe", "1,2,wckeys", ",,QOS,", "nosteps", "tres"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseEnforce(s)
		if err != nil {
			return
		}
		if (e.Limits || e.QOS || e.Safe || e.WCKeys) && !e.Associations {
			t.Fatalf("%q: %+v without associations", s, e)
		}
		if e.Safe && !e.Limits || e.NoJobs && !e.NoSteps {
			t.Fatalf("%q: %+v misses an implied flag", s, e)
		}
		str := e.String()
		back, err := ParseEnforce(str)
		if err != nil || back != e {
			t.Fatalf("%q: String %q parses to %+v, %v", s, str, back, err)
		}
		if (str == "none") != (e == Enforce{}) || strings.Contains(str, ",,") {
			t.Fatalf("%q: String %q", s, str)
		}
	})
}
