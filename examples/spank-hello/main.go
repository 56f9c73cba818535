// Command spank-hello is an example of a third-party Drover plugin: a
// SPANK-like plugin that adds --hello=NAME to sbatch, srun and salloc and
// greets from every task through the HELLO variable. Build it on its own
// (it needs only Drover's plugins/sdk) and list it in plugstack.conf:
//
//	optional /usr/local/lib/drover/spank-hello greeting=Hi
package main

import (
	"fmt"
	"strings"

	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/plugins/sdk"
)

func main() {
	sdk.ServeSpank(&sdk.Spank{
		Options: func([]string) []protocol.Option {
			return []protocol.Option{{Name: "hello", ArgInfo: "name", Usage: "greet name from every task", HasArg: true}}
		},
		TaskInit: func(c *sdk.Context) error {
			name, ok := c.Option("hello")
			if !ok {
				return nil
			}
			if name == "" {
				return fmt.Errorf("--hello needs a name")
			}
			greeting := "hello"
			for _, a := range c.Args {
				if v, ok := strings.CutPrefix(a, "greeting="); ok {
					greeting = v
				}
			}
			sdk.Logger().Debug("greeting", "task", c.TaskID, "name", name)
			return c.Setenv("HELLO", fmt.Sprintf("%s %s from task %d", greeting, name, c.TaskID), false)
		},
	})
}
