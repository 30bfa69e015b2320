// Command httpcheck exits 0 when a URL answers 200 within 4 seconds, else 1: the
// HEALTHCHECK of images that have no shell or wget (the collector's image is FROM scratch,
// VictoriaLogs' upstream image is distroless since v1.52.0).
package main

import (
	"fmt"
	"net/http"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: httpcheck URL")
		os.Exit(2)
	}
	client := http.Client{Timeout: 4 * time.Second}
	resp, err := client.Get(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpcheck:", err)
		os.Exit(1)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "httpcheck: %s answered %s\n", os.Args[1], resp.Status)
		os.Exit(1)
	}
}
