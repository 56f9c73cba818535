// Package nvml discovers NVIDIA GPUs through NVML, the way slurmd's
// gpu/nvml AutoDetect plugin does, and returns them as gres.Device values.
//
// go-nvml needs cgo (even its mocks do), so everything but this comment is
// built only with cgo; the pure-Go drover binary never imports this package
// and reaches it through the drover-gres-nvml helper (see gres/discovery).
// Discover does not care how it is called: the helper runs it today, a GRES
// plugin can run it later.
package nvml
