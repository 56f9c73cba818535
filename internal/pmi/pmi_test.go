package pmi

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseV1(t *testing.T) {
	m, err := ParseV1("cmd=put kvsname=7.0 key=bc-3 value=a=b")
	if err != nil || m.Cmd != "put" || fmt.Sprint(m.Attrs) != "[{kvsname 7.0} {key bc-3} {value a=b}]" {
		t.Fatalf("put: %+v %v", m, err)
	}
	for _, bad := range []string{"", "put key=a", "cmd=", "cmd=put =x", "cmd=put key"} {
		if _, err := ParseV1(bad); err == nil {
			t.Errorf("ParseV1(%q) accepted", bad)
		}
	}
	if got := FormatV1(Message{Cmd: "get_result", Attrs: []Attr{{"rc", "0"}, {"value", "x"}}}); got != "cmd=get_result rc=0 value=x\n" {
		t.Errorf("FormatV1: %q", got)
	}
}

func TestV2RoundTrip(t *testing.T) {
	m := Message{Cmd: "kvs-put", Attrs: []Attr{{"key", "a;b"}, {"value", ";;x;"}}}
	wire := FormatV2(m)
	if wire[:6] != fmt.Sprintf("%-6d", len(wire)-6) {
		t.Fatalf("length field of %q", wire)
	}
	got, err := ParseV2(wire[6:])
	if err != nil || fmt.Sprint(got) != fmt.Sprint(m) {
		t.Fatalf("%q read back as %+v, %v", wire, got, err)
	}
	for _, bad := range []string{"", "cmd=x", "key=v;", "cmd=;", "=v;"} {
		if _, err := ParseV2(bad); err == nil {
			t.Errorf("ParseV2(%q) accepted", bad)
		}
	}
}

func FuzzParseV1(f *testing.F) {
	for _, s := range []string{"cmd=init pmi_version=1 pmi_subversion=1", "cmd=put kvsname=1.0 key=k value=v w", "cmd=barrier_in", "x", "cmd= a=b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseV1(s)
		if err != nil {
			return
		}
		if m.Cmd == "" || strings.ContainsAny(m.Cmd, " ") {
			t.Fatalf("%q: command %q", s, m.Cmd)
		}
	})
}

func FuzzParseV2(f *testing.F) {
	for _, s := range []string{"cmd=fullinit;pmijobid=1.0;pmirank=0;threaded=FALSE;", "cmd=kvs-put;key=a;;b;value=;;;", "cmd=x", ";;", "cmd=a;b=;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseV2(s)
		if err != nil {
			return
		}
		// What was read, written back, reads the same.
		again, err := ParseV2(FormatV2(m)[6:])
		if err != nil || fmt.Sprint(again) != fmt.Sprint(m) {
			t.Fatalf("%q -> %+v -> %+v %v", s, m, again, err)
		}
	})
}

func FuzzDecodePairs(f *testing.F) {
	f.Add(EncodePairs(map[string]string{"a": "1", "bc": ""}))
	f.Add([]byte{0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		kv := map[string]string{}
		if err := DecodePairs(b, kv); err != nil {
			return
		}
		again := map[string]string{}
		if err := DecodePairs(EncodePairs(kv), again); err != nil || !maps.Equal(kv, again) {
			t.Fatalf("%x -> %v -> %v %v", b, kv, again, err)
		}
	})
}

func TestProcessMapping(t *testing.T) {
	for _, tc := range []struct {
		nodeOf []int
		want   string
	}{
		{[]int{0, 0, 1, 1}, "(vector,(0,2,2))"},
		{[]int{0, 0, 0, 1, 1}, "(vector,(0,1,3),(1,1,2))"},
		{[]int{0, 1, 0, 1}, "(vector,(0,2,1),(0,2,1))"},
		{[]int{0}, "(vector,(0,1,1))"},
	} {
		if got := ProcessMapping(tc.nodeOf); got != tc.want {
			t.Errorf("ProcessMapping(%v) = %s, want %s", tc.nodeOf, got, tc.want)
		}
	}
}

// exchange joins the fences of several nodes' servers as srun does:
// each node's pairs, once all have arrived, go to every node.
type exchange struct {
	mu    sync.Mutex
	nodes int
	parts [][]byte
	done  chan []byte
}

func newExchange(nodes int) *exchange { return &exchange{nodes: nodes, done: make(chan []byte)} }

