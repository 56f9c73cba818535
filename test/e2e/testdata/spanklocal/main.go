// Command spanklocal is a test plugin with stages in the commands' own
// contexts: init_post_opt marks the environment with its context,
// local_user_init with the step srun created, and exit appends the
// context and job id to the file its exitfile= argument names.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/plugins/sdk"
)

func main() {
	sdk.ServeSpank(&sdk.Spank{
		InitPostOpt: func(c *sdk.Context) error {
			return c.Setenv("SPANK_LOCAL_SEEN", c.Context+":"+c.Stage, false)
		},
		LocalUserInit: func(c *sdk.Context) error {
			return c.Setenv("SPANK_LOCAL_STEP", fmt.Sprintf("%d.%d", c.JobID, c.StepID), true)
		},
		Exit: func(c *sdk.Context) error {
			if c.Context == protocol.ContextRemote {
				return nil
			}
			for _, a := range c.Args {
				if path, ok := strings.CutPrefix(a, "exitfile="); ok {
					f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
					if err != nil {
						return err
					}
					defer f.Close()
					_, err = fmt.Fprintf(f, "%s %d\n", c.Context, c.JobID)
					return err
				}
			}
			return nil
		},
	})
}
