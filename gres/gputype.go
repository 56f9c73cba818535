package gres

import (
	"strings"
)

// DetectedGPUType returns the GRES type that Slurm's GPU AutoDetect plugins
// (gpu/nvml, gpu/nvidia, gpu/rsmi...) give a device: the product name in
// lower case with every space turned into an underscore.
// "NVIDIA A100-SXM4-40GB" becomes "nvidia_a100-sxm4-40gb",
// "NVIDIA H100 80GB HBM3" becomes "nvidia_h100_80gb_hbm3".
//
// slurmd never shows that long name when slurm.conf gives types: it matches
// each configured type against the detected one as a case-insensitive
// substring (TypeMatches) and reports the configured type. This function is
// what that match runs against.
func DetectedGPUType(productName string) string {
	return strings.ReplaceAll(strings.ToLower(productName), " ", "_")
}

// TypeMatches reports whether a type from slurm.conf or gres.conf
// (configured, "a100") names a device whose detected type is detected
// ("nvidia_a100-sxm4-40gb"): as in Slurm, a case-insensitive substring match.
// An empty configured type matches any device.
func TypeMatches(configured, detected string) bool {
	return strings.Contains(strings.ToLower(detected), strings.ToLower(configured))
}

// brandWords are the leading words of NVIDIA product names that name a
// vendor, a product line or go-nvml's mocks ("Mock NVIDIA A100-SXM4-40GB")
// rather than the GPU model.
var brandWords = map[string]bool{
	"mock":    true,
	"nvidia":  true,
	"tesla":   true,
	"geforce": true,
	"quadro":  true,
}

// NormalizeGPUType returns the short GPU type that Drover reports for a
// device when nothing in slurm.conf names it, the one users write in
// --gres=gpu:TYPE:N: "a100" for "NVIDIA A100-SXM4-40GB", "h100" for
// "NVIDIA H100 80GB HBM3", "rtx_a6000" for "NVIDIA RTX A6000".
//
// Slurm itself would report DetectedGPUType ("nvidia_a100-sxm4-40gb") when
// slurm.conf gives no type; Drover shortens it because users and the issue
// tracker's examples ask for --gres=gpu:a100:N. The rule, applied to
// DetectedGPUType(productName) split at underscores:
//  1. skip leading words that are brand words (mock, nvidia, tesla,
//     geforce, quadro) or that have a character other than [a-z0-9.-]
//     (they could not stand in a GRES string);
//  2. keep words up to and including the first one that contains a digit
//     (the model number), cutting that word at its first '-' so that
//     "a100-sxm4-40gb" gives "a100"; stop early before a word that could
//     not stand in a GRES string;
//  3. join the kept words with '_'; if nothing is left (a name made only of
//     brand words), use the first word that can stand in a GRES string,
//     or "" if there is none.
//
// The result is always a substring of DetectedGPUType(productName), so
// TypeMatches(NormalizeGPUType(n), DetectedGPUType(n)) holds: a slurm.conf
// written for Slurm's AutoDetect (Gres=gpu:a100:8) matches Drover's devices
// the same way. Applying the function twice gives the same result.
func NormalizeGPUType(productName string) string {
	words := strings.Split(DetectedGPUType(productName), "_")
	first := ""
	for _, w := range words {
		if typeWord(w) {
			first = modelWord(w)
			break
		}
	}
	for len(words) > 0 && (brandWords[words[0]] || !typeWord(words[0])) {
		words = words[1:]
	}
	var kept []string
	for _, w := range words {
		if !typeWord(w) {
			break
		}
		if strings.ContainsAny(w, "0123456789") {
			kept = append(kept, modelWord(w))
			break
		}
		kept = append(kept, w)
	}
	if len(kept) == 0 {
		return first
	}
	return strings.Join(kept, "_")
}

// modelWord cuts a word that holds a model number at its first '-', which
// starts the form factor and memory size ("a100-sxm4-40gb" -> "a100").
func modelWord(w string) string {
	if !strings.ContainsAny(w, "0123456789") {
		return w
	}
	if i := strings.IndexByte(w, '-'); i > 0 {
		return w[:i]
	}
	return w
}

// typeWord reports whether w is a non-empty word of [a-z0-9.-] that does not
// start with '-', one that NormalizeGPUType can keep in a type.
func typeWord(w string) bool {
	if w == "" || w[0] == '-' {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}
