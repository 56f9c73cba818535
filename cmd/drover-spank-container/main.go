// Command drover-spank-container is the container plugin shipped with
// Drover (see spank/container): list it last in plugstack.conf, after the
// plugins whose variables the tasks need, e.g.
//
//	optional drover-spank-container runtime=runc
package main

import (
	"github.com/droverhq/drover/plugins/sdk"
	"github.com/droverhq/drover/spank/container"
)

func main() {
	sdk.ServeSpank(container.Plugin())
}
