package sacctmgr

import (
	"slices"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/assoc"
)

// qosCond is a QOS condition (sacctmgr's slurmdb_qos_cond_t): names, ids,
// descriptions and preempt modes, each a filter when given.
type qosCond struct {
	names, descs, ids, modes []string
	format                   []string
	set                      bool
}

func (q *qosCond) matches(r qosRec) bool {
	in := func(list []string, v string) bool {
		return len(list) == 0 || slices.ContainsFunc(list, func(s string) bool { return strings.EqualFold(s, v) })
	}
	return in(q.names, r.name) && in(q.descs, r.desc) && in(q.ids, strconv.FormatUint(uint64(r.id), 10)) &&
		in(q.modes, preemptModeName(r.mode))
}

// qosChange is what "set" (or add) gives a QOS; nil members are not set.
type qosChange struct {
	desc        *string
	grace       *uint32
	graceClear  bool
	prio        *uint32
	prioClear   bool
	usageFactor *float64
	mode        *string
	// preempt is the Preempt= list: names, "+name" or "-name".
	preempt []string
	hasPre  bool
	limits  limitChange
	// flags is the Flags= list, flagOp '+' or '-' to add or remove it,
	// hasFlags that it was given.
	flags    []string
	flagOp   byte
	hasFlags bool
}

// notSupported refuses an option Slurm has and Drover does not keep (QOS
// and association limits, flags, raw usage).
func (c *cmd) notSupported(word string) {
	c.fail()
	c.slurmError("%s is not supported by Drover's accounting", word)
}

// qosOptions are sacctmgr_set_qos_rec's options, in its order, with
// the shortest prefix of each; kind "" marks a limit Drover does not keep.
var qosOptions = []struct {
	name string
	min  int
	kind string
}{
	{"Description", 1, "desc"}, {"Flags", 2, "flags"}, {"GraceTime", 3, "grace"},
	{"GrpCPUMins", 7, ""}, {"GrpCPURunMins", 7, ""}, {"GrpCPUs", 7, ""}, {"GrpJobs", 4, ""},
	{"GrpJobsAccrue", 8, ""}, {"GrpMemory", 4, ""}, {"GrpNodes", 4, ""}, {"GrpSubmitJobs", 4, ""},
	{"GrpTRES", 7, ""}, {"GrpTRESMins", 8, ""}, {"GrpTRESRunMins", 8, ""}, {"GrpWall", 4, ""},
	{"LimitFactor", 6, ""}, {"MaxCPUMinsPerJob", 7, ""}, {"MaxCPUsPerJob", 7, ""},
	{"MaxCPUsPerUser", 11, ""}, {"MaxCPUsPU", 9, ""}, {"MaxJobsAccruePerAccount", 17, ""},
	{"MaxJobsAccruePA", 15, ""}, {"MaxJobsAccruePerUser", 17, ""}, {"MaxJobsAccruePU", 15, ""},
	{"MaxJobsPerAccount", 11, ""}, {"MaxJobsPA", 9, ""}, {"MaxJobsPerUser", 4, ""}, {"MaxJobsPU", 4, ""},
	{"MaxNodesPerJob", 4, ""}, {"MaxNodesPerUser", 8, ""}, {"MaxNodesPU", 8, ""},
	{"MaxSubmitJobsPerAccount", 17, ""}, {"MaxSubmitJobsPA", 15, ""}, {"MaxSubmitJobsPerUser", 4, ""},
	{"MaxSubmitJobsPU", 4, ""}, {"MaxTRESPerAccount", 11, ""}, {"MaxTRESPA", 9, ""}, {"MaxTRES", 7, ""},
	{"MaxTRESPJ", 9, ""}, {"MaxTRESPerJob", 11, ""}, {"MaxTRESPerNode", 11, ""}, {"MaxTRESPN", 9, ""},
	{"MaxTRESPerUser", 11, ""}, {"MaxTRESPU", 9, ""}, {"MaxTRESMinsPerJob", 8, ""}, {"MaxTRESMinsPJ", 13, ""},
	{"MaxTRESRunMinsPerAccount", 24, ""}, {"MaxTRESRunMinsPerAcct", 20, ""}, {"MaxTRESRunMinsPA", 16, ""},
	{"MaxTRESRunMinsPerUser", 20, ""}, {"MaxTRESRunMinsPU", 16, ""}, {"MaxWallDurationPerJob", 4, ""},
	{"MinCPUsPerJob", 7, ""}, {"MinPrioThresh", 4, ""}, {"MinTRESPerJob", 7, ""},
	{"PreemptMode", 8, "mode"}, {"Preempt", 7, "preempt"}, {"PreemptExemptTime", 8, ""},
	{"Priority", 3, "prio"}, {"RawUsage", 7, ""}, {"UsageFactor", 6, "usage"}, {"UsageThreshold", 6, ""},
}

