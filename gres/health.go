package gres

import (
	"fmt"
	"strconv"
	"strings"
)

// HealthEvent is a critical event on one of a node's GPUs, as the GPU
// plugin reports it.
type HealthEvent struct {
	// Index is the device index, -1 when the event names no known device.
	Index int `json:"index"`
	// UUID is the device's UUID, when known.
	UUID string `json:"uuid,omitempty"`
	// XID is the Xid error number of an XID event, 0 otherwise.
	XID uint64 `json:"xid,omitempty"`
	// DoubleBitECC marks an uncorrectable memory error.
	DoubleBitECC bool `json:"double_bit_ecc,omitempty"`
	// Lost says the device is gone from the bus.
	Lost bool `json:"lost,omitempty"`
}

// ApplicationXIDs are the XIDs that an application's own fault causes
// (bad memory access, a killed context, a watchdog on a hung kernel):
// the GPU stays usable, so they do not drain the node. NVIDIA's
// Kubernetes device plugin skips the same ones by default.
var ApplicationXIDs = []uint64{13, 31, 43, 45, 68, 109}

// xidNames describe the XIDs that reach a drain reason most often.
var xidNames = map[uint64]string{
	48:  "double-bit ECC error",
	61:  "internal micro-controller breakpoint",
	62:  "internal micro-controller halt",
	63:  "ECC page retirement or row remapping event",
	64:  "ECC page retirement or row remapping failure",
	74:  "NVLink error",
	79:  "GPU has fallen off the bus",
	92:  "high single-bit ECC error rate",
	94:  "contained ECC error",
	95:  "uncontained ECC error",
	119: "GSP RPC timeout",
	120: "GSP error",
	140: "unrecovered ECC error",
}

// HealthPolicy decides which events drain a node.
type HealthPolicy struct {
	// Ignore are XIDs that never drain (ApplicationXIDs by default).
	Ignore map[uint64]bool
}

// DefaultHealthPolicy ignores ApplicationXIDs.
func DefaultHealthPolicy() HealthPolicy {
	p := HealthPolicy{Ignore: map[uint64]bool{}}
	for _, x := range ApplicationXIDs {
		p.Ignore[x] = true
	}
	return p
}

// ParseXIDList reads a comma-separated list of XIDs ("13,31,43").
func ParseXIDList(s string) ([]uint64, error) {
	var out []uint64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		x, err := strconv.ParseUint(f, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("invalid XID %q", f)
		}
		out = append(out, x)
	}
	return out, nil
}

// Fatal reports whether ev makes the GPU unusable.
func (p HealthPolicy) Fatal(ev HealthEvent) bool {
	switch {
	case ev.Lost, ev.DoubleBitECC:
		return true
	case ev.XID != 0:
		return !p.Ignore[ev.XID]
	}
	return false
}

// Reason is the drain reason for a fatal event: "GPU 3 XID 79: GPU has
// fallen off the bus".
func (ev HealthEvent) Reason() string {
	dev := "GPU"
	if ev.Index >= 0 {
		dev = "GPU " + strconv.Itoa(ev.Index)
	}
	switch {
	case ev.Lost:
		return dev + " lost"
	case ev.DoubleBitECC:
		return dev + ": double-bit ECC error"
	case ev.XID != 0:
		if name, ok := xidNames[ev.XID]; ok {
			return fmt.Sprintf("%s XID %d: %s", dev, ev.XID, name)
		}
		return fmt.Sprintf("%s XID %d", dev, ev.XID)
	}
	return dev + ": unknown event"
}
