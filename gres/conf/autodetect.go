package conf

import (
	"fmt"
	"strings"
)

// AutoDetect is gres.conf's AutoDetect= value: which hardware detection
// slurmd runs to fill in GPU records.
type AutoDetect int

// AutoDetect values, in Slurm's spellings (see String).
const (
	// AutoDetectUnset means gres.conf says nothing; detection stays off
	// (Slurm turns on "full" only for dynamic nodes, slurmd -Z).
	AutoDetectUnset AutoDetect = iota
	// AutoDetectOff turns detection off, also against a global setting.
	AutoDetectOff
	// AutoDetectFull tries every mechanism in turn until one finds GPUs.
	AutoDetectFull
	// AutoDetectNVML detects NVIDIA GPUs through NVML.
	AutoDetectNVML
	// AutoDetectNVIDIA detects NVIDIA GPUs without NVML (no MIG, no NVLink).
	AutoDetectNVIDIA
	// AutoDetectRSMI detects AMD GPUs through ROCm SMI.
	AutoDetectRSMI
	// AutoDetectOneAPI detects Intel GPUs through oneAPI Level Zero.
	AutoDetectOneAPI
	// AutoDetectNRT detects AWS Trainium/Inferentia devices.
	AutoDetectNRT
)

var autoDetectNames = [...]string{
	AutoDetectUnset:  "",
	AutoDetectOff:    "off",
	AutoDetectFull:   "full",
	AutoDetectNVML:   "nvml",
	AutoDetectNVIDIA: "nvidia",
	AutoDetectRSMI:   "rsmi",
	AutoDetectOneAPI: "oneapi",
	AutoDetectNRT:    "nrt",
}

// String returns the value as gres.conf spells it ("nvml", "off"), "" for
// AutoDetectUnset.
func (a AutoDetect) String() string {
	if a < 0 || int(a) >= len(autoDetectNames) {
		return fmt.Sprintf("AutoDetect(%d)", int(a))
	}
	return autoDetectNames[a]
}

// ParseAutoDetect reads an AutoDetect= value the way slurmd does: the first
// of full, nvml, rsmi, oneapi, nrt, nvidia found anywhere in the value
// (case-insensitive) wins, so "NVML" and "nvml,rsmi" are both nvml; "off"
// must be the whole value. Anything else is an error.
func ParseAutoDetect(s string) (AutoDetect, error) {
	l := strings.ToLower(s)
	for _, a := range []AutoDetect{AutoDetectFull, AutoDetectNVML, AutoDetectRSMI, AutoDetectOneAPI, AutoDetectNRT, AutoDetectNVIDIA} {
		if strings.Contains(l, a.String()) {
			return a, nil
		}
	}
	if l == "off" {
		return AutoDetectOff, nil
	}
	return AutoDetectUnset, fmt.Errorf("unknown AutoDetect value %q", s)
}
