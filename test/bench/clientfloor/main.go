// Command clientfloor is the floor under every command's start-up: a
// program that links the generated slurmrestd client, as every command
// must (the commands speak to the controller through it alone), and does
// nothing else. Its start-up is the package initialisers the client
// brings (ogen's runtime: validators' regular expressions, decimal
// constants, the OpenAPI and YAML packages ogenerrors imports) on top of
// a hello-world's.
package main

import (
	"fmt"

	_ "github.com/droverhq/drover/openapi/v0044"
)

func main() { fmt.Println("hello") }
