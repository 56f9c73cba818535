// Command allreduce is a tiny distributed program for the launch-hook
// test: it knows nothing of Slurm and uses only what torch.distributed's
// env:// rendezvous reads (MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK,
// LOCAL_RANK). Rank 0 listens at MASTER_ADDR:MASTER_PORT; every other
// rank connects and sends its rank; rank 0 sums them all and sends the
// sum back, and every rank prints it.
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"
)

func main() {
	world, _ := strconv.Atoi(os.Getenv("WORLD_SIZE"))
	rank, _ := strconv.Atoi(os.Getenv("RANK"))
	local := os.Getenv("LOCAL_RANK")
	addr := net.JoinHostPort(os.Getenv("MASTER_ADDR"), os.Getenv("MASTER_PORT"))
	if world < 1 || os.Getenv("MASTER_PORT") == "" || local == "" {
		fmt.Fprintln(os.Stderr, "the launch hook did not set the rendezvous variables")
		os.Exit(2)
	}
	sum := 0
	if rank == 0 {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		sum = 0
		var peers []net.Conn
		for len(peers) < world-1 {
			c, err := ln.Accept()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			var r int
			fmt.Fscan(bufio.NewReader(c), &r)
			sum += r
			peers = append(peers, c)
		}
		for _, c := range peers {
			fmt.Fprintf(c, "%d\n", sum)
			c.Close()
		}
	} else {
		var c net.Conn
		var err error
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if c, err = net.Dial("tcp", addr); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Fprintf(c, "%d\n", rank)
		fmt.Fscan(bufio.NewReader(c), &sum)
	}
	fmt.Printf("rank %d of %d (local %s): sum %d\n", rank, world, local, sum)
}
