//go:build cgo

package nvml

import (
	"errors"
	"fmt"
	"sync"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/droverhq/drover/gres"
)

// watchTypes are the NVML events a Watcher asks for: XIDs (critical
// errors, whose data is the XID number) and double-bit ECC errors.
const watchTypes = gonvml.EventTypeXidCriticalError | gonvml.EventTypeDoubleBitEccError

// waitMillis bounds one nvmlEventSetWait, so that Close is noticed soon.
const waitMillis = 500

// maxPending bounds the events kept between two Take calls; a storm of
// XIDs is summed up by its first ones.
const maxPending = 256

// Watcher collects the critical NVML events of a node's GPUs from a
// goroutine blocked in nvmlEventSetWait, as NVIDIA's device plugin does,
// until Take hands them over.
type Watcher struct {
	set     gonvml.EventSet
	index   map[gonvml.Device]int
	uuids   map[int]string
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	pending []gres.HealthEvent
	err     error
}

// Watch registers the devices' critical events with a new event set and
// starts waiting on it. handles are the devices' NVML handles, by index,
// as Discover listed devices. Devices that do not support events are
// skipped; a node where none does gets a Watcher that never reports.
func Watch(lib gonvml.Interface, devices []gres.Device) (*Watcher, error) {
	set, err := call("nvmlEventSetCreate", lib.EventSetCreate)
	if err != nil {
		return nil, err
	}
	w := &Watcher{set: set, index: map[gonvml.Device]int{}, uuids: map[int]string{},
		stop: make(chan struct{}), done: make(chan struct{})}
	for _, d := range devices {
		h, err := call("nvmlDeviceGetHandleByIndex", func() (gonvml.Device, gonvml.Return) {
			return lib.DeviceGetHandleByIndex(d.Index)
		})
		if err != nil {
			set.Free()
			return nil, fmt.Errorf("GPU %d: %w", d.Index, err)
		}
		supported, err := call("nvmlDeviceGetSupportedEventTypes", h.GetSupportedEventTypes)
		if err != nil || supported&watchTypes == 0 {
			continue
		}
		ret := h.RegisterEvents(supported&watchTypes, set)
		if ret != gonvml.SUCCESS {
			set.Free()
			return nil, fmt.Errorf("GPU %d: nvmlDeviceRegisterEvents: %w", d.Index, ret)
		}
		w.index[h] = d.Index
		w.uuids[d.Index] = d.UUID
	}
	go w.loop()
	return w, nil
}

func (w *Watcher) loop() {
	defer close(w.done)
	for {
		select {
		case <-w.stop:
			return
		default:
		}
		data, ret := w.set.Wait(waitMillis)
		switch {
		case errors.Is(ret, gonvml.ERROR_TIMEOUT):
			continue
		case ret != gonvml.SUCCESS:
			w.mu.Lock()
			w.err = fmt.Errorf("nvmlEventSetWait: %w", ret)
			w.mu.Unlock()
			return
		}
		ev := gres.HealthEvent{Index: -1}
		if i, ok := w.index[data.Device]; ok {
			ev.Index, ev.UUID = i, w.uuids[i]
		} else if data.Device != nil {
			if i, err := call("nvmlDeviceGetIndex", data.Device.GetIndex); err == nil {
				ev.Index, ev.UUID = i, w.uuids[i]
			}
		}
		switch {
		case data.EventType&gonvml.EventTypeXidCriticalError != 0:
			ev.XID = data.EventData
		case data.EventType&gonvml.EventTypeDoubleBitEccError != 0:
			ev.DoubleBitECC = true
		}
		w.mu.Lock()
		if len(w.pending) < maxPending {
			w.pending = append(w.pending, ev)
		}
		w.mu.Unlock()
	}
}

// Take returns the events seen since the last call, and the error that
// stopped the watch, if one did.
func (w *Watcher) Take() ([]gres.HealthEvent, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.pending
	w.pending = nil
	return out, w.err
}

// Close stops the watch and frees the event set.
func (w *Watcher) Close() {
	close(w.stop)
	<-w.done
	w.set.Free()
}