// preemptModeName is a QOS PreemptMode as "show qos" prints it ("cluster"
// when off or unset).
func preemptModeName(mode string) string {
	if mode == "" || mode == "OFF" {
		return "cluster"
	}
	return strings.ToLower(mode)
}

// parsePreemptMode reads PreemptMode= as preempt_mode_num does.
func parsePreemptMode(v string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "off", "disable", "disabled":
		return "", true
	case "cancel":
		return "CANCEL", true
	case "requeue":
		return "REQUEUE", true
	case "suspend":
		return "SUSPEND", true
	case "gang":
		return "GANG", true
	}
	return "", false
}

// setQOS applies one "set" option to ch, as sacctmgr_set_qos_rec: true
// when it set something. allow records that the option may take an
// operator (+=, -=), which then stays allowed for the rest of the line,
// as in sacctmgr.
func (c *cmd) setQOS(ch *qosChange, o option, allow *bool) bool {
	for _, opt := range qosOptions {
		if !o.is(opt.name, opt.min) {
			continue
		}
		switch opt.kind {
		case "desc":
			if ch.desc == nil {
				d := stripQuotes(o.value, true)
				ch.desc = &d
			}
			return true
		case "grace":
			n, clear, ok := c.uintValue(o, "GraceTime")
			if !ok {
				return false
			}
			ch.grace, ch.graceClear = &n, clear
			return true
		case "flags":
			*allow = true
			return c.setQOSFlags(ch, o)
		case "mode":
			m, ok := parsePreemptMode(o.value)
			if !ok {
				c.errf(" Bad Preempt Mode given: %s\n", o.word)
				c.fail()
				return false
			}
			ch.mode = &m
			return true
		case "preempt":
			*allow = true
			list, ok := c.qosList(o.value, o.op)
			if !ok {
				c.fail()
				return false
			}
			ch.preempt, ch.hasPre = list, true
			return true
		case "prio":
			n, clear, ok := c.uintValue(o, "Priority")
			if !ok {
				return false
			}
			ch.prio, ch.prioClear = &n, clear
			return true
		case "usage":
			f, clear, ok := getDouble(o.value)
			if !ok {
				c.slurmError("\"%s\" is not a valid number", stripQuotes(o.value, true))
				return false
			}
			if clear {
				f = 1
			}
			ch.usageFactor = &f
			return true
		}
		if k, ok := qosLimitOptions[opt.name]; ok {
			return c.setLimit(&ch.limits, k, o)
		}
		*allow = true
		c.notSupported(o.word)
		return false
	}
	*allow = true
	c.fail()
	c.out(" Unknown option: %s\n Use keyword 'where' to modify condition\n", o.word)
	return false
}

