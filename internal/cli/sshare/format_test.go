package sshare

import (
	"strings"
	"testing"
)

func TestFormatColumns(t *testing.T) {
	cols, err := formatColumns("acc,Raw,rawu%-5,EFF%0,TRES")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cols {
		got = append(got, c.title)
		if c.title == "RawUsage" && (c.width != 5 || !c.left) {
			t.Errorf("RawUsage%%-5: width %d left %v", c.width, c.left)
		}
		if c.title == "EffectvUsage" && (c.width != 13 || c.left) {
			t.Errorf("EffectvUsage%%0 keeps its default: width %d left %v", c.width, c.left)
		}
	}
	// A prefix takes the first field in sshare's order: Raw is RawShares.
	if strings.Join(got, ",") != "Account,RawShares,RawUsage,EffectvUsage,TRESRunMins" {
		t.Errorf("columns %v", got)
	}
	for in, want := range map[string]string{
		"Foo":           `Invalid field requested: "foo"`,
		"Account,":      `Invalid field requested: ""`,
		"Account, User": `Invalid field requested: " user"`,
	} {
		if _, err := formatColumns(in); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", in, err, want)
		}
	}
}

func FuzzFormatColumns(f *testing.F) {
	f.Add("Account%-30,User%5,ID,Cluster,Partition")
	f.Add("fairs%14,Lev%-12,RawS%4")
	f.Fuzz(func(t *testing.T, format string) {
		cols, err := formatColumns(format)
		if err != nil {
			return
		}
		for _, c := range cols {
			if c.width <= 0 || c.cell == nil {
				t.Fatalf("%q: column %+v", format, c)
			}
		}
		// Printing any row must not fail whatever the widths.
		var b strings.Builder
		printRow(&b, cols, &options{}, nil)
		printRow(&b, cols, &options{}, &row{account: "a", user: "u"})
	})
}
