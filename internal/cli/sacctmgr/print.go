package sacctmgr

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/droverhq/drover/internal/timefmt"
)

// fieldType says what a column shows (sacctmgr's PRINT_* values).
type fieldType int

const (
	fAccount fieldType = iota
	fAdmin
	fCluster
	fComment
	fCoords
	fDefAcct
	fDefQOS
	fDefWCKey
	fDesc
	fFlags
	fGrace
	fID
	fLineage
	fName
	fOrg
	fParentID
	fParentName
	fPartition
	fPreemptMode
	fPreempt
	fPreemptExempt
	fPriority
	fQOS
	fQOSRaw
	fShare
	fUsageFactor
	fUsageThres
	fLimitFactor
	fUser
	fWCKeys
	fLimit // a limit Drover does not keep: always empty
)

// printKind is how a column prints its value (sacctmgr's print routines).
type printKind int

const (
	pStr      printKind = iota // print_fields_str
	pUint                      // print_fields_uint32/uint64
	pDouble                    // print_fields_double
	pTime                      // print_fields_time (minutes)
	pSecs                      // print_fields_time_from_secs
	pTRES                      // sacctmgr_print_tres
	pCharList                  // print_fields_char_list
)

// field is a column: its title, width (negative: left aligned) and kind.
type field struct {
	typ   fieldType
	name  string
	width int
	kind  printKind
}

// fieldSpec is one entry of sacctmgr's _get_print_field table: the names
// (and shortest prefixes) that select it.
type fieldSpec struct {
	names []string
	mins  []int
	field
}

func spec(typ fieldType, title string, width int, kind printKind, namesAndMins ...any) fieldSpec {
	s := fieldSpec{field: field{typ: typ, name: title, width: width, kind: kind}}
	for i := 0; i < len(namesAndMins); i += 2 {
		s.names = append(s.names, namesAndMins[i].(string))
		s.mins = append(s.mins, namesAndMins[i+1].(int))
	}
	return s
}

