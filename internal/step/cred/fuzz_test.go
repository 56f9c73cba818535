package cred

import (
	"errors"
	"strings"
	"testing"
)

// FuzzVerify checks that no token panics Verify and that none verifies
// without the key: the seeds are signed with other keys or damaged, and the
// fuzzer never learns testKey. Every failure is ErrBadCred, since
// ErrExpired and the checks after it are reached only past the MAC.
func FuzzVerify(f *testing.F) {
	good := mustSign(f, otherKey, stepCred())
	body, sig, _ := strings.Cut(good, ".")
	for _, s := range []string{
		good, body, sig, "." + sig, body + ".", good + ".", "", ".", "..", "a.b",
		signRaw(otherKey, `{"format":"drover-step-cred-v1","nonce":"n","expires":"2030-01-01T00:00:00Z"}`),
		signRaw(otherKey, ``),
		"eyJ9.AAAA", strings.Repeat("A", 43) + "." + strings.Repeat("_", 43),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		c, err := Verify(testKey, token, t0)
		if err == nil {
			t.Fatalf("Verify(%q) accepted %+v", token, c)
		}
		if !errors.Is(err, ErrBadCred) {
			t.Fatalf("Verify(%q) = %v, want ErrBadCred", token, err)
		}
	})
}
