package replog

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/state"
)

// listFSM is a state machine that keeps every record in order; a record
// "release:KEY" releases blob KEY.
type listFSM struct {
	mu      sync.Mutex
	records []string
}

func (f *listFSM) Apply(_ uint64, rec []byte) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records = append(f.records, string(rec))
	return len(f.records)
}

func (f *listFSM) ReleasedBlobs(res any) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	last := f.records[res.(int)-1]
	if k, ok := strings.CutPrefix(last, "release:"); ok {
		return []string{k}
	}
	return nil
}

func (f *listFSM) Snapshot(w io.Writer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return json.NewEncoder(w).Encode(f.records)
}

func (f *listFSM) Restore(r io.Reader) error {
	var recs []string
	if err := json.NewDecoder(r).Decode(&recs); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records = recs
	return nil
}

func (f *listFSM) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string{}, f.records...)
}

var testKeys = clusterkey.NewHolder(clusterkey.FromSecret([]byte("0123456789abcdef0123456789abcdef")))

// replica is one controller of a test cluster: a listener serving the
// upgrade handler, and the log when running.
type replica struct {
	id, addr, dir string
	ln            net.Listener
	srv           *http.Server
	stream        *Stream
	log           *Log
	fsm           *listFSM
	leading       chan bool
	importPath    string
	// recover starts it with raft's RecoverCluster (once).
	recover bool
}

type cluster struct {
	t        *testing.T
	replicas []*replica
	members  []Member
}

func newCluster(t *testing.T, n int, snapshotEvery int) *cluster {
	t.Helper()
	return newClusterWith(t, n, snapshotEvery, "")
}

// newClusterWith starts n replicas, the first of which takes over the
// single controller's log at importPath.
func newClusterWith(t *testing.T, n int, snapshotEvery int, importPath string) *cluster {
	t.Helper()
	c := &cluster{t: t}
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		r := &replica{id: fmt.Sprintf("ctl%d", i), addr: ln.Addr().String(), dir: t.TempDir(), ln: ln}
		if i == 0 {
			r.importPath = importPath
		}
		c.replicas = append(c.replicas, r)
		c.members = append(c.members, Member{ID: r.id, Addr: r.addr})
	}
	for _, r := range c.replicas {
		c.start(r, snapshotEvery)
	}
	t.Cleanup(func() {
		for _, r := range c.replicas {
			c.stop(r)
		}
	})
	return c
}

func (c *cluster) start(r *replica, snapshotEvery int) {
	c.t.Helper()
	if r.ln == nil {
		ln, err := net.Listen("tcp", r.addr)
		if err != nil {
			c.t.Fatal(err)
		}
		r.ln = ln
	}
	var err error
	r.stream, err = NewStream(r.addr, nil, &msgauth.Signer{Keys: testKeys, Issuer: msgauth.Controller})
	if err != nil {
		c.t.Fatal(err)
	}
	verifier := &msgauth.Verifier{Keys: testKeys, Audience: msgauth.Controller, Replay: msgauth.NewReplay()}
	mux := http.NewServeMux()
	mux.Handle(Path, r.stream.Handler(func(req *http.Request) (*msgauth.Claims, error) { return verifier.VerifyRequest(req, 0) }))
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go r.srv.Serve(r.ln)
	r.fsm = &listFSM{}
	r.leading = make(chan bool, 64)
	r.log, err = Open(Config{
		ID: r.id, Members: c.members, Dir: r.dir, Stream: r.stream, FailoverTimeout: 4 * time.Second,
		Bootstrap: r == c.replicas[0], Import: r.importPath, Recover: r.recover,
		SnapshotEvery: snapshotEvery, Logger: slog.New(slog.DiscardHandler),
		OnLeader: func(b bool) { r.leading <- b },
		OnFatal:  func(err error) { c.t.Errorf("%s: fatal: %v", r.id, err) },
	}, r.fsm)
	if err != nil {
		c.t.Fatal(err)
	}
}

// stop is a controller going away: raft stops, the port closes.
func (c *cluster) stop(r *replica) {
	if r.log == nil {
		return
	}
	if err := r.log.Close(); err != nil {
		c.t.Errorf("%s: close: %v", r.id, err)
	}
	r.srv.Close()
	r.ln = nil
	r.log = nil
}

// crash is a controller dying: no leadership handed over, the port
// gone at once.
func (c *cluster) crash(r *replica) {
	r.srv.Close()
	r.log.closeOnce.Do(func() {
		r.log.raft.Shutdown().Error()
		r.log.trans.Close()
		close(r.log.notify)
		<-r.log.done
		r.log.closeStores()
	})
	r.ln = nil
	r.log = nil
}