// setQOSFlags reads Flags= as str_2_qos_flags does: names in any case,
// -1 for none; +=, -= or a leading + or - add or remove them. A flag
// Slurm has and Drover does not act on is refused.
func (c *cmd) setQOSFlags(ch *qosChange, o option) bool {
	v, op := o.value, o.op
	if v == "-1" {
		ch.flags, ch.flagOp, ch.hasFlags = nil, 0, true
		return true
	}
	if op == 0 && v != "" && (v[0] == '+' || v[0] == '-') {
		op, v = v[0], v[1:]
	}
	var flags []string
	for _, f := range strings.Split(v, ",") {
		i := slices.IndexFunc(assoc.QOSFlagNames, func(name string) bool { return strings.EqualFold(name, f) })
		if i < 0 {
			c.fail()
			c.out(" Unknown QOS flag used in:\n  '%s'\n Valid QOS flags are\n  '%s'\n", o.value, strings.Join(assoc.QOSFlagNames, ","))
			return false
		}
		if !assoc.QOSFlagKept(assoc.QOSFlagNames[i]) {
			c.notSupported("Flags=" + assoc.QOSFlagNames[i])
			return false
		}
		flags = append(flags, assoc.QOSFlagNames[i])
	}
	ch.flags, ch.flagOp, ch.hasFlags = flags, op, true
	return true
}

// applyFlags gives cur what a Flags= change sets, in sacctmgr's order.
func (ch *qosChange) applyFlags(cur []string) []string {
	var out []string
	for _, name := range assoc.QOSFlagNames {
		had, named := slices.Contains(cur, name), slices.Contains(ch.flags, name)
		switch ch.flagOp {
		case '+':
			named = had || named
		case '-':
			named = had && !named
		}
		if named {
			out = append(out, name)
		}
	}
	return out
}

// qosList reads a list of QOS names as slurmdb_addto_qos_char_list does:
// each must exist; op (+ or -), or a +/- before a name, adds to or takes
// from the list being changed, and may not be mixed with plain names. An
// empty value is an empty list.
func (c *cmd) qosList(value string, op byte) ([]string, bool) {
	if value == "" {
		return []string{}, true
	}
	all, err := c.getQOS()
	if c.requestFailed(err) {
		return nil, false
	}
	var out []string
	equal, delta := false, false
	ok := true
	for _, name := range splitNames(value) {
		o := op
		if name[0] == '+' || name[0] == '-' {
			o, name = name[0], name[1:]
		}
		found := ""
		for _, q := range all {
			if strings.EqualFold(q.name, name) {
				found = q.name
			}
		}
		if found == "" {
			var names []string
			for _, q := range all {
				names = append(names, q.name)
			}
			c.slurmError("You gave a bad qos '%s'. Valid QOS's are %s", name, strings.Join(names, ","))
			return nil, false
		}
		if o != 0 {
			if equal {
				ok = false
			}
			delta, found = true, string(o)+found
		} else {
			if delta {
				ok = false
			}
			equal = true
		}
		if !ok {
			c.slurmError("You can't set qos equal to something and then add or subtract from it in the same line")
			return nil, false
		}
		if !slices.Contains(out, found) {
			out = append(out, found)
		}
	}
	return out, true
}

// splitNames splits a comma list as slurm_parse_char_list does: a leading
// quote ends the list at its match, empty items are dropped.
func splitNames(s string) []string {
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		if i := strings.IndexByte(s[1:], s[0]); i >= 0 {
			s = s[1 : i+1]
		} else {
			s = s[1:]
		}
	}
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f != "" {
			out = append(out, strings.Map(func(r rune) rune {
				if r == '"' || r == '\'' {
					return '`'
				}
				return r
			}, f))
		}
	}
	return out
}

// applyList applies a QOS list option to cur: a plain list replaces it,
// +name and -name add and remove.
func applyList(cur, list []string) []string {
	if len(list) == 0 {
		return nil
	}
	if list[0][0] != '+' && list[0][0] != '-' {
		out := slices.Clone(list)
		slices.Sort(out)
		return out
	}
	out := slices.Clone(cur)
	for _, item := range list {
		name := item[1:]
		if item[0] == '+' {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		} else {
			out = slices.DeleteFunc(out, func(s string) bool { return s == name })
		}
	}
	slices.Sort(out)
	return out
}

