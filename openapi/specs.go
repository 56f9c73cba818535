package openapi

import (
	"embed"
	"fmt"
)

//go:embed spec/slurmrestd-v0.0.*.json
var specs embed.FS

// Spec returns the upstream OpenAPI document of an API version ("v0.0.42").
func Spec(version string) ([]byte, error) {
	b, err := specs.ReadFile("spec/slurmrestd-" + version + ".json")
	if err != nil {
		return nil, fmt.Errorf("no OpenAPI document for %s: %w", version, err)
	}
	return b, nil
}
