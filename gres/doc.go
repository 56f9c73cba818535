// Package gres holds Drover's generic resource (GRES) vocabulary: the job
// requests that sbatch/srun take in --gres and --gpus, the per-node GRES
// strings of slurm.conf and of sinfo/scontrol, the GPU devices that
// discovery reports, and the rule that turns an NVML product name into a
// Slurm-style GPU type.
//
// The package is pure Go and does no I/O: NVML lives behind the
// drover-gres-nvml helper (see gres/nvml and gres/discovery), gres.conf in
// gres/conf.
package gres
