// Command conformance runs a conformance list (clients/conformance-format.md) through the Go client.
//
//	go run ./cmd/conformance ../../docs/test-vectors/conformance.json
package main

import (
	"fmt"
	"os"

	licenceclient "licence-server.example/client"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: conformance CASES.json")
		os.Exit(2)
	}
	document, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	failures, total, err := licenceclient.RunConformance(document)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for _, failure := range failures {
		fmt.Println("FAIL " + failure)
	}
	fmt.Printf("%d of %d conformance cases pass\n", total-len(failures), total)
	if len(failures) > 0 {
		os.Exit(1)
	}
}
