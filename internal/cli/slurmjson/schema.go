package slurmjson

import (
	"strings"
	"sync"
)

// schemaCache holds a Schema's tables once built; the generated Schemas
// carry one so that a process builds them once, however many partitions
// or answers it prints.
type schemaCache struct {
	once sync.Once
	c    *compiled
}

// compiled is a Schema as the formatters walk it: a node per path, so that
// a member's rank and its value's node take one map lookup by key rather
// than a path string built and looked up per member.
type compiled struct {
	root   *node
	byPath map[string]*node
}

// node is one path of a Schema. Every path of Order and Floats has one,
// and so has every path above them, so that a path without a node has
// none below it either.
type node struct {
	path string
	// ordered says whether Order has the path, even with no members:
	// objects there are never taken for number structs.
	ordered bool
	// rank is the length of the path's order: the rank of members it
	// does not list, which keep their place after the listed ones.
	rank int
	// float is Floats[path].
	float bool
	// members are the members the path's order lists or that have a
	// node below it.
	members map[string]*memberInfo
}

// memberInfo is what a Schema says of one member of an object.
type memberInfo struct {
	key  string
	rank int
	// noVal is the member's rank in a number struct.
	noVal int
	// child is the node of the member's value, unless joined.
	child *node
	// joined says that the key, having "/" in it or being "" at the
	// top, does not lead to a node of its own: its value's path is
	// looked up whole.
	joined bool
	// text is the member's name as Slurm writes it, and ": ".
	text string
}

func newMemberInfo(n *node, key string, rank int) *memberInfo {
	return &memberInfo{
		key:    key,
		rank:   rank,
		noVal:  noValRank(key),
		joined: joinedKey(n, key),
		text:   string(appendEscaped(nil, key)) + ": ",
	}
}

func joinedKey[S string | []byte](n *node, key S) bool {
	if len(key) == 0 {
		return n.path == ""
	}
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return true
		}
	}
	return false
}

func (o Schema) compiled() *compiled {
	if o.cache == nil {
		return compileSchema(o)
	}
	o.cache.once.Do(func() { o.cache.c = compileSchema(o) })
	return o.cache.c
}

func compileSchema(o Schema) *compiled {
	c := &compiled{byPath: map[string]*node{}}
	add := func(p string) *node {
		n := c.byPath[p]
		if n == nil {
			n = &node{path: p, members: map[string]*memberInfo{}}
			c.byPath[p] = n
		}
		return n
	}
	c.root = add("")
	addPrefixes := func(p string) *node {
		for i := 0; i < len(p); i++ {
			if p[i] == '/' {
				add(p[:i])
			}
		}
		return add(p)
	}
	for p, want := range o.Order {
		n := addPrefixes(p)
		n.ordered = true
		n.rank = len(want)
	}
	for p, f := range o.Floats {
		if f {
			addPrefixes(p).float = true
		}
	}
	for p, want := range o.Order {
		n := c.byPath[p]
		// Going backwards, a member named twice keeps its first place.
		for i := len(want) - 1; i >= 0; i-- {
			n.members[want[i]] = newMemberInfo(n, want[i], i)
		}
	}
	// Link each path to the one a key without "/" leads to; a path
	// whose last key is "" at the top, or has "/" in it, is reached by
	// joined keys only.
	for p, n := range c.byPath {
		if p == "" {
			continue
		}
		parent, key := "", p
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			if i == 0 {
				continue
			}
			parent, key = p[:i], p[i+1:]
		}
		pn := c.byPath[parent]
		m := pn.members[key]
		if m == nil {
			m = newMemberInfo(pn, key, pn.rank)
			pn.members[key] = m
		}
		m.child = n
	}
	return c
}

// lookup is the node of a path, nil where the schema says nothing at or
// below it.
func (c *compiled) lookup(path string) *node { return c.byPath[path] }

// member is what n's schema says of a member named key, nil where it
// names no such member.
func (n *node) member(key string) *memberInfo {
	if n == nil {
		return nil
	}
	return n.members[key]
}

// memberBytes is member for a key read from JSON text, without making
// a string of it.
func (n *node) memberBytes(key []byte) *memberInfo {
	if n == nil {
		return nil
	}
	return n.members[string(key)]
}

// unlisted is the rank of members n does not list.
func (n *node) unlisted() int {
	if n == nil {
		return 0
	}
	return n.rank
}

// child is the node of the value of n's member key, described by m
// (nil where n does not list it).
func (c *compiled) child(n *node, m *memberInfo, key string) *node {
	if n == nil {
		return nil
	}
	if m != nil && !m.joined {
		return m.child
	}
	if m == nil && !joinedKey(n, key) {
		return nil
	}
	return c.byPath[joinPath(n.path, key)]
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "/" + key
}

// noValRank is a member's rank in a number struct, len(noValOrder) for
// members that are not.
func noValRank(key string) int {
	switch key {
	case "set":
		return 0
	case "infinite":
		return 1
	case "number":
		return 2
	}
	return len(noValOrder)
}

// ranked is an object member about to be written: where it is and where
// it goes.
type ranked struct {
	// start and end say where the member is: its place in an Object, or
	// its text in the formatter's output.
	start, end int
	rank       int
	noVal      int
}

// sortMembers puts the members of an object at n in the schema's order,
// or, where n has no order, a number struct's members in theirs. It
// reports false when they are in order already.
func sortMembers(ms []ranked, n *node, scratch *[]ranked, counts *[]int) bool {
	if n != nil && n.ordered {
		return sortRanked(ms, n.rank+1, scratch, counts)
	}
	if len(ms) == 0 || len(ms) > len(noValOrder) {
		return false
	}
	for i := range ms {
		if ms[i].noVal == len(noValOrder) {
			return false
		}
	}
	for i := range ms {
		ms[i].rank = ms[i].noVal
	}
	return sortRanked(ms, len(noValOrder)+1, scratch, counts)
}

// sortRanked orders ms by rank, keeping the order of equal ranks; every
// rank is below limit. It reports false when ms was in order already.
func sortRanked(ms []ranked, limit int, scratch *[]ranked, counts *[]int) bool {
	sorted := true
	for i := 1; i < len(ms); i++ {
		if ms[i].rank < ms[i-1].rank {
			sorted = false
			break
		}
	}
	if sorted {
		return false
	}
	if len(ms) <= 16 {
		for i := 1; i < len(ms); i++ {
			for j := i; j > 0 && ms[j].rank < ms[j-1].rank; j-- {
				ms[j], ms[j-1] = ms[j-1], ms[j]
			}
		}
		return true
	}
	// Job records have a hundred members and more: a counting sort is
	// linear in them and in the ranks.
	cs := *counts
	if cap(cs) < limit+1 {
		cs = make([]int, limit+1)
	}
	cs = cs[:limit+1]
	clear(cs)
	for _, m := range ms {
		cs[m.rank+1]++
	}
	for i := 1; i < len(cs); i++ {
		cs[i] += cs[i-1]
	}
	tmp := append((*scratch)[:0], ms...)
	for _, m := range tmp {
		ms[cs[m.rank]] = m
		cs[m.rank]++
	}
	*scratch, *counts = tmp, cs
	return true
}
