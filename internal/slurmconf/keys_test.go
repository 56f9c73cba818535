package slurmconf

import (
	"slices"
	"strings"
	"testing"
)

// The key tables are searched by halves: out of order, a key would be
// missed.
func TestKeyTablesSorted(t *testing.T) {
	for name, table := range map[string]keyTable{"global": globalKeys, "node": nodeKeys, "partition": partitionKeys, "downnodes": downNodesKeys, "nodeset": nodeSetKeys} {
		if !slices.IsSortedFunc(table, func(a, b keyEntry) int { return strings.Compare(a.key, b.key) }) {
			t.Errorf("%s keys are not sorted", name)
		}
		for i, e := range table {
			if e.key != strings.ToLower(e.key) {
				t.Errorf("%s key %q is not lower-case", name, e.key)
			}
			if i > 0 && table[i-1].key == e.key {
				t.Errorf("%s key %q twice", name, e.key)
			}
			if got, ok := table.lookup(strings.ToUpper(e.key)); !ok || got != e.info {
				t.Errorf("%s key %q not found", name, e.key)
			}
		}
	}
}