// apply gives q what ch sets.
func (ch *qosChange) apply(q *qosRec) {
	if ch.desc != nil {
		q.desc = *ch.desc
	}
	if ch.grace != nil {
		q.grace = *ch.grace
		if ch.graceClear {
			q.grace = 0
		}
	}
	if ch.prio != nil {
		q.prio = *ch.prio
		if ch.prioClear {
			q.prio = 0
		}
	}
	if ch.usageFactor != nil {
		q.usageFactor = *ch.usageFactor
	}
	if ch.mode != nil {
		q.mode = *ch.mode
	}
	if ch.hasPre {
		q.preempt = applyList(q.preempt, ch.preempt)
	}
	if ch.hasFlags {
		q.flags = ch.applyFlags(q.flags)
	}
	ch.limits.apply(&q.limits)
}

// qosCondWords reads condition words (sacctmgr qos _set_cond) from
// argv[i:]; it returns where it stopped (a "set" word is left for the
// caller).
func (c *cmd) qosCondWords(argv []string, i int, q *qosCond, withFormat bool) int {
	i = c.condWords(argv, i, func(o option) bool {
		v := o.arg()
		switch {
		case !o.eq && o.is("WithDeleted", 5):
		case !o.eq && o.is("where", 5):
		case !o.eq || o.is("Names", 1) || o.is("QOSLevel", 1):
			q.names = addToList(q.names, v, true)
			q.set = q.set || len(q.names) > 0
		case o.is("Clusters", 1), o.is("Descriptions", 1):
			q.descs = addToList(q.descs, v, true)
			q.set = q.set || len(q.descs) > 0
		case o.is("Format", 1):
			if withFormat {
				q.format = addToList(q.format, v, true)
			}
		case o.is("Ids", 1):
			ids := c.idList(v, "QOS ID")
			q.ids = append(q.ids, ids...)
			q.set = q.set || len(ids) > 0
		case o.is("PreemptMode", 8):
			ok := true
			for _, m := range splitNames(v) {
				if _, good := parsePreemptMode(m); !good {
					c.slurmError("Unknown preempt_mode given '%s'", m)
					ok = false
				}
			}
			if !ok {
				c.errf(" Bad Preempt Mode given: %s\n", o.word)
				c.fail()
				return true
			}
			for _, m := range splitNames(v) {
				mode, _ := parsePreemptMode(m)
				q.modes = append(q.modes, preemptModeName(mode))
			}
			q.set = true
		default:
			c.fail()
			c.errf(" Unknown condition: %s\n Use keyword 'set' to modify SLURM_PRINT_VALUE\n", o.word)
		}
		return true
	})
	return i
}

// qosCondRun reads QOS condition words into q as a wordsFunc: what they
// set is setRecord once q selects anything.
func (c *cmd) qosCondRun(q *qosCond, withFormat bool) wordsFunc {
	return func(argv []string, i int) (int, int) {
		i = c.qosCondWords(argv, i, q, withFormat)
		if q.set {
			return i, setRecord
		}
		return i, 0
	}
}

// badOperator refuses +=/-= where sacctmgr does not take them.
func (c *cmd) badOperator(o option) {
	c.fail()
	c.errf(" Invalid operator '%c=' in %s\n", o.op, o.word)
}

// qosRecWords reads "set" words (sacctmgr qos _set_rec) from argv[i:];
// names (bare words, Name=) go to names when it is not nil. What it sets
// is setRecord when it sets anything.
func (c *cmd) qosRecWords(argv []string, i int, names *[]string, ch *qosChange) (int, int) {
	set := 0
	i = c.recWords(argv, i, func(o option, allow *bool) {
		switch {
		case !o.eq || o.is("Name", 1):
			if names != nil {
				*names = addToList(*names, o.arg(), true)
			}
		default:
			if c.setQOS(ch, o, allow) {
				set = setRecord
			}
		}
	})
	return i, set
}

