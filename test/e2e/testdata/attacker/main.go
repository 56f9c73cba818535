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
//	attacker session SOCKET FORGE METHOD URL BODYFILE
//
// session asks the host's credential service at SOCKET for a session, as
// any local program may, and signs the request with the session's key:
// as it is (FORGE "own"), with the session's description rewritten to
// name root ("root"), or as a node daemon's token ("daemon").
//
// It prints the HTTP status (or "read N bytes") on the first line, then
// what it received.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
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
	case "session":
		if len(os.Args) < 7 {
			os.Exit(2)
		}
		doSession(os.Args[2], os.Args[3], os.Args[4], os.Args[5], os.Args[6])
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

func doSession(socket, forge, method, url, bodyFile string) {
	conn, err := net.Dial("unix", socket)
	if err != nil {
		fmt.Println("error", err)
		return
	}
	defer conn.Close()
	conn.Write([]byte(`{"op":"session"}` + "\n"))
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		fmt.Println("error", err)
		return
	}
	var reply struct {
		Session struct {
			Desc string `json:"desc"`
			Kid  string `json:"kid"`
			Key  []byte `json:"key"`
			Iss  string `json:"iss"`
		} `json:"session"`
	}
	if err := json.Unmarshal(line, &reply); err != nil || reply.Session.Desc == "" {
		fmt.Printf("error no session: %s", line)
		return
	}
	ses := reply.Session
	body := read(bodyFile)
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	sum := sha256.Sum256(body)
	now := time.Now()
	claims := jwt.MapClaims{
		"iss": ses.Iss, "aud": []string{"slurmctld"}, "iat": now.Unix(), "exp": now.Add(30 * time.Second).Unix(),
		"jti": fmt.Sprint(now.UnixNano()), "knd": "user", "req": method + " " + req.URL.RequestURI(),
		"bh": base64.RawURLEncoding.EncodeToString(sum[:]), "ses": ses.Desc,
	}
	switch forge {
	case "root":
		raw, _ := base64.RawURLEncoding.DecodeString(ses.Desc)
		desc := map[string]any{}
		json.Unmarshal(raw, &desc)
		desc["uid"], desc["gid"], desc["sun"] = 0, 0, "root"
		raw, _ = json.Marshal(desc)
		claims["ses"] = base64.RawURLEncoding.EncodeToString(raw)
	case "daemon":
		claims["knd"], claims["iss"] = "daemon", "slurmd:n2"
	}
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
	t.Header["kid"] = ses.Kid
	tok, err := t.SignedString(ses.Key)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	req.Header.Set("X-Drover-Auth", tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println("error", err)
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode)
	os.Stdout.Write(out)
}
