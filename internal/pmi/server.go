package pmi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// Server serves the tasks of one step on one node. Each task has its own
// connection (the socket PMI_FD names); their puts are held until a
// fence, when every local task has arrived: then Fence sends this node's
// new pairs to the rest of the step and returns everyone's, and every
// task's fence returns.
type Server struct {
	// JobID is the step's PMI job id and KVS name (PMI_JOBID, "JOB.STEP").
	JobID string
	// Size is the step's task count (PMI_SIZE, the universe size).
	Size int
	// Local is how many of the step's tasks run on this node: a fence
	// completes here once that many have entered it.
	Local int
	// ProcessMapping is PMI_process_mapping (see ProcessMapping).
	ProcessMapping string
	// Fence exchanges this node's pairs (EncodePairs) for every node's
	// (their encodings one after the other). It is called once per
	// fence, when every local task has entered it.
	Fence func(ctx context.Context, local []byte) ([]byte, error)
	// Abort is told of a task's PMI abort (the node daemon ends the
	// step).
	Abort func(rank, code int, msg string)

	mu       sync.Mutex
	kvs      map[string]string
	pending  map[string]string
	nodeAttr map[string]string
	attrSet  *sync.Cond
	arrived  int
	done     chan struct{}
	fenceErr error
}

func (s *Server) init() {
	if s.kvs == nil {
		s.kvs = map[string]string{"PMI_process_mapping": s.ProcessMapping}
		s.pending = map[string]string{}
		s.nodeAttr = map[string]string{}
		s.attrSet = sync.NewCond(&s.mu)
		s.done = make(chan struct{})
	}
}

// Serve answers one task's requests until it finalizes, aborts or closes
// its end. rank is the task's rank in the step.
func (s *Server) Serve(ctx context.Context, rw io.ReadWriter, rank int) error {
	s.mu.Lock()
	s.init()
	s.mu.Unlock()
	c := &conn{r: bufio.NewReaderSize(rw, 4096), w: rw}
	for {
		m, err := c.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		stop, err := s.handle(ctx, c, m, rank)
		if err != nil || stop {
			return err
		}
	}
}

// reply builds a response: the command and "rc", then attrs.
func reply(cmd string, rc int, attrs ...Attr) Message {
	return Message{Cmd: cmd, Attrs: append([]Attr{{"rc", strconv.Itoa(rc)}}, attrs...)}
}

// replyV2 builds a PMI-2 response, whose "rc" comes last.
func replyV2(cmd string, rc int, attrs ...Attr) Message {
	return Message{Cmd: cmd, Attrs: append(attrs, Attr{"rc", strconv.Itoa(rc)})}
}

func boolWord(b bool) string {
	if b {
		return "TRUE"
	}
	return "FALSE"
}

