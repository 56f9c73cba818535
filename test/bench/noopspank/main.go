// Command noopspank is a SPANK plugin that does nothing in task_init, so
// that the plugins figure measures what a plugin call per task costs.
package main

import "github.com/droverhq/drover/plugins/sdk"

func main() {
	sdk.ServeSpank(&sdk.Spank{TaskInit: func(*sdk.Context) error { return nil }})
}
