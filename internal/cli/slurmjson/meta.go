package slurmjson

import (
	"strconv"
	"strings"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// CLIMeta is the meta block a command's --json output carries, as Slurm's
// data_parser_cli_meta builds it: the command line (which Slurm cuts one
// argument short, so plain "squeue --json" shows just "squeue"), the
// caller, this Slurm version and the server's cluster and accounting
// storage (from the server's own meta).
func CLIMeta(prog string, argv []string, user string, gid uint32, version string, server v0044.OptV0044OpenapiMeta) v0044.V0044OpenapiMeta {
	args := append([]string{prog}, argv...)
	command := v0044.V0044StringArray(args[:len(args)-1])
	if len(args) == 1 {
		command = v0044.V0044StringArray{prog}
	}
	plugin := v0044.V0044OpenapiMetaPlugin{
		Type:       v0044.NewOptString(""),
		Name:       v0044.NewOptString(""),
		DataParser: v0044.NewOptString("data_parser/v0.0.44"),
	}
	var cluster v0044.OptString
	if m, ok := server.Get(); ok {
		if p, ok := m.Plugin.Get(); ok {
			plugin.AccountingStorage = p.AccountingStorage
		}
		if s, ok := m.Slurm.Get(); ok {
			cluster = s.Cluster
		}
	}
	// root's group is "root"; others are shown by number, the commands
	// carrying no group database.
	group := "root"
	if gid != 0 {
		group = strconv.FormatUint(uint64(gid), 10)
	}
	major, rest, _ := strings.Cut(version, ".")
	minor, micro, _ := strings.Cut(rest, ".")
	return v0044.V0044OpenapiMeta{
		Plugin:  v0044.NewOptV0044OpenapiMetaPlugin(plugin),
		Command: command,
		Client: v0044.NewOptV0044OpenapiMetaClient(v0044.V0044OpenapiMetaClient{
			Source: v0044.NewOptString(""),
			User:   v0044.NewOptString(user),
			Group:  v0044.NewOptString(group),
		}),
		Slurm: v0044.NewOptV0044OpenapiMetaSlurm(v0044.V0044OpenapiMetaSlurm{
			Version: v0044.NewOptV0044OpenapiMetaSlurmVersion(v0044.V0044OpenapiMetaSlurmVersion{
				Major: v0044.NewOptString(major),
				Minor: v0044.NewOptString(minor),
				Micro: v0044.NewOptString(micro),
			}),
			Release: v0044.NewOptString(version),
			Cluster: cluster,
		}),
	}
}