// fieldTable is _get_print_field's table, in its order (the first match
// wins), for the columns of the qos, account, user and association
// listings. The TRES and job limits Drover does not keep print empty.
// It is built when sacctmgr first prints, not as every command starts.
var fieldTable = sync.OnceValue(func() []fieldSpec {
	return []fieldSpec{
		spec(fAccount, "Account", 10, pStr, "Account", 3, "Acct", 4),
		spec(fAdmin, "Admin", 9, pStr, "AdminLevel", 2),
		spec(fLimit, "Assocs", 10, pStr, "Associations", 2),
		spec(fLimit, "TRES", 20, pStr, "TRES", 2),
		spec(fCluster, "Cluster", 10, pStr, "Clusters", 2),
		spec(fCoords, "Coord Accounts", 20, pStr, "Coordinators", 3),
		spec(fComment, "Comment", 20, pStr, "Comment", 3),
		spec(fDefAcct, "Def Acct", 10, pStr, "DefaultAccount", 8),
		spec(fDefQOS, "Def QOS", 9, pStr, "DefaultQOS", 8),
		spec(fDefWCKey, "Def WCKey", 10, pStr, "DefaultWCKey", 8),
		spec(fDesc, "Descr", 20, pStr, "Description", 3),
		spec(fFlags, "Flags", 20, pStr, "Flags", 2),
		spec(fGrace, "GraceTime", 10, pSecs, "GraceTime", 3),
		spec(fLimit, "GrpCPUs", 8, pUint, "GrpCPUs", 6),
		spec(fLimit, "GrpCPUMins", 11, pUint, "GrpCPUMins", 7),
		spec(fLimit, "GrpCPURunMins", 13, pUint, "GrpCPURunMins", 7),
		spec(fLimit, "GrpTRES", 13, pTRES, "GrpTRES", 7),
		spec(fLimit, "GrpTRESMins", 13, pTRES, "GrpTRESMins", 7),
		spec(fLimit, "GrpTRESRunMins", 13, pTRES, "GrpTRESRunMins", 7),
		spec(fLimit, "GrpJobs", 7, pUint, "GrpJobs", 4),
		spec(fLimit, "GrpJobsAccrue", 13, pUint, "GrpJobsAccrue", 8),
		spec(fLimit, "GrpMem", 7, pUint, "GrpMemory", 4),
		spec(fLimit, "GrpNodes", 8, pUint, "GrpNodes", 4),
		spec(fLimit, "GrpSubmit", 9, pUint, "GrpSubmitJobs", 4),
		spec(fLimit, "GrpWall", 11, pTime, "GrpWall", 4),
		spec(fID, "ID", 6, pUint, "ID", 2),
		spec(fLineage, "Lineage", -20, pStr, "Lineage", 1),
		spec(fLimit, "MaxCPUMins", 11, pUint, "MaxCPUMinsPerJob", 7),
		spec(fLimit, "MaxCPURunMinsPU", 15, pUint, "MaxCPURunMinsPerUser", 7, "MaxCPURunMinsPU", 7),
		spec(fLimit, "MaxCPUs", 8, pUint, "MaxCPUsPerJob", 7),
		spec(fLimit, "MaxCPUsPU", 9, pUint, "MaxCPUsPerUser", 11, "MaxCPUsPU", 9),
		spec(fLimit, "MaxTRES", 13, pTRES, "MaxTRES", 7, "MaxTRESPJ", 9, "MaxTRESPerJob", 11),
		spec(fLimit, "MaxTRESPerNode", 14, pTRES, "MaxTRESPerNode", 11, "MaxTRESPN", 9),
		spec(fLimit, "MaxTRESMins", 13, pTRES, "MaxTRESMinsPerJob", 8, "MaxTRESMinsPJ", 13),
		spec(fLimit, "MaxTRESRunMinsPA", 16, pTRES, "MaxTRESRunMinsPerAccount", 18, "MaxTRESRunMinsPerAcct", 18, "MaxTRESRunMinsPA", 15),
		spec(fLimit, "MaxTRESRunMinsPU", 16, pTRES, "MaxTRESRunMinsPerUser", 8, "MaxTRESRunMinsPU", 8),
		spec(fLimit, "MaxTRESPA", 13, pTRES, "MaxTRESPerAccount", 11, "MaxTRESPerAcct", 11, "MaxTRESPA", 9),
		spec(fLimit, "MaxTRESPU", 13, pTRES, "MaxTRESPerUser", 11, "MaxTRESPU", 9),
		spec(fLimit, "MaxJobs", 7, pUint, "MaxJobs", 4),
		spec(fLimit, "MaxJobsAccrue", 13, pUint, "MaxJobsAccrue", 4),
		spec(fLimit, "MaxJobsAccruePA", 15, pUint, "MaxJobsAccruePerAccount", 17, "MaxJobsAccruePerAcct", 17, "MaxJobsAccruePA", 15),
		spec(fLimit, "MaxJobsAccruePU", 15, pUint, "MaxJobsAccruePerUser", 17, "MaxJobsAccruePU", 15),
		spec(fLimit, "MaxJobsPA", 9, pUint, "MaxJobsPerAccount", 11, "MaxJobsPerAcct", 11, "MaxJobsPA", 9),
		spec(fLimit, "MaxJobsPU", 9, pUint, "MaxJobsPerUser", 11, "MaxJobsPU", 9),
		spec(fLimit, "MaxNodes", 8, pUint, "MaxNodesPerJob", 4),
		spec(fLimit, "MaxNodesPU", 10, pUint, "MaxNodesPerUser", 12, "MaxNodesPU", 10),
		spec(fLimit, "MinPrioThres", 12, pUint, "MinPrioThreshold", 4),
		spec(fLimit, "MaxSubmit", 9, pUint, "MaxSubmitJobs", 4),
		spec(fLimit, "MaxSubmitPA", 11, pUint, "MaxSubmitJobsPerAccount", 17, "MaxSubmitJobsPerAcct", 17, "MaxSubmitJobsPA", 15, "MaxSubmitPA", 11),
		spec(fLimit, "MaxSubmitPU", 11, pUint, "MaxSubmitJobsPerUser", 10, "MaxSubmitJobsPU", 10, "MaxSubmitPU", 6),
		spec(fLimit, "MaxWall", 11, pTime, "MaxWallDurationPerJob", 4),
		spec(fLimit, "MinCPUs", 8, pUint, "MinCPUsPerJob", 7),
		spec(fLimit, "MinTRES", 13, pTRES, "MinTRESPerJob", 7),
		spec(fName, "Name", 10, pStr, "Name", 2),
		spec(fOrg, "Org", 20, pStr, "Organization", 1),
		spec(fParentID, "ParentID", 8, pUint, "ParentID", 7),
		spec(fParentName, "ParentName", 10, pStr, "ParentName", 7),
		spec(fPartition, "Partition", 10, pStr, "Partition", 4),
		spec(fPreemptMode, "PreemptMode", 11, pStr, "PreemptMode", 8),
		spec(fPreempt, "Preempt", 10, pStr, "Preempt", 7),
		spec(fPreemptExempt, "PreemptExemptTime", 19, pSecs, "PreemptExemptTime", 8),
		spec(fPriority, "Priority", 10, pUint, "Priority", 3),
		spec(fQOS, "QOS", 20, pStr, "QOSLevel", 3),
		spec(fQOSRaw, "QOS_RAW", 10, pCharList, "QOSRAWLevel", 4),
		spec(fShare, "Share", 9, pUint, "Share", 1, "FairShare", 2),
		spec(fUsageFactor, "UsageFactor", 11, pDouble, "UsageFactor", 6),
		spec(fUsageThres, "UsageThres", 10, pDouble, "UsageThreshold", 6),
		spec(fLimitFactor, "LimitFactor", 11, pDouble, "LimitFactor", 6),
		spec(fUser, "User", 10, pStr, "User", 1),
		spec(fWCKeys, "WCKeys", 20, pCharList, "WCKeys", 2),
	}
})

