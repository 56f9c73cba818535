package sinfo

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sampleRecord is a record with every attribute set, for rendering.
func sampleRecord() *record {
	p := &partition{name: "gpu", isDefault: true, stateUp: "UP", maxTime: 30, defaultTime: noVal,
		maxNodes: infinite, maxShare: 1, prioTier: 1, prioJobFactor: 1, maxCPUsPerNode: infinite}
	return &record{
		part: p, state: stateIdle | flagDrain, nodesTotal: 2, nodesOther: 2,
		cpusTotal: 16, cpusOther: 16, minCPUs: 8, maxCPUs: 8, minSockets: 1, maxSockets: 2,
		minCores: 4, maxCores: 4, minThreads: 1, maxThreads: 1, minMem: 1000, maxMem: 2000,
		minWeight: 1, maxWeight: 1, minCPULoad: 12, maxCPULoad: 300, minFreeMem: 10, maxFreeMem: noVal64,
		features: "a,b", gres: "gpu:2", reason: "maint", reasonTime: 1795964461, reasonUser: "root",
		nodes: []string{"n1", "n2"}, nodeAddr: []string{"10.0.0.1"}, hostnms: []string{"h1"},
	}
}

func renderColumns(t *testing.T, f format) {
	pc := &printCtx{timeStr: func(v int64) string { return strconv.FormatInt(v, 10) }, preemptMode: "OFF"}
	for _, r := range []*record{nil, sampleRecord(), {}} {
		for _, col := range f.columns {
			var b strings.Builder
			col.text(&b, r, pc)
			out := b.String()
			if !strings.HasSuffix(out, col.suffix) {
				t.Fatalf("column %+v printed %q without its suffix", col, out)
			}
			if col.field != nil && col.width > 0 && len(out)-len(col.suffix) < col.width {
				t.Fatalf("column %+v printed %q, narrower than its width", col, out)
			}
		}
	}
}

// shortSpec writes a parsed -o format back in canonical form.
func shortSpec(f format) string {
	var b strings.Builder
	for i, col := range f.columns {
		if col.field == nil {
			if i == 0 && !strings.HasPrefix(col.suffix, "%") {
				b.WriteString(col.suffix)
				continue
			}
			b.WriteString(col.suffix)
			continue
		}
		b.WriteString("%")
		if col.right {
			b.WriteString(".")
		}
		if col.width > 0 {
			b.WriteString(strconv.Itoa(col.width))
		}
		b.WriteByte(col.field.letter)
		b.WriteString(col.suffix)
	}
	return b.String()
}

func FuzzParseShortFormat(f *testing.F) {
	for _, seed := range []string{
		"%P %a %l %D %t %N", "%#P %.5a %.10l %.6D %.6t %N", ">%Q<%P", "%all", "no percent",
		"%.3P|%-4t|%2D|%10l", "%50N%", "%", "%%", "%.", "%9", "%G %e %O %R %E %H %u %f %C %F %z %Z",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		parsed, errs := parseShort(spec)
		invalid := 0
		for i, col := range parsed.columns {
			if col.width < 0 || col.width > maxWidth {
				t.Fatalf("%q: width %d out of range", spec, col.width)
			}
			if col.field == nil && !(i == 0 && !strings.HasPrefix(col.suffix, "%")) {
				invalid++
			}
		}
		if invalid != len(errs) {
			t.Fatalf("%q: %d invalid columns but %d messages", spec, invalid, len(errs))
		}
		renderColumns(t, parsed)
		if strings.EqualFold(spec, "%all") || len(errs) > 0 {
			return
		}
		// The canonical form of a format parses to the same columns
		// ("%0All" writes back as "%All", which is "%all" to sinfo).
		if strings.EqualFold(shortSpec(parsed), "%all") {
			return
		}
		again, errs2 := parseShort(shortSpec(parsed))
		if len(errs2) != 0 {
			t.Fatalf("%q: canonical form %q has errors %v", spec, shortSpec(parsed), errs2)
		}
		if diff := cmp.Diff(parsed.columns, again.columns, cmp.AllowUnexported(column{}), cmp.Comparer(func(a, b *field) bool { return a == b })); diff != "" {
			t.Fatalf("%q: canonical form %q parses differently:\n%s", spec, shortSpec(parsed), diff)
		}
	})
}

// longSpec writes a parsed -O format back in canonical form.
func longSpec(f format) string {
	var parts []string
	for _, col := range f.columns {
		s := col.field.name + ":"
		if col.right {
			s += "."
		}
		parts = append(parts, s+strconv.Itoa(col.width)+col.suffix)
	}
	return strings.Join(parts, ",")
}

func FuzzParseLongFormat(f *testing.F) {
	for _, seed := range []string{
		"partition:9 ,available:.5 ,time:.10 ,nodes:.6 ,statecompact:.6 ,nodelist:0",
		"NodeList,CPUsState:.15,Memory:8,Gres:10,StateComplete",
		"all", "bogus", "Partition:", "Partition:.", "Partition:-3x", ",,,", "GresUsed:99999999999",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		parsed, errs := parseLong(spec)
		for _, col := range parsed.columns {
			if col.width < -maxWidth || col.width > maxWidth {
				t.Fatalf("%q: width %d out of range", spec, col.width)
			}
		}
		renderColumns(t, parsed)
		if len(errs) > 0 {
			return
		}
		again, errs2 := parseLong(longSpec(parsed))
		if len(errs2) != 0 {
			t.Fatalf("%q: canonical form %q has errors %v", spec, longSpec(parsed), errs2)
		}
		if diff := cmp.Diff(parsed.columns, again.columns, cmp.AllowUnexported(column{}), cmp.Comparer(func(a, b *field) bool { return a == b })); diff != "" {
			t.Fatalf("%q: canonical form %q parses differently:\n%s", spec, longSpec(parsed), diff)
		}
		if parsed.flags != again.flags {
			t.Fatalf("%q: match flags differ", spec)
		}
	})
}

func FuzzParseStates(f *testing.F) {
	for _, seed := range []string{"idle", "down,fail,drain", "~idle+~mix", "all", "drng&!alloc", "bogus", ",", "!", "Resv,PLND,inval"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		filters, and, err := parseStates(s)
		if err != nil {
			if filters != nil {
				t.Fatalf("%q: filters returned with error %v", s, err)
			}
			return
		}
		if len(filters) == 0 {
			t.Fatalf("%q: accepted without states", s)
		}
		if and != strings.ContainsAny(s, "+&") && !strings.EqualFold(s, "all") {
			t.Fatalf("%q: and=%v", s, and)
		}
		// Every filter must be usable against every kind of node.
		for _, f := range filters {
			for st := stateUnknown; st < stateEnd; st++ {
				stateMatches(f.state, st|flagDrain, 1)
				stateMatches(f.state, st, 0)
			}
		}
	})
}
