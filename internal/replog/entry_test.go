package replog

import (
	"bytes"
	"testing"

	"github.com/droverhq/drover/internal/state"
)

func TestEntryRoundTrip(t *testing.T) {
	blobs := []state.Blob{{Key: "k1/script", Data: []byte("#!/bin/sh\necho hi\n")}, {Key: "k1/env", Data: nil}}
	rec, got, err := decodeEntry(encodeEntry([]byte(`{"op":"submit"}`), blobs))
	if err != nil {
		t.Fatal(err)
	}
	if string(rec) != `{"op":"submit"}` || len(got) != 2 || got[0].Key != "k1/script" || !bytes.Equal(got[0].Data, blobs[0].Data) || got[1].Key != "k1/env" || len(got[1].Data) != 0 {
		t.Fatalf("round trip: %q %+v", rec, got)
	}
}

func TestEntryRefusesDamage(t *testing.T) {
	good := encodeEntry([]byte("rec"), []state.Blob{{Key: "a", Data: []byte("bbbb")}})
	for name, data := range map[string][]byte{
		"empty":      nil,
		"version":    append([]byte{9}, good[1:]...),
		"truncated":  good[:5],
		"huge count": {entryVersion, 0xff, 0xff, 0xff, 0x0f},
		"empty key":  encodeEntry(nil, []state.Blob{{Key: "", Data: []byte("x")}}),
	} {
		if _, _, err := decodeEntry(data); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func FuzzDecodeEntry(f *testing.F) {
	f.Add(encodeEntry([]byte("rec"), []state.Blob{{Key: "a", Data: []byte("b")}}))
	f.Add([]byte{entryVersion, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, blobs, err := decodeEntry(data)
		if err != nil {
			return
		}
		// What decodes survives encoding again unchanged.
		rec2, blobs2, err := decodeEntry(encodeEntry(rec, blobs))
		if err != nil || !bytes.Equal(rec, rec2) || len(blobs) != len(blobs2) {
			t.Fatalf("re-decoded %q %d blobs (%v), was %q %d", rec2, len(blobs2), err, rec, len(blobs))
		}
		for i := range blobs {
			if blobs[i].Key != blobs2[i].Key || !bytes.Equal(blobs[i].Data, blobs2[i].Data) {
				t.Fatalf("blob %d changed", i)
			}
		}
	})
}
