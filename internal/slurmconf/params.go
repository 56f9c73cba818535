package slurmconf

import "strings"

// Params is a comma-separated list of options, each a bare word or
// word=value, as SlurmctldParameters, SlurmdParameters and the other
// *Parameters keys hold them. Keys are kept in lower case: Slurm matches
// them without regard to case (xstrcasestr).
type Params map[string]string

// ParseParams splits a *Parameters value. Blank items are skipped; a
// repeated key keeps its last value, as Slurm's later match wins.
func ParseParams(s string) Params {
	p := Params{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, _ := strings.Cut(item, "=")
		p[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	return p
}

// Has reports whether the list names key (with or without a value).
func (p Params) Has(key string) bool {
	_, ok := p[strings.ToLower(key)]
	return ok
}

// CtldParams is SlurmctldParameters parsed.
func (c *Config) CtldParams() Params { return ParseParams(c.SlurmctldParameters) }

// Configless reports whether the controller serves its files to node
// daemons and login hosts (SlurmctldParameters=enable_configless).
func (c *Config) Configless() bool { return c.CtldParams().Has("enable_configless") }
