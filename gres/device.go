package gres

// Device is one GPU as discovery reports it: what slurmd's gpu/nvml
// AutoDetect learns about a device, in the shape the node daemon turns into
// gres.conf-like records. The JSON form is the wire format of the
// drover-gres-nvml helper (see gres/discovery).
type Device struct {
	// Index is the NVML device index, which follows PCI bus order and is what
	// CUDA_VISIBLE_DEVICES counts in.
	Index int `json:"index"`
	// Minor is the device's minor number, the N of /dev/nvidiaN; it need not
	// equal Index.
	Minor int `json:"minor"`
	// Type is the short GPU type (NormalizeGPUType of Name), "a100".
	Type string `json:"type"`
	// Name is the product name as NVML reports it, "NVIDIA A100-SXM4-40GB";
	// configured types are matched against DetectedGPUType(Name).
	Name string `json:"name,omitempty"`
	// UUID is NVML's device UUID, "GPU-...".
	UUID string `json:"uuid"`
	// File is the device file, "/dev/nvidia0".
	File string `json:"file"`
	// PCIBusID is NVML's bus id, "00000000:07:00.0"; empty when unknown.
	PCIBusID string `json:"pci_bus_id,omitempty"`
	// MemoryMiB is the device's total memory in MiB.
	MemoryMiB uint64 `json:"memory_mib"`
	// Cores lists the machine CPU ids with affinity to the device, "0-15"
	// (OS numbering, before slurmd's conversion to abstract core ids);
	// empty when NVML does not say.
	Cores string `json:"cores,omitempty"`
	// Links is the device's NVLink vector in gres.conf's Links= form: one
	// entry per device index, -1 for the device itself, else the number of
	// links to that device ("-1,2,0,0"); empty when NVML does not say.
	Links string `json:"links,omitempty"`
}
