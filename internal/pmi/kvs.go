package pmi

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// EncodePairs writes key/value pairs for the fence exchange: each as a
// length-prefixed key then value (uvarint lengths), in key order, so the
// same pairs always give the same bytes.
func EncodePairs(kv map[string]string) []byte {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		v := kv[k]
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	return b
}

// DecodePairs reads what EncodePairs (or several of its outputs one after
// the other) wrote into kv. Keys and values over the protocol's limits are
// refused.
func DecodePairs(b []byte, kv map[string]string) error {
	for len(b) > 0 {
		k, rest, err := field(b, MaxKey)
		if err != nil {
			return err
		}
		v, rest, err := field(rest, MaxValue)
		if err != nil {
			return err
		}
		kv[k] = v
		b = rest
	}
	return nil
}

func field(b []byte, limit int) (string, []byte, error) {
	n, used := binary.Uvarint(b)
	if used <= 0 || n > uint64(limit) || n > uint64(len(b)-used) {
		return "", nil, fmt.Errorf("%w: bad key/value encoding", ErrProtocol)
	}
	b = b[used:]
	return string(b[:n]), b[n:], nil
}

// ProcessMapping writes PMI_process_mapping, which MPI libraries read to
// find the ranks that share their node: nodeOf[rank] is the node index
// of each rank. Ranks placed in runs of nodes with the same count each
// become one (start node, node count, ranks per node) block, so a block
// layout of 2 nodes of 4 ranks is "(vector,(0,2,4))" and a cyclic one
// "(vector,(0,2,1),(0,2,1),...)".
func ProcessMapping(nodeOf []int) string {
	type block struct{ start, count, size int }
	var blocks []block
	for i := 0; i < len(nodeOf); {
		j := i
		for j < len(nodeOf) && nodeOf[j] == nodeOf[i] {
			j++
		}
		b := block{nodeOf[i], 1, j - i}
		if n := len(blocks); n > 0 {
			last := &blocks[n-1]
			if last.size == b.size && last.start+last.count == b.start {
				last.count++
				i = j
				continue
			}
		}
		blocks = append(blocks, b)
		i = j
	}
	var sb strings.Builder
	sb.WriteString("(vector")
	for _, b := range blocks {
		sb.WriteString(",(" + strconv.Itoa(b.start) + "," + strconv.Itoa(b.count) + "," + strconv.Itoa(b.size) + ")")
	}
	sb.WriteString(")")
	return sb.String()
}