// handle answers one request; stop ends the connection.
func (s *Server) handle(ctx context.Context, c *conn, m Message, rank int) (stop bool, err error) {
	get := func(k string) string { v, _ := m.Get(k); return v }
	itoa := strconv.Itoa
	send := func(r Message) (bool, error) { return false, c.send(r) }
	switch m.Cmd {
	// PMI-1.
	case "init":
		if get("pmi_version") == "2" {
			// MPICH's PMI-2 client starts in PMI-1 syntax.
			err := c.send(reply("response_to_init", 0, Attr{"pmi_version", "2"}, Attr{"pmi_subversion", "0"}))
			c.v2 = true
			return false, err
		}
		return send(Message{Cmd: "response_to_init", Attrs: []Attr{{"pmi_version", "1"}, {"pmi_subversion", "1"}, {"rc", "0"}}})
	case "initack":
		if err := c.send(reply("initack", 0)); err != nil {
			return false, err
		}
		for _, a := range []Attr{{"size", itoa(s.Size)}, {"rank", itoa(rank)}, {"debug", "0"}} {
			if err := c.send(Message{Cmd: "set", Attrs: []Attr{a}}); err != nil {
				return false, err
			}
		}
		return false, nil
	case "get_maxes":
		return send(reply("maxes", 0, Attr{"kvsname_max", itoa(MaxKVSName)}, Attr{"keylen_max", itoa(MaxKey)}, Attr{"vallen_max", itoa(MaxValue)}))
	case "get_universe_size":
		return send(reply("universe_size", 0, Attr{"size", itoa(s.Size)}))
	case "get_appnum":
		return send(reply("appnum", 0, Attr{"appnum", "0"}))
	case "get_my_kvsname":
		return send(reply("my_kvsname", 0, Attr{"kvsname", s.JobID}))
	case "put":
		if err := s.put(get("key"), get("value")); err != nil {
			return send(reply("put_result", -1, Attr{"msg", err.Error()}))
		}
		return send(reply("put_result", 0))
	case "get":
		if v, ok := s.lookup(get("key")); ok {
			return send(reply("get_result", 0, Attr{"value", v}))
		}
		return send(reply("get_result", -1, Attr{"msg", "key_" + get("key") + "_not_found"}))
	case "barrier_in":
		if err := s.fence(ctx); err != nil {
			return send(reply("barrier_out", -1, Attr{"msg", "fence_failed"}))
		}
		return send(reply("barrier_out", 0))
	case "finalize":
		if c.v2 {
			return true, c.send(replyV2("finalize-response", 0))
		}
		return true, c.send(reply("finalize_ack", 0))
	case "abort":
		code, err := strconv.Atoi(get("exitcode"))
		if err != nil {
			// PMI-2's abort carries a message, no code.
			code = 1
		}
		msg := fmt.Sprintf("PMI abort by task %d with exit code %d", rank, code)
		if text := get("msg"); text != "" {
			msg += ": " + text
		}
		s.abort(rank, code, msg)
		return true, nil

	// PMI-2.
	case "fullinit":
		return send(replyV2("fullinit-response", 0, Attr{"pmi-version", "2"}, Attr{"pmi-subversion", "0"},
			Attr{"rank", itoa(rank)}, Attr{"size", itoa(s.Size)}, Attr{"appnum", "0"},
			Attr{"debugged", "FALSE"}, Attr{"pmiverbose", "FALSE"}))
	case "job-getid":
		return send(replyV2("job-getid-response", 0, Attr{"jobid", s.JobID}))
	case "info-putnodeattr":
		s.mu.Lock()
		s.nodeAttr[get("key")] = get("value")
		s.attrSet.Broadcast()
		s.mu.Unlock()
		return send(replyV2("info-putnodeattr-response", 0))
	case "info-getnodeattr":
		v, ok := s.nodeAttrOf(ctx, get("key"), get("wait") == "TRUE")
		if !ok {
			return send(replyV2("info-getnodeattr-response", 0, Attr{"found", "FALSE"}))
		}
		return send(replyV2("info-getnodeattr-response", 0, Attr{"found", "TRUE"}, Attr{"value", v}))
	case "info-getjobattr":
		var v string
		switch get("key") {
		case "PMI_process_mapping":
			v = s.ProcessMapping
		case "universeSize":
			v = itoa(s.Size)
		}
		if v == "" {
			return send(replyV2("info-getjobattr-response", 0, Attr{"found", "FALSE"}))
		}
		return send(replyV2("info-getjobattr-response", 0, Attr{"found", "TRUE"}, Attr{"value", v}))
	case "kvs-put":
		if err := s.put(get("key"), get("value")); err != nil {
			return send(replyV2("kvs-put-response", -1, Attr{"errmsg", err.Error()}))
		}
		return send(replyV2("kvs-put-response", 0))
	case "kvs-fence":
		if err := s.fence(ctx); err != nil {
			return send(replyV2("kvs-fence-response", -1, Attr{"errmsg", "fence failed"}))
		}
		return send(replyV2("kvs-fence-response", 0))
	case "kvs-get":
		if v, ok := s.lookup(get("key")); ok {
			return send(replyV2("kvs-get-response", 0, Attr{"found", "TRUE"}, Attr{"value", v}))
		}
		return send(replyV2("kvs-get-response", 0, Attr{"found", "FALSE"}))
	}
	// Spawning, name publishing and the rest: refused, the task goes on.
	if c.v2 {
		return send(replyV2(m.Cmd+"-response", -1, Attr{"errmsg", "unsupported command " + m.Cmd}))
	}
	return send(reply(m.Cmd+"_result", -1, Attr{"msg", "unsupported_command"}))
}

func (s *Server) put(key, value string) error {
	if key == "" || len(key) > MaxKey || len(value) > MaxValue {
		return fmt.Errorf("invalid_key_or_value")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending[key] = value
	return nil
}

func (s *Server) lookup(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.kvs[key]; ok {
		return v, true
	}
	// A task reads its own node's puts before the fence too, as
	// Slurm's local KVS answers them.
	v, ok := s.pending[key]
	return v, ok
}

func (s *Server) nodeAttrOf(ctx context.Context, key string, wait bool) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.attrSet.Broadcast()
		s.mu.Unlock()
	})
	defer stop()
	for {
		if v, ok := s.nodeAttr[key]; ok || !wait || ctx.Err() != nil {
			return v, ok
		}
		s.attrSet.Wait()
	}
}

// fence waits until every local task has entered the fence, has the
// last one exchange the node's pairs, and returns once the exchange is
// done.
func (s *Server) fence(ctx context.Context) error {
	s.mu.Lock()
	done := s.done
	s.arrived++
	if s.arrived < s.Local {
		s.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.fenceErr
	}
	s.arrived = 0
	local := EncodePairs(s.pending)
	s.mu.Unlock()
	var all []byte
	var err error
	if s.Fence != nil {
		all, err = s.Fence(ctx, local)
	} else {
		all = local
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		err = DecodePairs(all, s.kvs)
	}
	for k, v := range s.pending {
		s.kvs[k] = v
	}
	s.pending = map[string]string{}
	s.fenceErr = err
	s.done = make(chan struct{})
	close(done)
	return err
}

func (s *Server) abort(rank, code int, msg string) {
	if s.Abort != nil {
		s.Abort(rank, code, msg)
	}
}