func (x *exchange) fence(ctx context.Context, local []byte) ([]byte, error) {
	x.mu.Lock()
	x.parts = append(x.parts, local)
	done := x.done
	if len(x.parts) == x.nodes {
		var all []byte
		for _, p := range x.parts {
			all = append(all, p...)
		}
		x.parts, x.done = nil, make(chan []byte)
		x.mu.Unlock()
		for range x.nodes - 1 {
			done <- all
		}
		return all, nil
	}
	x.mu.Unlock()
	select {
	case all := <-done:
		return all, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// client is one task's end of its PMI socket.
type client struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func (c *client) v1(req string) string {
	c.t.Helper()
	fmt.Fprintf(c.c, "%s\n", req)
	line, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Fatalf("%s: %v", req, err)
	}
	return strings.TrimSuffix(line, "\n")
}

func (c *client) v2(req string) string {
	c.t.Helper()
	fmt.Fprintf(c.c, "%-6d%s", len(req), req)
	var lenField [6]byte
	if _, err := c.r.Read(lenField[:]); err != nil {
		c.t.Fatalf("%s: %v", req, err)
	}
	var n int
	fmt.Sscan(strings.TrimSpace(string(lenField[:])), &n)
	body := make([]byte, n)
	if _, err := c.r.Read(body); err != nil {
		c.t.Fatalf("%s: %v", req, err)
	}
	return string(body)
}

// Two nodes, one task each: a PMI-1 client (MPICH's simple PMI) on one,
// a PMI-2 one on the other; each reads the other's business card after
// the fence.
func TestServerTwoNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	x := newExchange(2)
	mapping := ProcessMapping([]int{0, 1})
	var clients [2]*client
	for node := range 2 {
		srv := &Server{JobID: "7.0", Size: 2, Local: 1, ProcessMapping: mapping, Fence: x.fence}
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		go srv.Serve(ctx, a, node)
		clients[node] = &client{t: t, c: b, r: bufio.NewReader(b)}
	}
	c0, c1 := clients[0], clients[1]
	if got := c0.v1("cmd=init pmi_version=1 pmi_subversion=1"); got != "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0" {
		t.Fatalf("init: %q", got)
	}
	if got := c0.v1("cmd=get_maxes"); got != "cmd=maxes rc=0 kvsname_max=256 keylen_max=256 vallen_max=4096" {
		t.Errorf("get_maxes: %q", got)
	}
	if got := c0.v1("cmd=get_my_kvsname"); got != "cmd=my_kvsname rc=0 kvsname=7.0" {
		t.Errorf("get_my_kvsname: %q", got)
	}
	if got := c0.v1("cmd=get kvsname=7.0 key=PMI_process_mapping"); got != "cmd=get_result rc=0 value=(vector,(0,2,1))" {
		t.Errorf("process mapping: %q", got)
	}
	c0.v1("cmd=put kvsname=7.0 key=card-0 value=tcp://n1:1")
	// MPICH's PMI-2 client opens in PMI-1 syntax, then switches.
	if got := c1.v1("cmd=init pmi_version=2 pmi_subversion=0"); got != "cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0" {
		t.Fatalf("PMI-2 init: %q", got)
	}
	if got := c1.v2("cmd=fullinit;pmijobid=7.0;pmirank=1;threaded=FALSE;"); got != "cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=1;size=2;appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0;" {
		t.Fatalf("fullinit: %q", got)
	}
	c1.v2("cmd=kvs-put;key=card-1;value=tcp://n2:2;;x;")
	var wg sync.WaitGroup
	wg.Add(2)
	var out0, out1 string
	go func() { defer wg.Done(); out0 = c0.v1("cmd=barrier_in") }()
	go func() { defer wg.Done(); out1 = c1.v2("cmd=kvs-fence;") }()
	wg.Wait()
	if out0 != "cmd=barrier_out rc=0" || out1 != "cmd=kvs-fence-response;rc=0;" {
		t.Fatalf("fence: %q, %q", out0, out1)
	}
	if got := c0.v1("cmd=get kvsname=7.0 key=card-1"); got != "cmd=get_result rc=0 value=tcp://n2:2;x" {
		t.Errorf("PMI-1 get of the other node's card: %q", got)
	}
	if got := c1.v2("cmd=kvs-get;jobid=7.0;srcid=0;key=card-0;"); got != "cmd=kvs-get-response;found=TRUE;value=tcp://n1:1;rc=0;" {
		t.Errorf("PMI-2 get of the other node's card: %q", got)
	}
	if got := c1.v2("cmd=kvs-get;jobid=7.0;srcid=0;key=nosuch;"); got != "cmd=kvs-get-response;found=FALSE;rc=0;" {
		t.Errorf("PMI-2 get of nothing: %q", got)
	}
	if got := c0.v1("cmd=finalize"); got != "cmd=finalize_ack rc=0" {
		t.Errorf("finalize: %q", got)
	}
}

// A PMI abort is reported with its task and code.
func TestServerAbort(t *testing.T) {
	got := make(chan string, 1)
	srv := &Server{JobID: "1.0", Size: 1, Local: 1, Abort: func(rank, code int, msg string) { got <- msg }}
	a, b := net.Pipe()
	defer b.Close()
	go srv.Serve(context.Background(), a, 0)
	fmt.Fprintf(b, "cmd=abort exitcode=3\n")
	select {
	case msg := <-got:
		if msg != "PMI abort by task 0 with exit code 3" {
			t.Errorf("abort: %q", msg)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no abort")
	}
}
