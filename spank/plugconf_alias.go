package spank

import "github.com/droverhq/drover/spank/plugconf"

// Entry is one plugin line of plugstack.conf (package plugconf).
type Entry = plugconf.Entry

// Info is what a command needs to know of a plugin without running it
// (package plugconf).
type Info = plugconf.Info
