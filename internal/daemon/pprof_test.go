package daemon

import "testing"

func TestPprofLoopbackOnly(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:6060": true, "[::1]:0": true, "localhost:6060": true,
		":6060": false, "0.0.0.0:6060": false, "10.1.2.3:6060": false, "node1:6060": false, "6060": false} {
		if err := loopbackOnly(addr); (err == nil) != ok {
			t.Errorf("loopbackOnly(%q) = %v", addr, err)
		}
	}
}