func (c *cmd) addQOS(argv []string) {
	var names []string
	var ch qosChange
	readWords(argv, func(argv []string, i int) (int, int) { return c.qosRecWords(argv, i, &names, &ch) })
	if c.exitCode != 0 {
		return
	}
	if len(names) == 0 {
		c.fail()
		c.errf(" Need name of qos to add.\n")
		return
	}
	all, err := c.getQOS()
	if err != nil {
		c.fail()
		c.errf(" Problem getting qos's from database.  Contact your admin.\n")
		return
	}
	var added []qosRec
	var list strings.Builder
	description := ""
	for _, name := range names {
		if slices.ContainsFunc(all, func(q qosRec) bool { return q.name == name }) {
			continue
		}
		q := qosRec{name: name, desc: name, usageFactor: 1}
		if ch.desc != nil {
			q.desc = *ch.desc
		}
		ch.apply(&q)
		description = q.desc
		added = append(added, q)
		list.WriteString("  " + name + "\n")
	}
	if len(added) == 0 {
		c.fail()
		c.out(" Nothing new added.\n")
		return
	}
	c.out(" Adding QOS(s)\n%s", list.String())
	c.out(" Settings\n")
	c.out("  Description    = %s\n", description)
	c.printQOSLimits(&ch)
	if !c.immediate && !c.commit() {
		return
	}
	if err := c.postQOS(added); err != nil {
		c.fail()
		c.errf(" Problem adding QOS: %s\n", strerror(err))
	}
}

// printQOSLimits prints what an add sets, as sacctmgr_print_qos_limits.
func (c *cmd) printQOSLimits(ch *qosChange) {
	if ch.hasFlags && ch.flagOp == 0 && len(ch.flags) > 0 {
		c.out("  Flags                    = %s\n", strings.Join(ch.applyFlags(nil), ","))
	}
	c.outLimit("GraceTime                ", ch.grace, ch.graceClear)
	if ch.hasPre {
		c.outSorted("Preempt                  ", ch.preempt)
	}
	if ch.mode != nil && *ch.mode != "" {
		c.out("  PreemptMode              = %s\n", *ch.mode)
	}
	c.outLimit("Priority                 ", ch.prio, ch.prioClear)
	if ch.usageFactor != nil {
		c.out("  UsageFactor              = %.4f\n", *ch.usageFactor)
	}
}

func (c *cmd) listQOS(argv []string) {
	var q qosCond
	readWords(argv, c.qosCondRun(&q, true))
	if c.exitCode != 0 {
		return
	}
	format := columns(q.format, "Name,Prio,GraceT,Preempt,PreemptE,PreemptM,Flags%40,UsageThres,UsageFactor,"+
		"GrpTRES,GrpTRESMins,GrpTRESRunMins,GrpJ,GrpS,GrpW,MaxTRES,MaxTRESPerN,MaxTRESMins,MaxW,"+
		"MaxTRESPerUser,MaxJobsPerUser,MaxSubmitJobsPerUser,MaxTRESPerAcct,MaxTRESRunMinsPerAcct%22,"+
		"MaxTRESRunMinsPerUser%22,MaxJobsPerAcct,MaxSubmitJobsPerAcct,MinTRES", "", false)
	p, ok := c.printer(format)
	if !ok {
		return
	}
	all, err := c.getQOS()
	if c.queryFailed(err) {
		return
	}
	p.header()
	for _, r := range all {
		if !q.matches(r) {
			continue
		}
		p.row(func(f field) cell { return qosCell(r, f) })
	}
}

