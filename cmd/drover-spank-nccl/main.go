// Command drover-spank-nccl is the NCCL/PyTorch launch plugin shipped
// with Drover (see spank/nccl): list it in plugstack.conf.
package main

import (
	"github.com/droverhq/drover/plugins/sdk"
	"github.com/droverhq/drover/spank/nccl"
)

func main() {
	sdk.ServeSpank(&sdk.Spank{Options: nccl.Options, TaskInit: nccl.TaskInit})
}
