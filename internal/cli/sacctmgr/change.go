package sacctmgr

// wordsFunc reads one run of words from argv[i:], as sacctmgr's
// _set_cond and _set_rec do: it returns where it stopped and what the
// words set (setRecord, setAssoc).
type wordsFunc func(argv []string, i int) (int, int)

// readWords reads the words of a list, add or delete command: runs of
// words, each after an optional "where" or "set", which sacctmgr skips
// there. It returns all that they set.
func readWords(argv []string, read wordsFunc) int {
	set := 0
	for i := 0; i < len(argv); i++ {
		if abbrev(argv[i], "Where", 5) || abbrev(argv[i], "Set", 3) {
			i++
		}
		var s int
		i, s = read(argv, i)
		set |= s
	}
	return set
}

// condWords reads condition words from argv[i:] as sacctmgr's
// _set_cond functions do: +=/-= is refused, "set" ends the conditions (it
// is left for the caller), and word reads each other word, false to stop
// there. It returns where it stopped.
func (c *cmd) condWords(argv []string, i int, word func(o option) bool) int {
	for ; i < len(argv); i++ {
		o := parseOption(argv[i])
		switch {
		case o.op != 0:
			c.badOperator(o)
		case o.is("Set", 3):
			return i - 1
		case !word(o):
			return i
		}
	}
	return i
}

// recWords reads "set" words from argv[i:] as sacctmgr's _set_rec
// functions do: "where" ends them (it is left for the caller), and word
// reads each other word. +=/-= is refused unless an option allowed it,
// which then holds for the rest of the line. It returns where it
// stopped.
func (c *cmd) recWords(argv []string, i int, word func(o option, allow *bool)) int {
	allow := false
	for ; i < len(argv); i++ {
		o := parseOption(argv[i])
		switch {
		case o.is("Where", 5):
			return i - 1
		case !o.eq && o.is("set", 3):
			continue
		}
		word(o, &allow)
		if o.op != 0 && !allow {
			c.badOperator(o)
		}
	}
	return i
}

// assocRecWord reads an association option among an account's or a
// user's "set" words, refusing an unknown one; setAssoc when it set
// something.
func (c *cmd) assocRecWord(ch *assocChange, o option, allow *bool) int {
	s, handled := c.setAssoc(ch, o, allow)
	switch {
	case s:
		return setAssoc
	case !handled:
		*allow = true
		c.fail()
		c.errf(" Unknown option: %s\n Use keyword 'where' to modify condition\n", o.word)
	}
	return 0
}

// modifyWords reads a modify command's words: conditions (after "where",
// or before any "set") with cond, changes (after "set") with rec. It
// returns what each set, and whether to go on: as sacctmgr's modify
// commands, it stops after a bad word, when nothing is to be set, and
// when no condition is given unless told to go on.
func (c *cmd) modifyWords(argv []string, cond, rec wordsFunc) (condSet, recSet int, ok bool) {
	for i := 0; i < len(argv); i++ {
		var set int
		switch {
		case abbrev(argv[i], "Where", 5):
			i, set = cond(argv, i+1)
			condSet |= set
		case abbrev(argv[i], "Set", 3):
			i, set = rec(argv, i+1)
			recSet |= set
		default:
			i, set = cond(argv, i)
			condSet |= set
		}
	}
	if c.exitCode != 0 {
		return condSet, recSet, false
	}
	if recSet == 0 {
		c.fail()
		c.errf(" You didn't give me anything to set\n")
		return condSet, recSet, false
	}
	if condSet == 0 && !c.commitCheck("You didn't set any conditions with 'WHERE'.\nAre you sure you want to continue?") {
		c.out("Aborted\n")
		return condSet, recSet, false
	}
	return condSet, recSet, true
}

// commitAndSend sends a change as sacctmgr commits one: without -i its
// report comes first and the user is asked; with -i it is sent at once
// and reported once made. send reports its own failure, returning false.
func (c *cmd) commitAndSend(report func(), send func() bool) {
	if !c.immediate {
		report()
		if !c.commit() {
			return
		}
	}
	if send() && c.immediate {
		report()
	}
}

