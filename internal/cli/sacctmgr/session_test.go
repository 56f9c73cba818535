package sacctmgr_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ogen-go/ogen/ogenerrors"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/clitest"
	"github.com/droverhq/drover/internal/cli/sacctmgr"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/restapi"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// asUser is a loopback client's identity (X-SLURM-USER-NAME).
type asUser string

func (u asUser) BearerAuth(context.Context, v0044.OperationName) (v0044.BearerAuth, error) {
	return v0044.BearerAuth{}, ogenerrors.ErrSkipClientSecurity
}

func (u asUser) Token(context.Context, v0044.OperationName) (v0044.Token, error) {
	return v0044.Token{}, ogenerrors.ErrSkipClientSecurity
}

func (u asUser) User(context.Context, v0044.OperationName) (v0044.User, error) {
	return v0044.User{APIKey: string(u)}, nil
}

// controllerRun runs sacctmgr as user against a real controller's HTTP
// front.
type controllerRun struct {
	t   *testing.T
	url string
}

func newController(t *testing.T) (*ctltest.Cluster, *controllerRun) {
	c := ctltest.New(t)
	h, err := restapi.Handler(c.Ctl, slog.New(slog.DiscardHandler), restapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return c, &controllerRun{t: t, url: srv.URL}
}

func (r *controllerRun) run(user, stdin string, args ...string) clitest.Run {
	r.t.Helper()
	cl, err := v0044.NewClient(r.url, asUser(user), v0044.WithClient(ctltest.Client()))
	if err != nil {
		r.t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := &clienv.Env{
		Prog: "sacctmgr", Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(string) string { return "" }, Now: time.Now, Client: cl,
		User: clienv.User{Name: user},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := sacctmgr.Run(ctx, env, args)
	return clitest.Run{Code: code, Stdout: out.String(), Stderr: errb.String()}
}

// step is one command of a session and what it must print.
type step struct {
	user  string // "" is root
	stdin string
	args  string // split on white space; "|" stands for a space inside a word
	want  clitest.Run
}

func (r *controllerRun) session(steps []step) {
	r.t.Helper()
	for _, s := range steps {
		var args []string
		for _, a := range strings.Fields(s.args) {
			args = append(args, strings.ReplaceAll(a, "|", " "))
		}
		user := s.user
		if user == "" {
			user = "root"
		}
		got := r.run(user, s.stdin, args...)
		if diff := cmp.Diff(s.want, got); diff != "" {
			r.t.Errorf("sacctmgr %s (-want +got):\n%s", s.args, diff)
		}
	}
}

func out(s string) clitest.Run     { return clitest.Run{Stdout: s} }
func failed(s string) clitest.Run  { return clitest.Run{Code: 1, Stdout: s} }
func refused(s string) clitest.Run { return clitest.Run{Code: 1, Stderr: s} }

// A session of sacctmgr commands against a real controller, with the
// texts of Slurm 25.11's sacctmgr and slurmdbd (checked against a real
// Slurm 22.05 with slurmdbd where the two agree).
func TestSession(t *testing.T) {
	c, r := newController(t)
	const nothingAdded = "Nothing added.\nMake sure the accounts requested here have been added to the system/cluster. (sacctmgr add account...)\n"
	r.session([]step{
		// QOS.
		{args: "-i add qos high Priority=100 Preempt=normal", want: out(" Adding QOS(s)\n  high\n Settings\n  Description    = high\n" +
			"  Preempt                  = normal\n  Priority                 = 100\n")},
		{args: "-i add qos High,Low Description=Low|prio PreemptMode=requeue UsageFactor=0.5 GraceTime=60", want: out(" Adding QOS(s)\n  low\n Settings\n" +
			"  Description    = low prio\n  GraceTime                = 60\n  PreemptMode              = REQUEUE\n  UsageFactor              = 0.5000\n")},
		{args: "-i add qos high", want: failed(" Nothing new added.\n")},
		{args: "-i add qos", want: refused(" Need name of qos to add.\n")},
		{args: "show qos format=name,priority,preempt,preemptmode,usagefactor,gracetime,descr", want: out(
			"      Name   Priority    Preempt PreemptMode UsageFactor  GraceTime                Descr \n" +
				"---------- ---------- ---------- ----------- ----------- ---------- -------------------- \n" +
				"    normal          0                cluster    1.000000   00:00:00   Normal QOS default \n" +
				"      high        100     normal     cluster    1.000000   00:00:00                 high \n" +
				"       low          0                requeue    0.500000   00:01:00             low prio \n")},
		{args: "-i modify qos where name=high set Priority=200 Preempt+=low", want: out(" Modified qos...\n  high\n")},
		{args: "-i modify qos where name=nosuch set Priority=1", want: failed("  Nothing modified\n")},
		{args: "-i modify qos where name=high", want: refused(" You didn't give me anything to set\n")},
		{args: "-i modify qos where name=high set Bogus=1", want: failed(" Unknown option: Bogus=1\n Use keyword 'where' to modify condition\n")},
		{args: "-i modify qos where bogus=high set priority=1", want: refused(" Unknown condition: bogus=high\n Use keyword 'set' to modify SLURM_PRINT_VALUE\n")},
		{args: "-i modify qos where name=high set Preempt=nosuch", want: refused("sacctmgr: error: You gave a bad qos 'nosuch'. Valid QOS's are normal,high,low\n")},
		{args: "-i modify qos high set MaxWall=60 GrpTRES=cpu=8,mem=16G MaxJobsPU=2", want: out(" Modified qos...\n  high\n")},
		{args: "show qos high format=name,maxwall,grptres,maxjobspu,grpjobs -P", want: out("Name|MaxWall|GrpTRES|MaxJobsPU|GrpJobs\nhigh|01:00:00|cpu=8,mem=16G|2|\n")},
		{args: "-i modify qos high set MaxWall=-1 GrpTRES=mem=-1 MaxJobsPU=-1", want: out(" Modified qos...\n  high\n")},
		{args: "show qos high format=name,maxwall,grptres,maxjobspu -P", want: out("Name|MaxWall|GrpTRES|MaxJobsPU\nhigh||cpu=8|\n")},
		{args: "-i modify qos high set GrpTRESMins=cpu=10 GrpWall=2-0", want: out(" Modified qos...\n  high\n")},
		{args: "show qos high format=name,grptresmins,grpwall -P", want: out("Name|GrpTRESMins|GrpWall\nhigh|cpu=10|2-00:00:00\n")},
		{args: "-i modify qos high set GrpJobsAccrue=3", want: refused("sacctmgr: error: GrpJobsAccrue=3 is not supported by Drover's accounting\n")},
		{args: "-i modify qos high set GrpTRES=cpu=-1", want: out(" Modified qos...\n  high\n")},
		// Flags, as sacctmgr 22.05 reads and prints them.
		{args: "-i add qos flagged Flags=nodecay,DenyOnLimit", want: out(" Adding QOS(s)\n  flagged\n Settings\n  Description    = flagged\n" +
			"  Flags                    = DenyOnLimit,NoDecay\n")},
		{args: "-i modify qos flagged set Flags+=OverPartQOS", want: out(" Modified qos...\n  flagged\n")},
		{args: "show qos flagged format=name,flags%40 -P", want: out("Name|Flags\nflagged|DenyOnLimit,OverPartQOS,NoDecay\n")},
		{args: "-i modify qos flagged set Flags=-NoDecay", want: out(" Modified qos...\n  flagged\n")},
		{args: "show qos flagged format=flags -P -n", want: out("DenyOnLimit,OverPartQOS\n")},
		{args: "-i modify qos flagged set Flags=bogus", want: failed(" Unknown QOS flag used in:\n  'bogus'\n Valid QOS flags are\n" +
			"  'DenyOnLimit,EnforceUsageThreshold,NoReserve,PartitionMaxNodes,PartitionMinNodes,OverPartQOS,PartitionTimeLimit,RequiresReservation,NoDecay,UsageFactorSafe'\n")},
		{args: "-i modify qos flagged set Flags=NoReserve", want: refused("sacctmgr: error: Flags=NoReserve is not supported by Drover's accounting\n")},
		{args: "-i modify qos flagged set Flags=-1", want: out(" Modified qos...\n  flagged\n")},
		{args: "show qos flagged format=flags -P -n", want: out("\n")},
		{args: "-i delete qos flagged", want: out(" Deleting QOS(s)...\n  flagged\n")},
		{args: "show qos format=name,priority,preempt", want: out("      Name   Priority    Preempt \n---------- ---------- ---------- \n" +
			"    normal          0            \n      high        200 low,normal \n       low          0            \n")},

		// Accounts.
		{args: "-i add account physics Parent=root Description=Physics|Dept Organization=Science Fairshare=10", want: out(
			" Adding Account(s)\n  physics\n Settings\n  Description     = physics dept\n  Organization    = science\n" +
				" Associations =\n  C = testcluster A = physics             \n Settings\n  Fairshare     = 10\n  Parent        = root\n")},
		{args: "-i add account chem,bio", want: out(" Adding Account(s)\n  chem\n  bio\n Settings\n  Description     = Account Name\n" +
			"  Organization    = Parent/Account Name\n Associations =\n  C = testcluster A = chem                \n  C = testcluster A = bio                 \n")},
		{args: "-i add account physics", want: failed(" Already existing account physics on cluster testcluster\n")},
		{args: "-i add account sub Parent=nosuch", want: refused(" error: No parent account 'nosuch' on cluster 'testcluster'\n")},
		{args: "-i add account", want: refused(" Need name of account to add.\n")},
		{args: "show account", want: out("   Account                Descr                  Org \n---------- -------------------- -------------------- \n" +
			"       bio                  bio                  bio \n      chem                 chem                 chem \n" +
			"   physics         physics dept              science \n      root default root account                 root \n")},

		// Users.
		{args: "-i add user Alice Account=physics DefaultAccount=physics AdminLevel=Operator", want: out(
			" Adding User(s)\n  alice\n Settings\n  Default Account = physics\n  Admin Level     = Operator\n" +
				" Associations =\n  C = testcluster A = physics              U = alice    \n")},
		{args: "-i add user bob Account=physics,chem Fairshare=2", want: out(" Adding User(s)\n  bob\n Settings\n Associations =\n" +
			"  C = testcluster A = physics              U = bob      \n  C = testcluster A = chem                 U = bob      \n" +
			" Non Default Settings\n  Fairshare     = 2\n")},
		{args: "-i add user bob Account=physics", want: failed("Request didn't affect anything\n" + nothingAdded)},
		{args: "-i add user carol Account=nosuch", want: failed("No account nosuch on cluster testcluster, skipping.\n" + nothingAdded)},
		{args: "-i add user dave", want: refused(" Need name of account or wckey to add.\n")},
		{args: "show user", want: out("      User   Def Acct     Admin \n---------- ---------- --------- \n" +
			"     alice    physics  Operator \n       bob    physics      None \n      root       root Administ+ \n")},
		{args: "-i modify user alice set DefaultQOS=high QOS+=high", want: out(" Modified user associations...\n" +
			"  C = testcluster A = physics              U = alice    \n")},
		{args: "show assoc format=account,user,share,qos,defaultqos,priority where user=alice,bob", want: out(
			"   Account       User     Share                  QOS   Def QOS   Priority \n" +
				"---------- ---------- --------- -------------------- --------- ---------- \n" +
				"      chem        bob         2               normal                      \n" +
				"   physics      alice         1          high,normal      high            \n" +
				"   physics        bob         2               normal                      \n")},
		{args: "-i modify user where name=alice set DefaultAccount=chem", want: failed(" Modified users...\n" +
			" Can't modify because these users aren't associated with new default account 'chem'...\n  U = alice C = testcluster\n")},
		{args: "-i modify user bob set DefaultAccount=chem AdminLevel=Operator", want: out(" Modified users...\n  bob\n")},
		{args: "-i modify user nosuch set AdminLevel=None", want: failed(" Modified users...\n  Nothing modified\n")},
		{args: "-i modify user set AdminLevel=None", want: failed(" Modified users...\n  Nothing modified\n")},
		{args: "-i modify user where name=bob set priority=3", want: out(" Modified user associations...\n" +
			"  C = testcluster A = chem                 U = bob      \n  C = testcluster A = physics              U = bob      \n")},
		{args: "-P show user withassoc format=user,defaultaccount,admin,account,priority", want: out("User|Def Acct|Admin|Account|Priority\n" +
			"alice|physics|Operator|physics|\nbob|chem|Operator|chem|3\nbob|chem|Operator|physics|3\nroot|root|Administrator|root|\n")},
		{args: "-i modify account physics set description=Phys organization=sci", want: out(" Modified accounts...\n  physics\n")},
		{args: "-i modify account where name=physics set fairshare=20", want: out(" Modified account associations...\n  C = testcluster A = physics of root\n")},
		{args: "-i modify account where name=chem set parent=physics", want: out(" Modified account associations...\n  C = testcluster A = chem of root\n")},
		{args: "-P show assoc format=account,user,share,parentname,lineage", want: out("Account|User|Share|ParentName|Lineage\n" +
			"root||1||/\nroot|root|1||/0-root/\nbio||1|root|/bio/\nphysics||20|root|/physics/\nphysics|alice|1||/physics/0-alice/\n" +
			"physics|bob|2||/physics/0-bob/\nchem||1|physics|/physics/chem/\nchem|bob|2||/physics/chem/0-bob/\n")},
		{args: "-P show account withassoc format=account,descr,user,share where name=physics", want: out("Account|Descr|User|Share\n" +
			"physics|phys||20\nphysics|phys|alice|1\nphysics|phys|bob|2\n")},

		// Refusals and deletions.
		{user: "nobody", args: "-i add qos x", want: clitest.Run{Code: 1, Stdout: " Adding QOS(s)\n  x\n Settings\n  Description    = x\n",
			Stderr: " Problem adding QOS: Access/permission denied\n"}},
		{user: "nobody", args: "-i modify qos low set priority=1", want: refused("sacctmgr: error: Your user doesn't have privilege to perform this action\n" +
			" Error with request: Access/permission denied\n")},
		{user: "nobody", args: "-i delete user bob", want: refused("sacctmgr: error: Your user doesn't have privilege to perform this action\n" +
			" Error with request: Access/permission denied\n")},
		{user: "nobody", args: "-i modify user bob set adminlevel=operator", want: clitest.Run{Code: 1, Stdout: " Modified users...\n",
			Stderr: "sacctmgr: error: Your user doesn't have privilege to perform this action\n Error with request: Access/permission denied\n"}},
		{user: "nobody", args: "-i modify account bio set fairshare=3", want: clitest.Run{Code: 1, Stdout: " Modified account associations...\n",
			Stderr: "sacctmgr: error: Your user doesn't have privilege to perform this action\n Error with request: Access/permission denied\n"}},
		{user: "nobody", args: "-i add user nobody account=bio", want: refused(" error: Problem adding user associations: Access/permission denied" +
			" (Only admins/operators/coordinators can add accounts)\n")},
		{user: "nobody", args: "-P show qos format=name", want: out("Name\nnormal\nhigh\nlow\n")},
		{args: "-i delete user nosuch", want: failed(" Nothing deleted\n")},
		{args: "-i delete user", want: refused(" No conditions given to remove, not executing.\n")},
		{args: "-i delete account root", want: refused(" You are not allowed to remove the root account.\n Use remove cluster instead.\n")},
		{args: "-i delete qos high", want: refused(" Associations listed below have these as their Default QOS.\n" +
			"  DefQOS = high       C = testcluster A = physics              U = alice    \n" +
			" Please either remove the qos' listed above from list and resubmit,\n or change the default qos to remove the qos.\n Changes Discarded\n")},
		{args: "-i delete qos nosuch", want: failed("  Nothing deleted\n")},
		{args: "-i delete user where name=alice account=physics", want: refused(" Error with request: You can not remove the default account of a user\n" +
			"  C = testcluster A = physics    U = alice    \n You must change the default account of these users or remove the users completely from the affected clusters to allow these changes.\n Changes Discarded\n")},
		{args: "-i delete user where name=bob account=physics", want: out(" Deleting user associations...\n  C = testcluster A = physics    U = bob      \n")},
		{args: "-i delete user alice", want: out(" Deleting users...\n  alice\n")},
		{args: "-i delete qos high", want: out(" Deleting QOS(s)...\n  high\n")},
		{args: "-i delete account bio", want: out(" Deleting accounts...\n  bio\n")},

		// Without -i, sacctmgr asks; without an answer it discards.
		{args: "modify qos where name=low set priority=5", want: out(" Modified qos...\n  low\n" +
			"Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): \nerror: Inappropriate ioctl for device\n Changes Discarded\n")},
		{stdin: "n\n", args: "modify qos where name=low set priority=6", want: out(" Modified qos...\n  low\n" +
			"Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): \n Changes Discarded\n")},
		{stdin: "xy", args: "modify qos where name=low set priority=7", want: out(" Modified qos...\n  low\n" +
			"Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): \nY or N please\n(N/y): \n")},
		{args: "-n show qos format=name,priority where name=low", want: out("       low          7 \n")},
	})

	// What sacctmgr changed is the controller's durable state.
	c.Restart()
	h, err := restapi.Handler(c.Ctl, slog.New(slog.DiscardHandler), restapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	r2 := &controllerRun{t: t, url: srv.URL}
	r2.session([]step{
		{args: "-P -n show qos format=name,priority,preempt", want: out("normal|0|\nlow|7|\n")},
		{args: "-P -n show assoc format=account,user,share", want: out("root||1\nroot|root|1\nphysics||20\nchem||1\nchem|bob|2\n")},
	})
}
