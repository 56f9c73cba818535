package squeue

import (
	"fmt"
	"io"
	"strings"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/jobfmt"
	"github.com/droverhq/drover/internal/cli/slurmjson"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// printJSON writes the v0.0.44 job list response for the jobs that pass
// squeue's filters, in the controller's order and unfolded, as squeue
// --json does, laid out as Slurm's serializer writes it. The meta block
// describes this command, not the server.
func (q *queue) printJSON(resp *v0044.V0044OpenapiJobInfoResp) error {
	now := q.env.Now()
	out := *resp
	out.Jobs = nil
	for i := range resp.Jobs {
		j := jobfmt.FromV0044(&resp.Jobs[i])
		if q.keep(&j, now) && q.keepPartition(j.Partition) {
			out.Jobs = append(out.Jobs, resp.Jobs[i])
		}
	}
	if out.Jobs == nil {
		out.Jobs = v0044.V0044JobInfoMsg{}
	}
	out.Meta = v0044.NewOptV0044OpenapiMeta(q.meta(resp.Meta))
	out.Errors = v0044.V0044OpenapiErrors{}
	out.Warnings = v0044.V0044OpenapiWarnings{}

	// Slurm's serializer: the data parser's member order, "\/", and its
	// layout of empty arrays.
	text, err := slurmjson.Format(&out, slurmjson.JobInfoResp)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(q.env.Stdout, text); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// meta builds the CLI meta block as Slurm's data_parser_cli_meta does: the
// command line (which Slurm cuts one argument short, so plain
// "squeue --json" shows just "squeue"), the caller, this Slurm version and
// the server's cluster and accounting storage.
func (q *queue) meta(server v0044.OptV0044OpenapiMeta) v0044.V0044OpenapiMeta {
	args := append([]string{q.env.Prog}, q.opts.argv...)
	command := v0044.V0044StringArray(args[:len(args)-1])
	if len(args) == 1 {
		command = v0044.V0044StringArray{q.env.Prog}
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
	major, rest, _ := strings.Cut(clienv.SlurmVersion, ".")
	minor, micro, _ := strings.Cut(rest, ".")
	return v0044.V0044OpenapiMeta{
		Plugin:  v0044.NewOptV0044OpenapiMetaPlugin(plugin),
		Command: command,
		Client: v0044.NewOptV0044OpenapiMetaClient(v0044.V0044OpenapiMetaClient{
			Source: v0044.NewOptString(""),
			User:   v0044.NewOptString(q.env.User.Name),
			Group:  v0044.NewOptString(q.groupName()),
		}),
		Slurm: v0044.NewOptV0044OpenapiMetaSlurm(v0044.V0044OpenapiMetaSlurm{
			Version: v0044.NewOptV0044OpenapiMetaSlurmVersion(v0044.V0044OpenapiMetaSlurmVersion{
				Major: v0044.NewOptString(major),
				Minor: v0044.NewOptString(minor),
				Micro: v0044.NewOptString(micro),
			}),
			Release: v0044.NewOptString(clienv.SlurmVersion),
			Cluster: cluster,
		}),
	}
}

// groupName is the caller's group as the meta block shows it: root's group
// is "root"; others are shown by number, the environment carrying no group
// database.
func (q *queue) groupName() string {
	if q.env.User.GID == 0 {
		return "root"
	}
	return utoa(q.env.User.GID)
}