// leader waits for one running replica to lead, and returns it.
func (c *cluster) leader() *replica {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range c.replicas {
			if r.log != nil && r.log.IsLeader() {
				return r
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatal("no leader elected")
	return nil
}

// converge waits for every running replica to hold want.
func (c *cluster) converge(want int) {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		done := true
		for _, r := range c.replicas {
			if r.log != nil && len(r.fsm.list()) < want {
				done = false
			}
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			for _, r := range c.replicas {
				if r.log != nil {
					c.t.Logf("%s holds %d", r.id, len(r.fsm.list()))
				}
			}
			c.t.Fatalf("replicas did not reach %d records", want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func apply(t *testing.T, r *replica, rec string, blobs ...state.Blob) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := r.log.ApplyWithBlobs(ctx, []byte(rec), blobs)
	if err != nil {
		t.Fatalf("apply %q on %s: %v", rec, r.id, err)
	}
	return res.(int)
}

func TestReplicatesRecordsAndBlobs(t *testing.T) {
	c := newCluster(t, 3, 0)
	lead := c.leader()
	if got := apply(t, lead, "submit 1", state.Blob{Key: "k1/script", Data: []byte("#!/bin/sh\n")}); got != 1 {
		t.Fatalf("first result %d", got)
	}
	for i := 2; i <= 20; i++ {
		apply(t, lead, fmt.Sprintf("submit %d", i))
	}
	c.converge(20)
	for _, r := range c.replicas {
		if got := r.fsm.list(); got[0] != "submit 1" || got[19] != "submit 20" {
			t.Errorf("%s holds %v", r.id, got)
		}
		if b, err := r.log.Blob("k1/script"); err != nil || string(b) != "#!/bin/sh\n" {
			t.Errorf("%s: blob %q %v", r.id, b, err)
		}
	}
	for _, r := range c.replicas {
		if r == lead {
			continue
		}
		if _, err := r.log.Apply(context.Background(), []byte("x")); !errors.Is(err, ErrNotLeader) {
			t.Errorf("apply on follower %s: %v, want ErrNotLeader", r.id, err)
		}
		if m, ok := r.log.Leader(); !ok || m.ID != lead.id || m.Addr != lead.addr {
			t.Errorf("%s sees leader %+v %v, want %s", r.id, m, ok, lead.id)
		}
	}
	// A record that releases a blob deletes it on every replica.
	apply(t, lead, "release:k1/script")
	c.converge(21)
	for _, r := range c.replicas {
		if _, err := r.log.Blob("k1/script"); !errors.Is(err, state.ErrNoBlob) {
			t.Errorf("%s still has the released blob: %v", r.id, err)
		}
	}
	st := lead.log.Stats()
	if st.State != "Leader" || st.Leader != lead.id || st.Voters != 3 || st.AppliedIndex < 21 || st.Commits != 21 {
		t.Errorf("leader stats %+v", st)
	}
}

func TestNewLeaderAfterLeaderStops(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash=%v", crash), func(t *testing.T) { testNewLeader(t, crash) })
	}
}

func testNewLeader(t *testing.T, crash bool) {
	c := newCluster(t, 3, 0)
	old := c.leader()
	for i := 1; i <= 5; i++ {
		apply(t, old, fmt.Sprintf("r%d", i), state.Blob{Key: fmt.Sprintf("b%d", i), Data: []byte("data")})
	}
	start := time.Now()
	if crash {
		c.crash(old)
	} else {
		c.stop(old)
	}
	next := c.leader()
	apply(t, next, "r6")
	took := time.Since(start)
	t.Logf("failover to %s took %v", next.id, took)
	// A planned stop hands leadership over at once; a crash waits out
	// the heartbeat timeout (FailoverTimeout/4 = 1 s here) and an
	// election.
	if !crash && took > time.Second {
		t.Errorf("a planned stop took %v to fail over", took)
	}
	if got := next.fsm.list(); len(got) != 6 {
		t.Fatalf("new leader holds %v", got)
	}
	// The old leader comes back as a follower and catches up, its blob
	// cache rebuilt.
	c.start(old, 0)
	c.converge(6)
	if b, err := old.log.Blob("b3"); err != nil || string(b) != "data" {
		t.Errorf("restarted replica's blob: %q %v", b, err)
	}
}

func TestLaggingReplicaGetsSnapshotWithBlobs(t *testing.T) {
	defer func(n uint64) { trailingLogs = n }(trailingLogs)
	trailingLogs = 5
	c := newCluster(t, 3, 0)
	lead := c.leader()
	var behind *replica
	for _, r := range c.replicas {
		if r != lead {
			behind = r
			break
		}
	}
	c.stop(behind)
	for i := 1; i <= 50; i++ {
		apply(t, lead, fmt.Sprintf("r%d", i), state.Blob{Key: fmt.Sprintf("b%02d", i), Data: []byte(fmt.Sprint(i))})
	}
	if err := lead.log.Snapshot(); err != nil {
		t.Fatal(err)
	}
	// The log keeps only the last five entries: the replica catches up
	// from the snapshot, which brings the state and every blob.
	c.start(behind, 0)
	c.converge(50)
	// Raft records the snapshot's index a moment after the state
	// machine has it.
	for deadline := time.Now().Add(10 * time.Second); behind.log.Stats().SnapshotIndex == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the lagging replica did not install a snapshot: %+v", behind.log.Stats())
		}
	}
	for _, k := range []string{"b01", "b25", "b50"} {
		if _, err := behind.log.Blob(k); err != nil {
			t.Errorf("blob %s: %v", k, err)
		}
	}
	// A restart restores the snapshot from disk, blobs included.
	c.stop(lead)
	c.start(lead, 0)
	c.converge(50)
	if _, err := lead.log.Blob("b01"); err != nil {
		t.Errorf("after restart: %v", err)
	}
}

func TestSnapshotCarriesBlobs(t *testing.T) {
	src := &fsm{target: &listFSM{records: []string{"a", "b"}}, onFatal: func(err error) { t.Error(err) }}
	var err error
	if src.blobs, err = openBlobStore(t.TempDir() + "/b.db"); err != nil {
		t.Fatal(err)
	}
	defer src.blobs.close()
	src.blobs.put([]state.Blob{{Key: "x", Data: []byte("1")}, {Key: "y", Data: make([]byte, 100000)}})
	snap, _ := src.Snapshot()
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	dst := &fsm{target: &listFSM{}, onFatal: func(err error) { t.Error(err) }}
	if dst.blobs, err = openBlobStore(t.TempDir() + "/b.db"); err != nil {
		t.Fatal(err)
	}
	defer dst.blobs.close()
	dst.blobs.put([]state.Blob{{Key: "stale", Data: []byte("z")}})
	if err := dst.Restore(io.NopCloser(strings.NewReader(sink.String()))); err != nil {
		t.Fatal(err)
	}
	keys, _ := dst.blobs.keys()
	if fmt.Sprint(keys) != "[x y]" || fmt.Sprint(dst.target.(*listFSM).list()) != "[a b]" {
		t.Errorf("restored %v %v", keys, dst.target.(*listFSM).list())
	}
	if err := dst.Restore(io.NopCloser(strings.NewReader("garbage"))); err == nil {
		t.Error("restored garbage")
	}
	// Rebind hands the state over to a fresh machine.
	next := &listFSM{}
	if err := dst.rebind(next); err != nil || fmt.Sprint(next.list()) != "[a b]" {
		t.Errorf("rebind: %v %v", err, next.list())
	}
}

type memSink struct{ strings.Builder }

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { return nil }
func (s *memSink) Close() error  { return nil }

// An ordinary user on a controller's network, or a node daemon, cannot
// open a raft connection: only a controller's token is taken.
func TestRaftPortRefusesOthers(t *testing.T) {
	c := newCluster(t, 1, 0)
	r := c.replicas[0]
	try := func(signer *msgauth.Signer) string {
		conn, err := net.Dial("tcp", r.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		req, _ := http.NewRequest(http.MethodGet, "http://"+r.addr+Path, nil)
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", upgradeProto)
		if signer != nil {
			signer.SignRequest(req, msgauth.Controller, nil)
		}
		req.Write(conn)
		resp, err := http.ReadResponse(bufio.NewReader(conn), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Status
	}
	if s := try(nil); !strings.HasPrefix(s, "401") {
		t.Errorf("no token: %s", s)
	}
	if s := try(&msgauth.Signer{Keys: testKeys, Issuer: msgauth.Node("n1")}); !strings.HasPrefix(s, "401") {
		t.Errorf("node token: %s", s)
	}
	other := clusterkey.NewHolder(clusterkey.FromSecret([]byte("another cluster's key, 32 bytes.")))
	if s := try(&msgauth.Signer{Keys: other, Issuer: msgauth.Controller}); !strings.HasPrefix(s, "401") {
		t.Errorf("other cluster's key: %s", s)
	}
	if s := try(&msgauth.Signer{Keys: testKeys, Issuer: msgauth.Controller}); !strings.HasPrefix(s, "101") {
		t.Errorf("controller token: %s", s)
	}
}

// Going from one controller to three: the first replica takes the single
// controller's log over, blobs included, and every replica gets it.
func TestImportsTheSingleControllersLog(t *testing.T) {
	path := t.TempDir() + "/drover-state.db"
	single := &listFSM{}
	old, err := state.Open(path, single, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 1; i <= 30; i++ {
		if _, err := old.ApplyWithBlobs(ctx, []byte(fmt.Sprintf("old %d", i)), []state.Blob{{Key: fmt.Sprintf("s%d", i), Data: []byte("script")}}); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()
	c := newClusterWith(t, 3, 0, path)
	lead := c.leader()
	if lead != c.replicas[0] {
		t.Fatalf("%s leads: only the first replica starts the cluster", lead.id)
	}
	c.converge(30)
	apply(t, lead, "new 31")
	c.converge(31)
	for _, r := range c.replicas {
		if got := r.fsm.list(); got[0] != "old 1" || got[29] != "old 30" || got[30] != "new 31" {
			t.Errorf("%s holds %v", r.id, got)
		}
		if b, err := r.log.Blob("s17"); err != nil || string(b) != "script" {
			t.Errorf("%s: imported blob: %q %v", r.id, b, err)
		}
	}
	if _, err := os.Stat(path + ".imported"); err != nil {
		t.Errorf("the single controller's log was not set aside: %v", err)
	}
	// A restart does not import again (the file is set aside), and the
	// state survives from the replicated log.
	c.stop(lead)
	c.start(lead, 0)
	c.converge(31)
}

// A controller added to slurm.conf joins through the leader; one taken
// out leaves.
func TestSetMembers(t *testing.T) {
	c := newCluster(t, 3, 0)
	lead := c.leader()
	apply(t, lead, "r1")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	extra := &replica{id: "ctl3", addr: ln.Addr().String(), dir: t.TempDir(), ln: ln}
	c.replicas = append(c.replicas, extra)
	members := append(append([]Member{}, c.members...), Member{ID: extra.id, Addr: extra.addr})
	c.members = members
	c.start(extra, 0)
	added, removed, err := lead.log.SetMembers(members)
	if err != nil || fmt.Sprint(added) != "[ctl3]" || len(removed) != 0 {
		t.Fatalf("add: %v %v %v", added, removed, err)
	}
	c.converge(1)
	var gone *replica
	for _, r := range c.replicas[:3] {
		if r != lead {
			gone = r
			break
		}
	}
	var keep []Member
	for _, m := range members {
		if m.ID != gone.id {
			keep = append(keep, m)
		}
	}
	added, removed, err = lead.log.SetMembers(keep)
	if err != nil || len(added) != 0 || fmt.Sprint(removed) != "["+gone.id+"]" {
		t.Fatalf("remove: %v %v %v", added, removed, err)
	}
	if st := lead.log.Stats(); st.Voters != 3 {
		t.Errorf("voters %d, want 3", st.Voters)
	}
}

// Two of three controllers lost for good: the survivor, started once to
// recover with itself as the only member, leads with everything it held.
func TestRecoverAfterLosingAMajority(t *testing.T) {
	c := newCluster(t, 3, 0)
	lead := c.leader()
	for i := 1; i <= 10; i++ {
		apply(t, lead, fmt.Sprintf("r%d", i), state.Blob{Key: fmt.Sprintf("b%d", i), Data: []byte("x")})
	}
	c.converge(10)
	var survivor *replica
	for _, r := range c.replicas {
		if r != lead && survivor == nil {
			survivor = r
			continue
		}
		c.crash(r)
	}
	c.stop(survivor)
	// Alone, as it was, it cannot lead: two of three are gone.
	c.start(survivor, 0)
	time.Sleep(3 * time.Second)
	if survivor.log.IsLeader() {
		t.Fatal("a minority elected itself")
	}
	c.stop(survivor)
	c.members = []Member{{ID: survivor.id, Addr: survivor.addr}}
	survivor.recover = true
	c.start(survivor, 0)
	survivor.recover = false
	if got := c.leader(); got != survivor {
		t.Fatalf("%s leads", got.id)
	}
	apply(t, survivor, "r11")
	if got := survivor.fsm.list(); len(got) != 11 || got[0] != "r1" {
		t.Fatalf("after recovery: %v", got)
	}
	if _, err := survivor.log.Blob("b7"); err != nil {
		t.Errorf("blob after recovery: %v", err)
	}
}
