package licenceclient

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const consumerApp = `package main

import (
	"fmt"
	"os"

	licenceclient "licence-server.example/client"
)

func main() {
	document, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	failures, total, err := licenceclient.RunConformance(document)
	if err != nil {
		panic(err)
	}
	fmt.Println(total, len(failures))
}
`

// The module as a vendor uses it: another module requires it through a replace directive, with no module proxy.
func TestModuleBuildsInAnotherApplication(t *testing.T) {
	here, _ := filepath.Abs(".")
	app := t.TempDir()
	goMod := "module example.com/app\n\ngo 1.19\n\nrequire licence-server.example/client v0.1.0\n\nreplace licence-server.example/client => " + here + "\n"
	if err := os.WriteFile(filepath.Join(app, "go.mod"), []byte(goMod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "main.go"), []byte(consumerApp), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "run", ".", filepath.Join(here, "..", "..", "docs", "test-vectors", "conformance.json"))
	run.Dir = app
	run.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local", "GOWORK=off")
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	fields := strings.Fields(string(out))
	if len(fields) != 2 || fields[0] == "0" || fields[1] != "0" {
		t.Fatalf("the application ran %q", out)
	}
}
