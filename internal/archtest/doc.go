// Package archtest holds the tests of the rules docs/DESIGN.md sets for
// the shape of the code, read from the import graph as `go vet` reads
// source: where the generated wire types may appear, which packages stay
// free of I/O, and what the commands may link. It has no code of its own.
package archtest
