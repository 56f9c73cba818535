package sack

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/msgauth"
)

// BenchmarkCred is one credential for a request to the controller, as a
// program gets it: signed with its session, the service asked once a
// session.
func BenchmarkCred(b *testing.B) { benchCred(b, false) }

// BenchmarkCredFromService is one credential asked of the service over
// its socket, as without sessions.
func BenchmarkCredFromService(b *testing.B) { benchCred(b, true) }

func benchCred(b *testing.B, noSession bool) {
	addr := "@drover-test/sack-bench/" + strconv.Itoa(os.Getpid())
	serve(b, addr)
	c := NewClient(addr)
	c.noSession = noSession
	body := make([]byte, 800)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Cred(ctx, "POST", "/slurm/v0.0.44/job/submit", body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify is the controller's check of one credential.
func BenchmarkVerify(b *testing.B) {
	s := &msgauth.Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(key)), Issuer: msgauth.Host("h")}
	v := &msgauth.Verifier{Keys: clusterkey.NewHolder(clusterkey.FromSecret(key)), Audience: msgauth.Controller}
	body := make([]byte, 800)
	toks := make([]string, 0, 1<<16)
	for range cap(toks) {
		t, _ := s.SignUser(msgauth.UserID{Name: "root"}, msgauth.Controller, "POST", "/p", msgauth.BodyHash(body))
		toks = append(toks, t)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := v.Verify(toks[i%len(toks)], "POST", "/p", body); err != nil && i < len(toks) {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkVerifySession is the controller's check of one credential
// signed in a session, as the commands send them.
func BenchmarkVerifySession(b *testing.B) {
	s := &msgauth.Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(key)), Issuer: msgauth.Host("h")}
	ss, err := s.GrantSession(msgauth.UserID{Name: "root"})
	if err != nil {
		b.Fatal(err)
	}
	v := &msgauth.Verifier{Keys: clusterkey.NewHolder(clusterkey.FromSecret(key)), Audience: msgauth.Controller}
	body := make([]byte, 800)
	toks := make([]string, 0, 1<<16)
	now := time.Now()
	for range cap(toks) {
		t, _ := ss.Sign(msgauth.Controller, "POST", "/p", msgauth.BodyHash(body), now)
		toks = append(toks, t)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := v.Verify(toks[i%len(toks)], "POST", "/p", body); err != nil && i < len(toks) {
			b.Fatal(err)
		}
		i++
	}
}
