package hostlist

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpand(t *testing.T) {
	tests := map[string]struct {
		expr string
		want []string
	}{
		// /work/shared/reference/cli/scontrol_show_hostnames: scontrol show hostnames 'n[1-3,7]'
		"reference hostnames":     {expr: "n[1-3,7]", want: []string{"n1", "n2", "n3", "n7"}},
		"empty":                   {expr: "", want: nil},
		"only separators":         {expr: " ,, \t\n", want: nil},
		"plain":                   {expr: "login", want: []string{"login"}},
		"plain list":              {expr: "a,b,c", want: []string{"a", "b", "c"}},
		"whitespace separates":    {expr: "a b\tc\nd", want: []string{"a", "b", "c", "d"}},
		"empty items skipped":     {expr: ",a,,b,", want: []string{"a", "b"}},
		"order kept":              {expr: "n3,n1,n2", want: []string{"n3", "n1", "n2"}},
		"duplicates kept":         {expr: "n1,n[1-2],n1", want: []string{"n1", "n1", "n2", "n1"}},
		"single in brackets":      {expr: "n[5]", want: []string{"n5"}},
		"zero padding":            {expr: "n[001-003]", want: []string{"n001", "n002", "n003"}},
		"padding crosses widths":  {expr: "n[098-101]", want: []string{"n098", "n099", "n100", "n101"}},
		"width from first number": {expr: "n[8-010]", want: []string{"n8", "n9", "n10"}},
		"padded single":           {expr: "n[007]", want: []string{"n007"}},
		"zero":                    {expr: "n[0-2]", want: []string{"n0", "n1", "n2"}},
		"empty prefix":            {expr: "[1-3]", want: []string{"1", "2", "3"}},
		"prefix ends in digit":    {expr: "n1[0-1]", want: []string{"n10", "n11"}},
		"cartesian":               {expr: "r[1-2]n[1-3]", want: []string{"r1n1", "r1n2", "r1n3", "r2n1", "r2n2", "r2n3"}},
		"cartesian with lists":    {expr: "a[1,3]b[01-02]", want: []string{"a1b01", "a1b02", "a3b01", "a3b02"}},
		"three groups":            {expr: "x[1-2]y[1]z[1-2]", want: []string{"x1y1z1", "x1y1z2", "x2y1z1", "x2y1z2"}},
		"separators in brackets":  {expr: "n[1, 3] m[ 2 - 3 ]", want: []string{"n1", "n3", "m2", "m3"}},
		"mixed":                   {expr: "login1,n[1-2],gpu[01-02]x[1]", want: []string{"login1", "n1", "n2", "gpu01x1", "gpu02x1"}},
		"dashes and dots":         {expr: "node-a.b[1-2]", want: []string{"node-a.b1", "node-a.b2"}},
		"addr list":               {expr: "10.0.0.[1-2]", want: []string{"10.0.0.1", "10.0.0.2"}},
		"port range":              {expr: "[17001-17004]", want: []string{"17001", "17002", "17003", "17004"}},
		"full range":              {expr: "n[1-65536]", want: numbered("n", 1, 65536)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Expand(tc.expr)
			if err != nil {
				t.Fatalf("Expand(%q): %v", tc.expr, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Expand(%q) mismatch (-want +got):\n%s", tc.expr, diff)
			}
			n, err := Count(tc.expr)
			if err != nil || n != len(tc.want) {
				t.Errorf("Count(%q) = %d, %v; want %d", tc.expr, n, err, len(tc.want))
			}
		})
	}
}