// sent reports a refused modify or removal; true when there was none.
func (c *cmd) sent(err error) bool {
	if err != nil {
		c.errorWithRequest(err)
		return false
	}
	return true
}

// nothingModified reports a modify that matched nothing, as slurmdbd
// answers it; true when it did.
func (c *cmd) nothingModified(n int) bool {
	if n > 0 {
		return false
	}
	c.fail()
	c.out("  Nothing modified\n")
	return true
}

// outNames lists names under a report's heading, as slurmdbd's
// answers do.
func (c *cmd) outNames(names []string) {
	for _, n := range names {
		c.out("  %s\n", n)
	}
}

// deletable refuses a delete given no conditions, as sacctmgr does
// before anything else, and ends one with a bad word; true to go on.
func (c *cmd) deletable(conditioned bool) bool {
	if !conditioned {
		c.fail()
		c.errf(" No conditions given to remove, not executing.\n")
		return false
	}
	return c.exitCode == 0
}

// namesOf names the records keep selects, in their order.
func namesOf[R any](list []R, keep func(R) bool, name func(R) string) []string {
	var out []string
	for _, r := range list {
		if keep(r) {
			out = append(out, name(r))
		}
	}
	return out
}

// deleteNamed removes the records named (entity: "account", "user") one
// at a time, as sacctmgr's delete of accounts and users: " Nothing
// deleted" when there are none, and the first refusal ends it.
func (c *cmd) deleteNamed(entity string, names []string, del func(string) error) {
	if len(names) == 0 {
		c.fail()
		c.out(" Nothing deleted\n")
		return
	}
	c.commitAndSend(func() {
		c.out(" Deleting %ss...\n", entity)
		c.outNames(names)
	}, func() bool {
		for _, n := range names {
			if err := del(n); err != nil {
				c.deleteRefused(err, entity, n)
				return false
			}
		}
		return true
	})
}

// columns is a listing's format: the one given, else the default
// columns, and more after them when withMore (the associations' columns
// with "withassoc", their limits without "wopl").
func columns(given []string, base, more string, withMore bool) []string {
	if len(given) > 0 {
		return given
	}
	format := addToList(nil, base, true)
	if withMore {
		format = addToList(format, more, true)
	}
	return format
}

// recordPrinter readies a listing of accounts or users, as sacctmgr's:
// nothing after a bad word; the columns given, else base and, with
// withassoc, the associations' columns (assocCols); and, given
// association conditions without withassoc, the question whether to go
// on (Aborted when not).
func (c *cmd) recordPrinter(given []string, base, assocCols string, withAssoc bool, condSet int) (*printer, bool) {
	if c.exitCode != 0 {
		return nil, false
	}
	format := columns(given, base, assocCols, withAssoc)
	if !withAssoc && condSet&setAssoc != 0 &&
		!c.commitCheck("You requested options that are only valid when querying with the withassoc option.\nAre you sure you want to continue?") {
		c.out("Aborted\n")
		return nil, false
	}
	return c.printer(format)
}

// queryFailed reports a listing's failed query as sacctmgr does; true
// when err is one.
func (c *cmd) queryFailed(err error) bool {
	if err == nil {
		return false
	}
	c.fail()
	c.errf(" Problem with query.\n")
	return true
}

// modifyRecordsAndAssocs runs a modify of accounts or users as
// sacctmgr's does: the records' own changes with records, their
// associations' with assocs, each refused when the conditions cannot
// select what it changes (association conditions for a record, record
// conditions without names for an association).
func (c *cmd) modifyRecordsAndAssocs(condSet, recSet int, named bool, records, assocs func()) {
	if recSet&setRecord != 0 {
		if condSet == setAssoc {
			c.badWhere()
		} else {
			records()
		}
	}
	if recSet&setAssoc != 0 {
		if condSet == setRecord && !named {
			c.badWhere()
			return
		}
		assocs()
	}
}

// badWhere refuses a modify whose conditions cannot select what it
// changes.
func (c *cmd) badWhere() {
	c.fail()
	c.errf(" There was a problem with your 'where' options.\n")
}
