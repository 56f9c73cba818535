package restapi_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/restapi"
)

// BenchmarkPing is GET ping/ over the unix socket from parallel clients,
// the path of the restread figure's ping rate.
func BenchmarkPing(b *testing.B) {
	c := ctltest.New(b)
	_, sock := serve(b, c, restapi.Options{})
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

// BenchmarkJobList is GET jobs/ over 10,000 held jobs on the unix socket,
// the path of the restread figure's listing.
func BenchmarkJobList(b *testing.B) {
	c := ctltest.New(b)
	for range 10_000 {
		if _, err := c.Ctl.Submit(context.Background(), ctltest.Alice, controller.Submission{Req: ctltest.Request(), Hold: true}); err != nil {
			b.Fatal(err)
		}
	}
	_, sock := serve(b, c, restapi.Options{})
	client := unixClient(sock)
	b.ResetTimer()
	for range b.N {
		resp, err := client.Get("http://localhost/slurm/v0.0.44/jobs/")
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		b.SetBytes(n)
	}
}
