package controller

import (
	"context"
	"strings"

	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/internal/slurmerr"
)

// Dynamic nodes are made at run time, as Slurm's are: by an administrator
// (scontrol create NodeName=..., REST new/node) or by a node daemon that
// registers with a definition of its own (slurmd -Z). The state log keeps
// their definitions, so that every controller replaying it knows them;
// they join the partitions whose Nodes= is ALL or names a NodeSet whose
// Feature they have.

// CreateNodes is scontrol create NodeName=... and REST new/node: line is
// a NodeName line whose State= is FUTURE or CLOUD. The nodes become usable
// when their daemons register. Only root, SlurmUser and administrators may.
func (c *Controller) CreateNodes(ctx context.Context, who Identity, line string) ([]string, error) {
	if err := c.requireSuperUser(who, "CREATE_NODE"); err != nil {
		return nil, err
	}
	nodes, err := parseNodeLine(line)
	if err != nil {
		return nil, err
	}
	return c.addDynNodes(ctx, nodes)
}

// parseNodeLine reads a NodeName line given at run time.
func parseNodeLine(line string) ([]node.Node, error) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(strings.ToLower(line), "nodename=") {
		line = "NodeName=" + line
	}
	parsed, err := slurmconf.ParseNodeLine(line)
	if err != nil {
		return nil, slurmerr.New(slurmerr.Unspecified, "Failed to parse nodeline '%s': %v", line, err)
	}
	var out []node.Node
	for i := range parsed {
		n := &parsed[i]
		if n.State != slurmconf.NodeStateFuture && n.State != slurmconf.NodeStateCloud {
			return nil, slurmerr.New(slurmerr.InvalidNodeState, "Only State=FUTURE or CLOUD allowed for nodes created by scontrol")
		}
		nd, err := nodeFromConf(n)
		if err != nil {
			return nil, slurmerr.New(slurmerr.Unspecified, "%v", err)
		}
		// Until its daemon registers, as slurmctld keeps a FUTURE node.
		nd.Future = true
		out = append(out, nd)
	}
	return out, nil
}

// addDynNodes commits new dynamic nodes after checking their names are
// free and MaxNodeCount leaves room.
func (c *Controller) addDynNodes(ctx context.Context, nodes []node.Node) ([]string, error) {
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	c.mu.RLock()
	var taken []string
	for _, name := range names {
		if c.nodes[name] != nil {
			taken = append(taken, name)
		}
	}
	total := len(c.nodes) + len(nodes)
	c.mu.RUnlock()
	if len(taken) > 0 {
		return nil, slurmerr.New(slurmerr.NodeAlreadyExists, "Node %s already exists", hostlist.Compress(taken))
	}
	if limit := c.cfg.MaxNodeCount; limit > 0 && total > max(limit, len(c.cfg.Nodes)) {
		return nil, slurmerr.New(slurmerr.NodeTableFull, "MaxNodeCount=%d leaves no room for %s", limit, hostlist.Compress(names))
	}
	if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpNodeCreate, NodeCreate: &ctlstate.NodeCreateCmd{Nodes: nodes}}); err != nil {
		return nil, err
	}
	c.logger.Info("dynamic nodes created", "nodes", hostlist.Compress(names))
	return names, nil
}

// DeleteNodes is scontrol delete NodeName= and REST DELETE node: only
// dynamic nodes, and none that runs a job or belongs to a reservation,
// as slurmctld's delete_nodes. Each node that cannot go is named in the
// error; the others go.
func (c *Controller) DeleteNodes(ctx context.Context, who Identity, expr string) error {
	if err := c.requireSuperUser(who, "DELETE_NODE"); err != nil {
		return err
	}
	names, err := hostlist.Expand(expr)
	if err != nil || len(names) == 0 {
		return slurmerr.New(slurmerr.InvalidNodeName, "Invalid node name specified: %s", expr)
	}
	var gone, failed []string
	code := slurmerr.NoError
	fail := func(name string, why slurmerr.Code) {
		failed = append(failed, name)
		if code == slurmerr.NoError {
			code = why
		}
	}
	c.mu.RLock()
	used := c.usageLocked()
	reserved := map[string]bool{}
	for _, r := range c.st.Resvs {
		for _, n := range r.Nodes {
			reserved[n] = true
		}
	}
	for _, name := range names {
		switch {
		case c.nodes[name] == nil:
			fail(name, slurmerr.InvalidNodeName)
		case c.st.DynNodes[name] == nil:
			c.logger.Error("can't delete non-dynamic node", "node", name)
			fail(name, slurmerr.InvalidNodeState)
		case used[name].Jobs > 0 || reserved[name]:
			fail(name, slurmerr.NodesBusy)
		default:
			gone = append(gone, name)
		}
	}
	c.mu.RUnlock()
	if len(gone) > 0 {
		if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpNodeDelete, NodeDelete: &ctlstate.NodeDeleteCmd{Names: gone}}); err != nil {
			return err
		}
		c.logger.Info("dynamic nodes deleted", "nodes", hostlist.Compress(gone))
	}
	if len(failed) > 0 {
		return slurmerr.New(code, "failed to delete nodes %s", hostlist.Compress(failed))
	}
	return nil
}

// registerDynamic makes the node a daemon registers with a definition of
// its own, as slurmctld's create_dynamic_reg_node: known names keep
// their definition.
func (c *Controller) registerDynamic(ctx context.Context, name, conf string) error {
	c.mu.RLock()
	known := c.nodes[name] != nil
	c.mu.RUnlock()
	if known {
		return nil
	}
	nodes, err := parseNodeLine("NodeName=" + name + " " + conf + " State=FUTURE")
	if err != nil {
		return err
	}
	if len(nodes) != 1 || nodes[0].Name != name {
		return slurmerr.New(slurmerr.InvalidNodeName, "a dynamic node registers one node, %s", name)
	}
	_, err = c.addDynNodes(ctx, nodes)
	if slurmerr.CodeOf(err) == slurmerr.NodeAlreadyExists {
		return nil // registered twice at once
	}
	return err
}

// dynamicNodeLocked reports whether name was made at run time.
func (c *Controller) dynamicNodeLocked(name string) bool { return c.st.DynNodes[name] != nil }
