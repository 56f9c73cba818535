package restapi_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/restapi"
)

// BenchmarkPing is GET ping/ over the unix socket from parallel clients,
// the path of the restread figure's ping rate.
func BenchmarkPing(b *testing.B) {
	c := ctltest.New(b)
	_, sock := serve(b, c, restapi.Options{TrustLoopback: true})
	client := unixClient(sock)
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Get("http://localhost/slurm/v0.0.44/ping/")
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("HTTP %d", resp.StatusCode)
				return
			}
		}
	})
}