func numbered(prefix string, lo, hi int) []string {
	var out []string
	for i := lo; i <= hi; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

func TestExpandErrors(t *testing.T) {
	tests := map[string]struct {
		expr string
		kind error
		want string
	}{
		"unclosed":          {expr: "n[1-", kind: ErrInvalid, want: `invalid hostlist: unclosed '[' in "n[1-"`},
		"unclosed eats":     {expr: "n[1-2,m3", kind: ErrInvalid, want: `invalid hostlist: unclosed '[' in "n[1-2,m3"`},
		"stray close":       {expr: "a,n1-3],b", kind: ErrInvalid, want: `invalid hostlist: unexpected ']' in "n1-3]"`},
		"nested":            {expr: "n[1[2]]", kind: ErrInvalid, want: `invalid hostlist: nested '[' in "n[1[2]]"`},
		"suffix":            {expr: "n[1-2]x", kind: ErrInvalid, want: `invalid hostlist: text "x" after ']' in "n[1-2]x"`},
		"empty brackets":    {expr: "n[]", kind: ErrInvalid, want: `invalid hostlist: empty brackets in "n[]"`},
		"blank brackets":    {expr: "n[ ]", kind: ErrInvalid, want: `invalid hostlist: empty brackets in "n[ ]"`},
		"empty element":     {expr: "n[1,,2]", kind: ErrInvalid, want: `invalid hostlist: empty range in brackets in "n[1,,2]"`},
		"trailing comma":    {expr: "n[1,]", kind: ErrInvalid, want: `invalid hostlist: empty range in brackets in "n[1,]"`},
		"reversed":          {expr: "n[3-1]", kind: ErrInvalid, want: `invalid hostlist: reversed range "3-1" in "n[3-1]"`},
		"letters":           {expr: "n[a-c]", kind: ErrInvalid, want: `invalid hostlist: invalid range "a-c" in "n[a-c]"`},
		"negative":          {expr: "n[-1]", kind: ErrInvalid, want: `invalid hostlist: invalid range "-1" in "n[-1]"`},
		"open range":        {expr: "n[1-]", kind: ErrInvalid, want: `invalid hostlist: invalid range "1-" in "n[1-]"`},
		"double dash":       {expr: "n[1--3]", kind: ErrInvalid, want: `invalid hostlist: invalid range "1--3" in "n[1--3]"`},
		"two dashes":        {expr: "n[1-2-3]", kind: ErrInvalid, want: `invalid hostlist: invalid range "1-2-3" in "n[1-2-3]"`},
		"plus sign":         {expr: "n[+1]", kind: ErrInvalid, want: `invalid hostlist: invalid range "+1" in "n[+1]"`},
		"box syntax":        {expr: "bgl[123x456]", kind: ErrInvalid, want: `invalid hostlist: invalid range "123x456" in "bgl[123x456]"`},
		"blank in number":   {expr: "n[1 2]", kind: ErrInvalid, want: `invalid hostlist: invalid range "1 2" in "n[1 2]"`},
		"number too long":   {expr: "n[1234567890123456789]", kind: ErrInvalid, want: `invalid hostlist: number "1234567890123456789" too long in "n[1234567890123456789]"`},
		"control character": {expr: "a\x00b", kind: ErrInvalid, want: `invalid hostlist: control character '\x00' in "a\x00b"`},
		"range too large":   {expr: "n[0-65536]", kind: ErrTooLarge, want: `hostlist too large: range "0-65536" has more than 65536 hosts in "n[0-65536]"`},
		"product too large": {expr: "a[0-1023]b[0-1024]", kind: ErrTooLarge, want: `hostlist too large: more than 1048576 hosts in "a[0-1023]b[0-1024]"`},
		"total too large":   {expr: strings.Repeat("n[1-65536],", 16) + "x", kind: ErrTooLarge, want: `hostlist too large: more than 1048576 hosts in "x"`},
		"bytes too large":   {expr: strings.Repeat("a", 1100) + "[1-65536]", kind: ErrTooLarge, want: `hostlist too large: more than 67108864 bytes of host names in "` + strings.Repeat("a", 1100) + `[1-65536]"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Expand(tc.expr)
			if err == nil {
				t.Fatalf("Expand(%q) = %d names, want error", tc.expr, len(got))
			}
			if !errors.Is(err, tc.kind) {
				t.Errorf("Expand(%q) error %v is not %v", tc.expr, err, tc.kind)
			}
			var he *Error
			if !errors.As(err, &he) {
				t.Errorf("Expand(%q) error %T is not *Error", tc.expr, err)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("Expand(%q) error text mismatch (-want +got):\n%s", tc.expr, diff)
			}
			if _, cerr := Count(tc.expr); cerr == nil || cerr.Error() != err.Error() {
				t.Errorf("Count(%q) error = %v, want %v", tc.expr, cerr, err)
			}
		})
	}
}

func TestCompress(t *testing.T) {
	tests := map[string]struct {
		names []string
		want  string
	}{
		// /work/shared/reference/cli/scontrol_show_hostlist: scontrol show hostlist a1,a2,a3
		"reference hostlist":       {names: []string{"a1", "a2", "a3"}, want: "a[1-3]"},
		"empty":                    {names: nil, want: ""},
		"single numbered":          {names: []string{"n5"}, want: "n5"},
		"single plain":             {names: []string{"login"}, want: "login"},
		"order kept":               {names: []string{"h003", "h002", "h001"}, want: "h[003,002,001]"},
		"gap":                      {names: []string{"n1", "n2", "n3", "n7"}, want: "n[1-3,7]"},
		"other prefix breaks":      {names: []string{"n1", "m1", "n2"}, want: "n1,m1,n2"},
		"plain breaks bracket":     {names: []string{"n1", "n", "n2"}, want: "n1,n,n2"},
		"duplicates":               {names: []string{"n1", "n1"}, want: "n[1,1]"},
		"padding":                  {names: []string{"n01", "n02", "n03"}, want: "n[01-03]"},
		"padding into wider":       {names: []string{"n08", "n09", "n10", "n11"}, want: "n[08-11]"},
		"unpadded widths merge":    {names: []string{"n9", "n10", "n11"}, want: "n[9-11]"},
		"padded after unpadded":    {names: []string{"n9", "n010"}, want: "n[9,010]"},
		"different padding":        {names: []string{"n01", "n002"}, want: "n[01,002]"},
		"zero":                     {names: []string{"n0", "n1"}, want: "n[0-1]"},
		"padded zero":              {names: []string{"n00", "n01"}, want: "n[00-01]"},
		"digits only":              {names: []string{"1", "2", "3"}, want: "[1-3]"},
		"two dimensional":          {names: []string{"r1n1", "r1n2", "r2n1", "r2n2"}, want: "r1n[1-2],r2n[1-2]"},
		"empty names skipped":      {names: []string{"", "a1", "", "a2"}, want: "a[1-2]"},
		"very long number":         {names: []string{"n1234567890123456789", "n1234567890123456790"}, want: "n1234567890123456789,n1234567890123456790"},
		"long runs split at 65536": {names: numbered("n", 0, 65536), want: "n[0-65535,65536]"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Compress(tc.names)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Compress(%q) mismatch (-want +got):\n%s", tc.names, diff)
			}
			var nonEmpty []string
			for _, n := range tc.names {
				if n != "" {
					nonEmpty = append(nonEmpty, n)
				}
			}
			back, err := Expand(got)
			if err != nil {
				t.Fatalf("Expand(%q): %v", got, err)
			}
			if diff := cmp.Diff(nonEmpty, back); diff != "" {
				t.Errorf("Expand(Compress) mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompressSorted(t *testing.T) {
	tests := map[string]struct {
		names []string
		want  string
	}{
		// /work/shared/reference/cli/scontrol_show_hostlistsorted: scontrol show hostlistsorted n3,n1,n2,n10
		"reference hostlistsorted": {names: []string{"n3", "n1", "n2", "n10"}, want: "n[1-3,10]"},
		"padded":                   {names: []string{"h003", "h002", "h001"}, want: "h[001-003]"},
		"duplicates kept":          {names: []string{"n2", "n1", "n1"}, want: "n[1,1-2]"},
		"overlapping ranges":       {names: []string{"n5", "n6", "n7", "n1", "n2", "n3", "n4", "n5", "n6", "n7"}, want: "n[1-5,5-6,6-7,7]"},
		"prefixes natural":         {names: []string{"r10n1", "r2n1", "r1n2", "r1n1"}, want: "r1n[1-2],r2n1,r10n1"},
		"plain first":              {names: []string{"n2", "n", "n1", "login"}, want: "login,n,n[1-2]"},
		"widths":                   {names: []string{"n100", "n001", "n10", "n01", "n9"}, want: "n[9,01,10,001,100]"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := CompressSorted(tc.names)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CompressSorted(%q) mismatch (-want +got):\n%s", tc.names, diff)
			}
		})
	}
}

func TestSort(t *testing.T) {
	names := []string{"n100", "b", "n001", "n10", "n", "n01", "n9", "a10", "a9", "r10n1", "r2n1", "n0", "n00"}
	Sort(names)
	want := []string{"a9", "a10", "b", "n", "n0", "n9", "n00", "n01", "n10", "n001", "n100", "r2n1", "r10n1"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("Sort mismatch (-want +got):\n%s", diff)
	}
}

func TestNatCompare(t *testing.T) {
	tests := map[string]struct {
		a, b string
		want int
	}{
		"equal":             {a: "rack", b: "rack", want: 0},
		"numbers by value":  {a: "r2n", b: "r10n", want: -1},
		"longer wins":       {a: "r100n", b: "r99n", want: 1},
		"leading zero":      {a: "r01n", b: "r1n", want: -1},
		"fraction":          {a: "r012n", b: "r02n", want: -1},
		"prefix of":         {a: "ab", b: "abc", want: -1},
		"letters":           {a: "b", b: "a", want: 1},
		"digit vs letter":   {a: "a1", b: "ab", want: -1},
		"same value run on": {a: "a2b", b: "a2c", want: -1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := natCompare(tc.a, tc.b); got != tc.want {
				t.Errorf("natCompare(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
			if got := natCompare(tc.b, tc.a); got != -tc.want {
				t.Errorf("natCompare(%q, %q) = %d, want %d", tc.b, tc.a, got, -tc.want)
			}
		})
	}
}

func TestDigitBytes(t *testing.T) {
	for _, tc := range []struct {
		lo, hi uint64
		w      int
	}{{0, 0, 1}, {0, 12, 1}, {8, 1234, 2}, {5, 5, 3}, {99, 101, 3}, {999999999999999990, 999999999999999999, 1}} {
		var want uint64
		for v := tc.lo; ; v++ {
			want += uint64(len(appendPadded(nil, v, tc.w)))
			if v == tc.hi {
				break
			}
		}
		if got := digitBytes(tc.lo, tc.hi, tc.w); got != want {
			t.Errorf("digitBytes(%d, %d, %d) = %d, want %d", tc.lo, tc.hi, tc.w, got, want)
		}
	}
}

func BenchmarkExpand(b *testing.B) {
	for b.Loop() {
		if _, err := Expand("rack[01-16]node[001-064]"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCompareTotalOrder sorts every short string over an alphabet that
// mixes letters and (zero-led) digits and checks that all pairs agree with
// the sorted order, which holds only if Compare is a total order.
func TestCompareTotalOrder(t *testing.T) {
	const alphabet = "a019"
	var all []string
	var gen func(s string)
	gen = func(s string) {
		if s != "" {
			all = append(all, s)
		}
		if len(s) == 4 {
			return
		}
		for i := range alphabet {
			gen(s + alphabet[i:i+1])
		}
	}
	gen("")
	Sort(all)
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			if Compare(all[i], all[j]) >= 0 {
				t.Fatalf("sorted %q before %q but Compare = %d", all[i], all[j], Compare(all[i], all[j]))
			}
		}
	}
}

func TestIntersects(t *testing.T) {
	tests := []struct {
		names []string
		expr  string
		want  bool
	}{
		{[]string{"n3"}, "n[1-4]", true},
		{[]string{"n5", "n2"}, "n[1-2],m1", true},
		{[]string{"n5"}, "n[1-4]", false},
		{[]string{"n1"}, "", false},
		{nil, "n1", false},
		{[]string{"n1"}, "n[1-", false},
		{[]string{"n007"}, "n[001-010]", true},
		{[]string{"n7"}, "n[001-010]", false},
	}
	for _, tc := range tests {
		if got := Intersects(tc.names, tc.expr); got != tc.want {
			t.Errorf("Intersects(%q, %q) = %v, want %v", tc.names, tc.expr, got, tc.want)
		}
	}
}