func qosCell(q qosRec, f field) cell {
	switch f.typ {
	case fDesc:
		return str(q.desc)
	case fFlags:
		return strOrNull(strings.Join(q.flags, ","))
	case fGrace:
		return num(uint64(q.grace))
	case fID:
		return num(uint64(q.id))
	case fName:
		return str(q.name)
	case fPreempt:
		return strOrNull(strings.Join(q.preempt, ","))
	case fPreemptMode:
		return str(preemptModeName(q.mode))
	case fPriority:
		return num(uint64(q.prio))
	case fUsageFactor:
		return dbl(q.usageFactor)
	case fLimit:
		return limitCell(q.limits, f)
	}
	return unset()
}

// printer makes the listing's printer from a format list; an unknown
// field ends sacctmgr, as _get_print_field does.
func (c *cmd) printer(format []string) (*printer, bool) {
	p := &printer{w: c.env.Stdout, parsable: c.parsable, parsable2: c.parsable2, noHeader: c.noHeader}
	for _, item := range format {
		f, ok := fieldNamed(item)
		if !ok {
			name, _, _ := strings.Cut(item, "%")
			c.fail()
			c.errf("Unknown field '%s'\n", name)
			c.exit = true
			return nil, false
		}
		p.fields = append(p.fields, f)
	}
	return p, true
}

func (c *cmd) modifyQOS(argv []string) {
	var q qosCond
	var ch qosChange
	if _, _, ok := c.modifyWords(argv, c.qosCondRun(&q, false),
		func(argv []string, i int) (int, int) { return c.qosRecWords(argv, i, nil, &ch) }); !ok {
		return
	}
	all, err := c.getQOS()
	if c.requestFailed(err) {
		return
	}
	var changed []qosRec
	for _, r := range all {
		if q.matches(r) {
			ch.apply(&r)
			changed = append(changed, r)
		}
	}
	if c.nothingModified(len(changed)) {
		return
	}
	c.commitAndSend(func() {
		c.out(" Modified qos...\n")
		for _, r := range changed {
			c.out("  %s\n", r.name)
		}
	}, func() bool { return c.sent(c.postQOS(changed)) })
}

func (c *cmd) deleteQOSs(argv []string) {
	var q qosCond
	readWords(argv, c.qosCondRun(&q, false))
	if !c.deletable(q.set) {
		return
	}
	all, err := c.getQOS()
	if c.requestFailed(err) {
		return
	}
	doomed := namesOf(all, q.matches, func(r qosRec) string { return r.name })
	if len(doomed) == 0 {
		c.fail()
		c.out("  Nothing deleted\n")
		return
	}
	// Associations whose default QOS is going: refused, as
	// sacctmgr's _isdefault does before anything is removed.
	assocs, err := c.getAssocs(true)
	if c.requestFailed(err) {
		return
	}
	var users []assocRec
	for _, a := range assocs {
		if a.defQOS != "" && slices.Contains(doomed, a.defQOS) {
			users = append(users, a)
		}
	}
	if len(users) > 0 {
		c.fail()
		c.errf(" Associations listed below have these as their Default QOS.\n")
		for _, a := range users {
			switch {
			case a.user == "":
				c.errf("  DefQOS = %-10s C = %-10s A = %-20s\n", a.defQOS, a.cluster, a.account)
			case a.partition != "":
				c.errf("  DefQOS = %-10s C = %-10s A = %-20s U = %-9s P = %s\n", a.defQOS, a.cluster, a.account, a.user, a.partition)
			default:
				c.errf("  DefQOS = %-10s C = %-10s A = %-20s U = %-9s\n", a.defQOS, a.cluster, a.account, a.user)
			}
		}
		c.errf(" Please either remove the qos' listed above from list and resubmit,\n or change the default qos to remove the qos.\n Changes Discarded\n")
		return
	}
	c.commitAndSend(func() {
		c.out(" Deleting QOS(s)...\n")
		c.outNames(doomed)
	}, func() bool {
		for _, n := range doomed {
			if !c.sent(c.deleteQOS(n)) {
				return false
			}
		}
		return true
	})
}
