package conf

import (
	"fmt"
	"strings"
)

// Flags are the Flags= of a gres.conf line.
type Flags uint32

// Flag bits, one per value that gres.conf documents.
const (
	// FlagCountOnly: only count this GRES, load no plugin for it.
	FlagCountOnly Flags = 1 << iota
	// FlagNvidiaGPUEnv: set CUDA_VISIBLE_DEVICES.
	FlagNvidiaGPUEnv
	// FlagAMDGPUEnv: set ROCR_VISIBLE_DEVICES.
	FlagAMDGPUEnv
	// FlagIntelGPUEnv: set ZE_AFFINITY_MASK.
	FlagIntelGPUEnv
	// FlagOpenCLEnv: set GPU_DEVICE_ORDINAL.
	FlagOpenCLEnv
	// FlagNoGPUEnv: set no GPU environment variable at all.
	FlagNoGPUEnv
	// FlagOneSharing: a shared GRES (mps, shard) may use one GPU only.
	FlagOneSharing
	// FlagAllSharing: a shared GRES may use every GPU of the node.
	FlagAllSharing
	// FlagExplicit: not part of a whole-node allocation unless asked for.
	FlagExplicit
	// FlagEnvUUID: put device UUIDs, not indices, in the environment.
	FlagEnvUUID
)

// EnvFlags are the flags that choose GPU environment variables.
const EnvFlags = FlagNvidiaGPUEnv | FlagAMDGPUEnv | FlagIntelGPUEnv | FlagOpenCLEnv

// flagNames are Slurm's spellings, in the order String writes them.
var flagNames = []struct {
	flag Flags
	name string
}{
	{FlagCountOnly, "CountOnly"},
	{FlagNvidiaGPUEnv, "nvidia_gpu_env"},
	{FlagAMDGPUEnv, "amd_gpu_env"},
	{FlagIntelGPUEnv, "intel_gpu_env"},
	{FlagOpenCLEnv, "opencl_env"},
	{FlagNoGPUEnv, "no_gpu_env"},
	{FlagOneSharing, "one_sharing"},
	{FlagAllSharing, "all_sharing"},
	{FlagExplicit, "explicit"},
	{FlagEnvUUID, "env_uuid"},
}

// String returns the flags as gres.conf spells them, comma-separated
// ("nvidia_gpu_env,env_uuid"); no flags give "".
func (f Flags) String() string {
	var parts []string
	for _, fn := range flagNames {
		if f&fn.flag != 0 {
			parts = append(parts, fn.name)
		}
	}
	return strings.Join(parts, ",")
}

// ParseFlags reads a Flags= value: comma-separated names from gres.conf(5),
// case-insensitive. Names slurmd does not know are returned in unknown
// (slurmd ignores them); no_gpu_env together with an env flag, and
// one_sharing together with all_sharing, are errors as in slurmd.
func ParseFlags(s string) (f Flags, unknown []string, err error) {
	for tok := range strings.SplitSeq(s, ",") {
		if tok == "" {
			continue
		}
		found := false
		for _, fn := range flagNames {
			if strings.EqualFold(tok, fn.name) {
				f |= fn.flag
				found = true
				break
			}
		}
		if !found {
			unknown = append(unknown, tok)
		}
	}
	if f&FlagNoGPUEnv != 0 && f&EnvFlags != 0 {
		return 0, nil, fmt.Errorf("Flags=%s: no_gpu_env excludes every other GPU env flag", s)
	}
	if f&FlagOneSharing != 0 && f&FlagAllSharing != 0 {
		return 0, nil, fmt.Errorf("Flags=%s: one_sharing and all_sharing exclude each other", s)
	}
	return f, unknown, nil
}
