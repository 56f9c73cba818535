// Command attacker is what an ordinary user can do with curl and nc,
// for the security tests: it sends an HTTP request built from files (a
// request someone captured, or one made up), or connects to a TCP port,
// writes bytes and reports what comes back. It runs as the test's
// unprivileged user on a test host.
//
//	attacker http METHOD URL BODYFILE [Header:value ...]   (BODYFILE "-": none)
//	attacker unix SOCKET METHOD URL BODYFILE [Header:value ...]
//	attacker https-ca CAFILE METHOD URL BODYFILE [Header:value ...]
//	attacker dial HOST:PORT DATAFILE                       (DATAFILE "-": none)
//
// It prints the HTTP status (or "read N bytes") on the first line, then
// what it received.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: attacker http METHOD URL BODYFILE [Header:value ...] | dial HOST:PORT DATAFILE")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "http":
		if len(os.Args) < 5 {
			os.Exit(2)
		}
		doHTTP(os.Args[2], os.Args[3], os.Args[4], os.Args[5:])
	case "dial":
		doDial(os.Args[2], os.Args[3])
	case "https-ca":
		if len(os.Args) < 6 {
			os.Exit(2)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(read(os.Args[2]))
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
		doHTTP(os.Args[3], os.Args[4], os.Args[5], os.Args[6:])
	case "unix":
		if len(os.Args) < 6 {
			os.Exit(2)
		}
		sock := os.Args[2]
		client.Transport = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}
		doHTTP(os.Args[3], os.Args[4], os.Args[5], os.Args[6:])
	default:
		os.Exit(2)
	}
}

var client = &http.Client{Timeout: 10 * time.Second}

func read(file string) []byte {
	if file == "-" {
		return nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	return data
}

func doHTTP(method, url, bodyFile string, headers []string) {
	req, err := http.NewRequest(method, url, bytes.NewReader(read(bodyFile)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println("error", err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode)
	os.Stdout.Write(body)
}

func doDial(addr, dataFile string) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		fmt.Println("error", err)
		return
	}
	defer c.Close()
	c.Write(read(dataFile))
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	got, _ := io.ReadAll(c)
	fmt.Printf("read %d bytes\n", len(got))
	os.Stdout.Write(got)
}
