package gres

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGPUType(t *testing.T) {
	tests := map[string]struct {
		product      string
		wantDetected string
		wantShort    string
	}{
		// The product names of go-nvml's DGX mocks.
		"dgxa100 mock": {product: "Mock NVIDIA A100-SXM4-40GB", wantDetected: "mock_nvidia_a100-sxm4-40gb", wantShort: "a100"},
		"dgxh100 mock": {product: "NVIDIA H100 80GB HBM3", wantDetected: "nvidia_h100_80gb_hbm3", wantShort: "h100"},
		"dgxh200 mock": {product: "NVIDIA H200 141GB HBM3e", wantDetected: "nvidia_h200_141gb_hbm3e", wantShort: "h200"},
		"dgxb200 mock": {product: "NVIDIA B200 180GB HBM3e", wantDetected: "nvidia_b200_180gb_hbm3e", wantShort: "b200"},
		"a100 sxm":     {product: "NVIDIA A100-SXM4-40GB", wantDetected: "nvidia_a100-sxm4-40gb", wantShort: "a100"},
		"a100 pcie":    {product: "NVIDIA A100 80GB PCIe", wantDetected: "nvidia_a100_80gb_pcie", wantShort: "a100"},
		"v100":         {product: "Tesla V100-SXM2-16GB", wantDetected: "tesla_v100-sxm2-16gb", wantShort: "v100"},
		"t4":           {product: "Tesla T4", wantDetected: "tesla_t4", wantShort: "t4"},
		"l40s":         {product: "NVIDIA L40S", wantDetected: "nvidia_l40s", wantShort: "l40s"},
		"gh200":        {product: "NVIDIA GH200 480GB", wantDetected: "nvidia_gh200_480gb", wantShort: "gh200"},
		"rtx a6000":    {product: "NVIDIA RTX A6000", wantDetected: "nvidia_rtx_a6000", wantShort: "rtx_a6000"},
		"geforce":      {product: "NVIDIA GeForce RTX 3090", wantDetected: "nvidia_geforce_rtx_3090", wantShort: "rtx_3090"},
		"quadro":       {product: "Quadro RTX 8000", wantDetected: "quadro_rtx_8000", wantShort: "rtx_8000"},
		"titan":        {product: "NVIDIA TITAN X (Pascal)", wantDetected: "nvidia_titan_x_(pascal)", wantShort: "titan_x"},
		"brand only":   {product: "NVIDIA", wantDetected: "nvidia", wantShort: "nvidia"},
		"empty":        {product: "", wantDetected: "", wantShort: ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := struct{ Detected, Short string }{DetectedGPUType(tt.product), NormalizeGPUType(tt.product)}
			want := struct{ Detected, Short string }{tt.wantDetected, tt.wantShort}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("GPU type of %q mismatch (-want +got):\n%s", tt.product, diff)
			}
			if !strings.Contains(got.Detected, got.Short) {
				t.Errorf("short type %q is not a substring of %q", got.Short, got.Detected)
			}
		})
	}
}

func TestTypeMatches(t *testing.T) {
	tests := map[string]struct {
		configured, detected string
		want                 bool
	}{
		"substring":      {configured: "a100", detected: "nvidia_a100-sxm4-40gb", want: true},
		"case":           {configured: "A100", detected: "nvidia_a100-sxm4-40gb", want: true},
		"longer part":    {configured: "a100-sxm4", detected: "nvidia_a100-sxm4-40gb", want: true},
		"other":          {configured: "h100", detected: "nvidia_a100-sxm4-40gb", want: false},
		"empty matches":  {configured: "", detected: "nvidia_a100-sxm4-40gb", want: true},
		"space in conf":  {configured: "h100 80gb", detected: "nvidia_h100_80gb_hbm3", want: false},
		"underscore ok":  {configured: "h100_80gb", detected: "nvidia_h100_80gb_hbm3", want: true},
		"empty detected": {configured: "a100", detected: "", want: false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := TypeMatches(tt.configured, tt.detected); got != tt.want {
				t.Errorf("TypeMatches(%q, %q) = %v, want %v", tt.configured, tt.detected, got, tt.want)
			}
		})
	}
}