// fieldNamed finds the column a format item names ("name", "prio%5"):
// the first entry of the table one of whose names the item abbreviates,
// with the width after '%' (atoi: anything else keeps the default).
func fieldNamed(item string) (field, bool) {
	name, width, hasWidth := strings.Cut(item, "%")
	for _, s := range fieldTable() {
		for i, n := range s.names {
			if abbrev(name, n, s.mins[i]) {
				f := s.field
				if hasWidth {
					if w := atoi(width); w != 0 {
						f.width = w
					}
				}
				return f, true
			}
		}
	}
	return field{}, false
}

// atoi reads a number as C's atoi does: leading digits after an optional
// sign, 0 when there are none.
func atoi(s string) int {
	s = strings.TrimLeft(s, " \t")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' || n > 1<<20 {
			break
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

// cell is one value to print: a string (null when sacctmgr passes NULL),
// or a number that may be unset (NO_VAL/INFINITE print empty).
type cell struct {
	s     string
	null  bool
	n     uint64
	f     float64
	unset bool
}

func str(s string) cell  { return cell{s: s} }
func num(n uint64) cell  { return cell{n: n} }
func dbl(f float64) cell { return cell{f: f} }
func unset() cell        { return cell{unset: true, null: true} }
func nullStr() cell      { return cell{null: true} }
func strOrNull(s string) cell {
	if s == "" {
		return nullStr()
	}
	return str(s)
}

// printer writes a listing as print_fields does: fixed-width columns each
// followed by a space, or '|' separated (parsable, with a trailing '|';
// parsable2, without).
type printer struct {
	w                   io.Writer
	fields              []field
	parsable, parsable2 bool
	noHeader            bool
}

func (p *printer) sep() bool { return p.parsable || p.parsable2 }

// header prints the titles and the rule under them.
func (p *printer) header() {
	if p.noHeader {
		return
	}
	var b strings.Builder
	for i, f := range p.fields {
		last := i == len(p.fields)-1
		switch {
		case p.parsable2 && last:
			b.WriteString(f.name)
		case p.sep():
			b.WriteString(f.name + "|")
		default:
			b.WriteString(pad(cut(f.name, abs(f.width)), f.width) + " ")
		}
	}
	b.WriteString("\n")
	if !p.sep() {
		for _, f := range p.fields {
			b.WriteString(strings.Repeat("-", abs(f.width)) + " ")
		}
		b.WriteString("\n")
	}
	io.WriteString(p.w, b.String())
}

// row prints one record; value gives each column's cell.
func (p *printer) row(value func(f field) cell) {
	var b strings.Builder
	for i, f := range p.fields {
		b.WriteString(p.format(f, value(f), i == len(p.fields)-1))
	}
	b.WriteString("\n")
	io.WriteString(p.w, b.String())
}

func (p *printer) format(f field, c cell, last bool) string {
	width := abs(f.width)
	// text is the value printed; blank says the value is unset, which
	// fixed-width output pads without cutting.
	var text string
	blank := false
	switch f.kind {
	case pStr, pCharList:
		if c.null {
			text, blank = "", true
		} else {
			text = c.s
		}
	case pTRES:
		text = c.s
	case pUint:
		if c.unset {
			blank = true
		} else {
			text = fmt.Sprint(c.n)
		}
	case pDouble:
		if c.unset {
			blank = true
		} else {
			text = fmt.Sprintf("%f", c.f)
		}
	case pTime:
		if c.unset {
			blank = true
		} else {
			text = timefmt.FormatDurationPadded(int64(c.n) * 60)
		}
	case pSecs:
		if c.unset {
			blank = true
		} else {
			text = timefmt.FormatDurationPadded(int64(c.n))
		}
	}
	switch {
	case p.parsable2 && last:
		return text
	case p.sep():
		return text + "|"
	case blank:
		return strings.Repeat(" ", width) + " "
	case f.kind == pUint || f.kind == pTime || f.kind == pSecs:
		// Numbers and times are never cut.
		return pad(text, f.width) + " "
	case f.kind == pDouble:
		if len(text) > width {
			text = sci(c.f, width)
		}
		return pad(text, f.width) + " "
	}
	if len(text) > width {
		text = text[:width-1] + "+"
	}
	return pad(text, f.width) + " "
}

// sci is print_fields_double's form for a number too wide for its column.
func sci(f float64, width int) string {
	s := fmt.Sprintf("%*.*e", width, width, f)
	if extra := len(s) - width; extra > 0 {
		prec := max(width-extra, 0)
		s = fmt.Sprintf("%*.*e", prec, prec, f)
	}
	return s
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// pad aligns s in a column of width w (negative: left aligned).
func pad(s string, w int) string {
	if w < 0 {
		return fmt.Sprintf("%-*s", -w, s)
	}
	return fmt.Sprintf("%*s", w, s)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// recordRows prints a record of a listing (an account, a user): one row
// of rec's cells or, with withassoc, one row per association of its
// (those keep selects), the columns in own from rec and the rest from
// the association, as sacctmgr's listings with associations do.
func (p *printer) recordRows(rec func(field) cell, withAssoc bool, assocs []assocRec, keep func(assocRec) bool, own ...fieldType) {
	if !withAssoc {
		p.row(rec)
		return
	}
	for _, a := range assocs {
		if !keep(a) {
			continue
		}
		p.row(func(f field) cell {
			if slices.Contains(own, f.typ) {
				return rec(f)
			}
			return assocCell(a, f)
		})
	}
}
