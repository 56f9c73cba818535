package sacctmgr

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/clitest"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

func TestAbbrev(t *testing.T) {
	tests := map[string]struct {
		word, name string
		min        int
		want       bool
	}{
		"whole word":           {"qos", "QOS", 1, true},
		"prefix":               {"acc", "Account", 1, true},
		"one letter":           {"q", "QOS", 1, true},
		"shorter than min":     {"ad", "add", 3, false},
		"exact shorter":        {"ID", "ID", 2, true},
		"longer than the name": {"accounts", "Account", 1, false},
		"other word":           {"nosuch", "Names", 1, false},
		"case":                 {"WHERE", "where", 5, true},
		"min reached":          {"pree", "PreemptMode", 8, false},
		"min exactly":          {"preemptm", "PreemptMode", 8, true},
		"empty":                {"", "Names", 1, false},
	}
	for name, tc := range tests {
		if got := abbrev(tc.word, tc.name, tc.min); got != tc.want {
			t.Errorf("%s: abbrev(%q, %q, %d) = %v", name, tc.word, tc.name, tc.min, got)
		}
	}
}

func TestParseOption(t *testing.T) {
	tests := map[string]struct {
		word string
		want option
	}{
		"bare":      {"high", option{word: "high", key: "high"}},
		"value":     {"Priority=100", option{word: "Priority=100", key: "Priority", value: "100", eq: true}},
		"add":       {"QOS+=high", option{word: "QOS+=high", key: "QOS", value: "high", op: '+', eq: true}},
		"remove":    {"preempt-=low", option{word: "preempt-=low", key: "preempt", value: "low", op: '-', eq: true}},
		"empty":     {"Description=", option{word: "Description=", key: "Description", eq: true}},
		"two equal": {"a=b=c", option{word: "a=b=c", key: "a", value: "b=c", eq: true}},
		"only op":   {"+=x", option{word: "+=x", key: "", value: "x", op: '+', eq: true}},
	}
	for name, tc := range tests {
		if diff := cmp.Diff(tc.want, parseOption(tc.word), cmp.AllowUnexported(option{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func TestAddToList(t *testing.T) {
	tests := map[string]struct {
		list  []string
		names string
		lower bool
		want  []string
	}{
		"split and lower": {nil, "High,Low", true, []string{"high", "low"}},
		"keep case":       {nil, "Alice,bob", false, []string{"Alice", "bob"}},
		"duplicate moves": {[]string{"a", "b"}, "a", true, []string{"b", "a"}},
		"empty items":     {nil, ",,x,", true, []string{"x"}},
		"empty value":     {nil, "", true, []string{""}},
		"quoted":          {nil, `"a b",c`, true, []string{"a b"}},
		"inner quote":     {nil, `a'b`, true, []string{"a`b"}},
		"trimmed":         {nil, " a , b ", true, []string{"a", "b"}},
	}
	for name, tc := range tests {
		if diff := cmp.Diff(tc.want, addToList(tc.list, tc.names, tc.lower)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func TestStripQuotesAndNumbers(t *testing.T) {
	if got := stripQuotes(`"Physics Dept" x`, true); got != "physics dept" {
		t.Errorf("stripQuotes %q", got)
	}
	if got := stripQuotes(" Low Prio ", true); got != "low prio" {
		t.Errorf("stripQuotes %q", got)
	}
	for _, tc := range []struct {
		in          string
		n           uint32
		clear, good bool
	}{{"100", 100, false, true}, {"-1", 0, true, true}, {"1x", 0, false, false}, {"", 0, false, true}, {"'7'", 7, false, true}} {
		n, clear, ok := getUint(tc.in)
		if n != tc.n || clear != tc.clear || ok != tc.good {
			t.Errorf("getUint(%q) = %d %v %v", tc.in, n, clear, ok)
		}
	}
}

func TestSplitLine(t *testing.T) {
	got := splitLine(`  add qos high Description="a b" 'x y'z  `)
	want := []string{"add", "qos", "high", `Description="a b"`, `'x`, `y'z  `}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestFieldNamed(t *testing.T) {
	tests := map[string]field{
		"name":         {fName, "Name", 10, pStr},
		"prio":         {fPriority, "Priority", 10, pUint},
		"preempt":      {fPreempt, "Preempt", 10, pStr},
		"preemptm":     {fPreemptMode, "PreemptMode", 11, pStr},
		"preemptexe":   {fPreemptExempt, "PreemptExemptTime", 19, pSecs},
		"flags%40":     {fFlags, "Flags", 40, pStr},
		"name%-4":      {fName, "Name", -4, pStr},
		"name%x":       {fName, "Name", 10, pStr},
		"acc":          {fAccount, "Account", 10, pStr},
		"u":            {fUser, "User", 10, pStr},
		"defaultqos":   {fDefQOS, "Def QOS", 9, pStr},
		"defaulta":     {fDefAcct, "Def Acct", 10, pStr},
		"share":        {fShare, "Share", 9, pUint},
		"fairshare":    {fShare, "Share", 9, pUint},
		"ad":           {fAdmin, "Admin", 9, pStr},
		"maxw":         {fLimit, "MaxWall", 11, pTime},
		"grptresrunmi": {fLimit, "GrpTRESRunMins", 13, pTRES},
		"lineage":      {fLineage, "Lineage", -20, pStr},
	}
	for item, want := range tests {
		got, ok := fieldNamed(item)
		if !ok {
			t.Errorf("%s: not found", item)
			continue
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(field{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", item, diff)
		}
	}
	for _, bad := range []string{"bogus", "n", "x%5", ""} {
		if _, ok := fieldNamed(bad); ok {
			t.Errorf("%q found", bad)
		}
	}
}

func TestPrinter(t *testing.T) {
	fields := []field{{fName, "Name", 5, pStr}, {fPriority, "Priority", -4, pUint}, {fUsageFactor, "UsageFactor", 11, pDouble}, {fGrace, "GraceTime", 10, pSecs}}
	rows := [][]cell{
		{str("normal"), num(0), dbl(1), num(0)},
		{nullStr(), unset(), unset(), unset()},
		{str("hi"), num(123456), dbl(0.5), num(3661)},
	}
	tests := map[string]struct {
		p    printer
		want string
	}{
		"fixed": {printer{}, " Name Prio UsageFactor  GraceTime \n" +
			"----- ---- ----------- ---------- \n" +
			"norm+ 0       1.000000   00:00:00 \n" +
			"                                  \n" +
			"   hi 123456    0.500000   01:01:01 \n"},
		"parsable": {printer{parsable: true}, "Name|Priority|UsageFactor|GraceTime|\nnormal|0|1.000000|00:00:00|\n||||\nhi|123456|0.500000|01:01:01|\n"},
		"parsable2 no header": {printer{parsable2: true, noHeader: true},
			"normal|0|1.000000|00:00:00\n|||\nhi|123456|0.500000|01:01:01\n"},
	}
	for name, tc := range tests {
		var b bytes.Buffer
		p := tc.p
		p.w, p.fields = &b, fields
		p.header()
		for _, r := range rows {
			p.row(func(f field) cell {
				for i, g := range fields {
					if g == f {
						return r[i]
					}
				}
				return unset()
			})
		}
		if diff := cmp.Diff(tc.want, b.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

// captured serves the slurmdb captures of real slurmrestd (cluster
// "rccluster": QOS normal, accounts root and rcacct, users root and
// rcuser).
type captured struct {
	v0044.UnimplementedHandler
	t testing.TB
}

func (h captured) SlurmdbV0044GetAssociations(context.Context, v0044.SlurmdbV0044GetAssociationsParams) (v0044.SlurmdbV0044GetAssociationsRes, error) {
	var r v0044.V0044OpenapiAssocsResp
	clitest.LoadReference(h.t, "slurmdb_associations.json", &r)
	return &r, nil
}

func (h captured) SlurmdbV0044GetQos(context.Context, v0044.SlurmdbV0044GetQosParams) (v0044.SlurmdbV0044GetQosRes, error) {
	var r v0044.V0044OpenapiSlurmdbdQosResp
	clitest.LoadReference(h.t, "slurmdb_qos.json", &r)
	return &r, nil
}

// Against the records real slurmdbd answered with, sacctmgr prints what
// real sacctmgr printed for them (cli/sacctmgr_*.{cmd,out,rc}).
func TestReferenceCaptures(t *testing.T) {
	clitest.ReferenceDir(t)
	h := clitest.New(t, captured{t: t}, time.Now())
	for _, name := range []string{"sacctmgr_show_assoc", "sacctmgr_show_qos_P"} {
		want := clitest.ReferenceRun(t, name)
		line := strings.Fields(strings.TrimSpace(clitest.ReadReference(t, "cli/"+name+".cmd")))
		got := h.Run(Run, "sacctmgr", "", line[1:]...)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-real +ours):\n%s", strings.Join(line, " "), diff)
		}
	}
}

// Commands and options that need no controller.
func TestOptionsAndKeywords(t *testing.T) {
	clitest.ReferenceDir(t) // the records served are captures
	h := clitest.New(t, captured{t: t}, time.Now())
	tests := map[string]struct {
		stdin string
		args  []string
		want  clitest.Run
	}{
		"version":          {args: []string{"-V"}, want: clitest.Run{Stdout: "slurm " + clienv.SlurmVersion + "\n"}},
		"version keyword":  {args: []string{"version"}, want: clitest.Run{Stdout: "slurm " + clienv.SlurmVersion + "\n"}},
		"unknown option":   {args: []string{"--bogus", "show", "qos"}, want: clitest.Run{Code: 1, Stderr: "sacctmgr: unrecognized option '--bogus'\nTry \"sacctmgr --help\" for more information\n"}},
		"bad letter":       {args: []string{"-x"}, want: clitest.Run{Code: 1, Stderr: "sacctmgr: invalid option -- 'x'\nTry \"sacctmgr --help\" for more information\n"}},
		"invalid keyword":  {args: []string{"bogus"}, want: clitest.Run{Code: 1, Stderr: "invalid keyword: bogus\n"}},
		"no entity to add": {args: []string{"add"}, want: clitest.Run{Code: 1, Stderr: "No valid entity in add command\nInput line must include \"Account\", \"Cluster\", \"Coordinator\", \"Federation\", \"QOS\", \"Resource\", or \"User\"\n"}},
		"no entity to show": {args: []string{"show", "bogus"}, want: clitest.Run{Code: 1, Stderr: "No valid entity in list command\nInput line must include \"Account\", \"Association\", \"Cluster\", \"Configuration\",\n" +
			"\"Event\", \"Federation\", \"Problem\", \"QOS\", \"Resource\", \"Reservation\",\n\"RunAwayJobs\", \"Stats\", \"Transaction\", \"TRES\", \"User\", or \"WCKey\"\n"}},
		"unknown field":        {args: []string{"show", "qos", "format=bogus"}, want: clitest.Run{Code: 1, Stderr: "Unknown field 'bogus'\n"}},
		"readonly":             {args: []string{"-r", "add", "qos", "x"}, want: clitest.Run{Code: 1, Stderr: "Can't run this command in readonly mode.\n"}},
		"quiet and verbose":    {args: []string{"-Q", "-v", "show", "qos"}, want: clitest.Run{Code: 1, Stderr: "conflicting 'quiet' and 'verbose' options\n"}},
		"no command, no input": {args: nil, want: clitest.Run{Stdout: "sacctmgr: \n"}},
		"commands on stdin": {stdin: "show qos format=name\n# a comment\nbogus\n", args: nil,
			want: clitest.Run{Code: 1, Stdout: "sacctmgr: show qos format=name\n      Name \n---------- \n    normal \n" +
				"sacctmgr: # a comment\nsacctmgr: bogus\nsacctmgr: \n", Stderr: "invalid keyword: bogus\n"}},
		"blank line":                {stdin: "\n", args: nil, want: clitest.Run{Code: 1, Stdout: "sacctmgr: \nsacctmgr: \n"}},
		"options after the command": {args: []string{"show", "qos", "-P", "format=name,prio"}, want: clitest.Run{Stdout: "Name|Priority\nnormal|0\n"}},
		"where before format":       {args: []string{"-n", "show", "qos", "where", "name=normal", "format=name%5,priority%-4"}, want: clitest.Run{Stdout: "norm+ 0    \n"}},
		"no match":                  {args: []string{"-p", "show", "qos", "nosuch", "format=name"}, want: clitest.Run{Stdout: "Name|\n"}},
		"bad condition": {args: []string{"show", "qos", "bogus=1"}, want: clitest.Run{Code: 1,
			Stderr: " Unknown condition: bogus=1\n Use keyword 'set' to modify SLURM_PRINT_VALUE\n"}},
		"bad operator": {args: []string{"show", "qos", "name+=x"}, want: clitest.Run{Code: 1, Stderr: " Invalid operator '+=' in name+=x\n"}},
		"assoc by id":  {args: []string{"show", "assoc", "root"}, want: clitest.Run{Code: 1, Stderr: "sacctmgr: error: Invalid value for AssocId (root)\n"}},
		"assoc tree parsable": {args: []string{"-P", "show", "assoc", "format=account,user,qos,share,priority", "where", "users=rcuser"},
			want: clitest.Run{Stdout: "Account|User|QOS|Share|Priority\nrcacct|rcuser|normal|1|\n"}},
		"delete without conditions": {args: []string{"-i", "delete", "qos"}, want: clitest.Run{Code: 1, Stderr: " No conditions given to remove, not executing.\n"}},
	}
	for name, tc := range tests {
		got := h.Run(Run, "sacctmgr", tc.stdin, tc.args...)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

// The word parsers never fail on any command line: they always move on,
// stop within it, and keep every name they were given.
func FuzzCommandLine(f *testing.F) {
	for _, s := range []string{
		"add qos high Priority=100 Preempt=normal",
		"modify qos where name=high set Priority=200 Preempt+=normal",
		"modify user alice set DefaultQOS=normal QOS+=normal",
		"add account physics Parent=root Description=\"Physics Dept\" Organization=Science Fairshare=10",
		"add user alice Account=physics DefaultAccount=physics AdminLevel=Operator",
		"delete user where name=bob account=chem",
		"show qos format=name%5,priority%-4 where name=normal withdeleted",
		"show assoc format=account,user users=alice,bob tree wopl",
		"set where set where = == +=- -= '\"",
		"name=\"a,b\",'c' ids=1,x preemptmode=requeue,bogus",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words := splitLine(line)
		for _, w := range words {
			o := parseOption(w)
			if o.eq {
				op := ""
				if o.op != 0 {
					op = string(o.op)
				}
				if o.key+op+"="+o.value != w {
					t.Fatalf("%q split as %+v", w, o)
				}
			}
			addToList(nil, w, true)
			stripQuotes(w, true)
			fieldNamed(w)
		}
		var out, errb bytes.Buffer
		c := &cmd{ctx: context.Background(), env: &clienv.Env{Stdout: &out, Stderr: &errb}, immediate: true,
			qosCache: []qosRec{{id: 1, name: "normal", usageFactor: 1}}, cluster: "c"}
		parsers := []func(int) int{
			func(i int) int { var q qosCond; return c.qosCondWords(words, i, &q, true) },
			func(i int) int { var ch qosChange; var n []string; i, _ = c.qosRecWords(words, i, &n, &ch); return i },
			func(i int) int { var q acctCond; i, _ = c.acctCondWords(words, i, &q, true); return i },
			func(i int) int {
				var ch acctChange
				var n, cl []string
				i, _ = c.acctRecWords(words, i, &n, &cl, &ch)
				return i
			},
			func(i int) int { var q userCond; i, _ = c.userCondWords(words, i, &q, true); return i },
			func(i int) int { var ch userChange; i, _ = c.userRecWords(words, i, &ch); return i },
		}
		for _, parse := range parsers {
			for i := 0; i < len(words); i++ {
				next := parse(i)
				if next < i-1 || next > len(words) {
					t.Fatalf("%q: parser from %d stopped at %d", line, i, next)
				}
				i = max(next, i)
			}
		}
	})
}
