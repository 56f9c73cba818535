package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/sack"
)

// runAs runs a drop-in command as another user, as such a user runs it:
// with the user's credentials, over TCP (the controller's unix socket is
// in a folder only root may enter), with a credential of the host's
// credential service.
func (c *Cluster) runAs(u *user.User, prog string, args ...string) Result {
	c.t.Helper()
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	cmd := exec.Command(filepath.Join(c.shimPath, prog), args...)
	cmd.Dir = "/"
	// Over TCP, as from another host (the state folder, and the
	// controller's socket in it, are root's): the node daemon's
	// credential service vouches for the user.
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf, "DROVER_URL=http://127.0.0.1:"+strconv.Itoa(c.CtlPort), "HOME=/",
		sack.EnvSocket+"="+sack.DefaultSocket(c.Name))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	return runCmd(c.t, cmd)
}

// TestSacctmgr drives sacctmgr against a real controller: QOS, accounts
// and users added, shown, modified and deleted with Slurm's texts; a user
// who is not an operator refused until made one; a job run under what was
// added; and the changes kept across a controller restart.
func TestSacctmgr(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	expect := func(want Result, args ...string) {
		t.Helper()
		if got := c.Run("", "sacctmgr", args...); got != want {
			t.Errorf("sacctmgr %s:\n got %q\nwant %q", strings.Join(args, " "), fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want))
		}
	}
	ok := func(stdout string) Result { return Result{Stdout: stdout} }
	cl := fmt.Sprintf("%-10s", c.Name)

	// QOS.
	expect(ok(" Adding QOS(s)\n  high\n Settings\n  Description    = high\n  Preempt                  = normal\n  Priority                 = 100\n"),
		"-i", "add", "qos", "high", "Priority=100", "Preempt=normal")
	expect(ok(" Adding QOS(s)\n  low\n Settings\n  Description    = low prio\n  UsageFactor              = 0.5000\n"),
		"-i", "add", "qos", "low", "Description=Low prio", "UsageFactor=0.5")
	expect(Result{Code: 1, Stdout: " Nothing new added.\n"}, "-i", "add", "qos", "High")
	expect(ok(" Modified qos...\n  high\n"), "-i", "modify", "qos", "where", "name=high", "set", "Priority=200", "Preempt+=low")
	expect(ok("Name|Priority|Preempt|UsageFactor\nnormal|0||1.000000\nhigh|200|low,normal|1.000000\nlow|0||0.500000\n"),
		"-P", "show", "qos", "format=name,priority,preempt,usagefactor")

	// Accounts, users and their associations.
	expect(ok(" Adding Account(s)\n  physics\n Settings\n  Description     = physics\n  Organization    = science\n"+
		" Associations =\n  C = "+cl+" A = physics             \n Settings\n  Fairshare     = 10\n"),
		"-i", "add", "account", "physics", "Description=Physics", "Organization=Science", "Fairshare=10")
	expect(ok(" Associations =\n  C = "+cl+" A = physics              U = root     \n"), "-i", "add", "user", "root", "Account=physics")
	expect(ok(" Modified user associations...\n  C = "+cl+" A = physics              U = root     \n"),
		"-i", "modify", "user", "root", "where", "account=physics", "set", "QOS+=high")
	expect(ok("Account|User|Share|QOS|Def QOS\nroot||1|normal|\nroot|root|1|normal|\nphysics||10|normal|\nphysics|root|1|high,normal|\n"),
		"-P", "show", "assoc", "format=account,user,share,qos,defaultqos")
	expect(ok("      User   Def Acct     Admin \n---------- ---------- --------- \n      root       root Administ+ \n"), "show", "user")

	// A job runs under the account and QOS it asks for.
	id := c.Submit("", "-A", "physics", "--qos=high", "--wrap", "true")
	c.WaitState(id, "COMPLETED", 20*time.Second)
	if j := c.Job(id); j.Account.Value != "physics" || j.Qos.Value != "high" {
		t.Errorf("job %s: account %q qos %q", id, j.Account.Value, j.Qos.Value)
	}

	// A user who is not an operator changes nothing, until made one.
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	must(t, os.Chmod(binDir, 0o755))
	r := c.runAs(nobody, "sacctmgr", "-i", "add", "qos", "x")
	if r.Code != 1 || r.Stdout != " Adding QOS(s)\n  x\n Settings\n  Description    = x\n" || r.Stderr != " Problem adding QOS: Access/permission denied\n" {
		t.Errorf("add qos as nobody: %+v", r)
	}
	r = c.runAs(nobody, "sacctmgr", "-i", "delete", "qos", "low")
	if r.Code != 1 || r.Stderr != "sacctmgr: error: Your user doesn't have privilege to perform this action\n Error with request: Access/permission denied\n" {
		t.Errorf("delete qos as nobody: %+v", r)
	}
	if r := c.runAs(nobody, "sacctmgr", "-n", "-P", "show", "qos", "format=name"); r.Code != 0 || r.Stdout != "normal\nhigh\nlow\n" {
		t.Errorf("show qos as nobody: %+v", r)
	}
	expect(ok(" Adding User(s)\n  nobody\n Settings\n  Admin Level     = Operator\n Associations =\n  C = "+cl+" A = physics              U = nobody   \n"),
		"-i", "add", "user", "nobody", "Account=physics", "AdminLevel=Operator")
	if r := c.runAs(nobody, "sacctmgr", "-i", "add", "qos", "x"); r.Code != 0 || r.Stderr != "" {
		t.Errorf("add qos as an operator: %+v", r)
	}

	// Deletions, and their refusals.
	expect(Result{Code: 1, Stderr: " You are not allowed to remove the root account.\n Use remove cluster instead.\n"}, "-i", "delete", "account", "root")
	expect(Result{Code: 1, Stdout: " Nothing deleted\n"}, "-i", "delete", "user", "nosuch")
	expect(ok(" Deleting users...\n  nobody\n"), "-i", "delete", "user", "nobody")
	expect(ok(" Deleting QOS(s)...\n  x\n"), "-i", "delete", "qos", "x")

	// What sacctmgr changed survives the controller.
	c.KillController()
	c.StartController()
	expect(ok("Name|Priority|Preempt|UsageFactor\nnormal|0||1.000000\nhigh|200|low,normal|1.000000\nlow|0||0.500000\n"),
		"-P", "show", "qos", "format=name,priority,preempt,usagefactor")
	expect(ok("Account|User|Share|QOS|Def QOS\nroot||1|normal|\nroot|root|1|normal|\nphysics||10|normal|\nphysics|root|1|high,normal|\n"),
		"-P", "show", "assoc", "format=account,user,share,qos,defaultqos")
	expect(ok("   Account                Descr                  Org \n---------- -------------------- -------------------- \n"+
		"   physics              physics              science \n      root default root account                 root \n"), "show", "account")
}
