package jobopts

import (
	"fmt"
	"strings"
)

// pluginDefs turns the plugins' options into option definitions, leaving
// out those whose names the command's own options (or earlier plugins')
// already take.
func (p *Parser) pluginDefs(own []*optDef) []*optDef {
	taken := map[string]bool{}
	for _, d := range own {
		taken[d.long] = true
	}
	var out []*optDef
	for _, o := range p.cfg.PluginOptions {
		if o.Name == "" || taken[o.Name] {
			continue
		}
		taken[o.Name] = true
		arg := noArgument
		if o.HasArg {
			arg = requiredArgument
		}
		out = append(out, &optDef{
			spec:    spec{long: o.Name, arg: arg, id: "spank/" + o.Plugin + "/" + o.Name},
			argName: o.ArgInfo, usage: o.Usage, hidden: true,
			set: func(p *Parser, v string, _ bool) error {
				p.opts.PluginValues = append(p.opts.PluginValues, PluginValue{Plugin: o.Plugin, Name: o.Name, Value: v})
				return nil
			},
			reset: func(o *Options) { o.PluginValues = nil },
		})
	}
	return out
}

// pluginHelp is spank_print_options' section of --help: each option from
// column 7, its usage from column 31, wrapped to 80 columns.
func (p *Parser) pluginHelp() string {
	var b strings.Builder
	for _, d := range p.defs {
		if !strings.HasPrefix(d.id, "spank/") {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\nOptions provided by plugins:\n")
		}
		info := "      --" + d.long
		if d.argName != "" {
			info += "=" + d.argName
		}
		lines := wrapWords(d.usage, 80-helpColumn)
		if len(lines) == 0 {
			lines = []string{""}
		}
		if len(info) < helpColumn {
			fmt.Fprintf(&b, "%-*s%s\n", helpColumn, info, lines[0])
		} else {
			fmt.Fprintf(&b, "\n%s\n%*s%s\n", info, helpColumn, "", lines[0])
		}
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "%*s%s\n", helpColumn, "", l)
		}
	}
	return b.String()
}

// wrapWords splits text into lines of at most width characters, at
// spaces.
func wrapWords(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
