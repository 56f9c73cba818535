package conf

import (
	"strconv"
	"strings"
)

// String writes the line back in gres.conf syntax, one line, keys in
// gres.conf(5)'s order: [NodeName= [AutoDetect=]] Name= [Type=] [File= |
// MultipleFiles=] [Count=] [Cores=] [Links=] [Flags=]. File ranges come out
// expanded ("File=/dev/nvidia0,/dev/nvidia1"), Count only when it differs
// from what the files imply, '\' and '#' escaped and values with blanks
// quoted, so that parsing the text gives the same Line back.
func (l Line) String() string {
	var b strings.Builder
	kv := func(k, v string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(formatValue(v))
	}
	if l.NodeName != "" {
		kv("NodeName", l.NodeName)
		if l.AutoDetect != AutoDetectUnset {
			kv("AutoDetect", l.AutoDetect.String())
		}
	}
	kv("Name", l.Name)
	if l.Type != "" {
		kv("Type", l.Type)
	}
	implied := uint64(1)
	if len(l.Files) > 0 {
		key := "File"
		if l.MultipleFiles {
			key = "MultipleFiles"
		} else {
			implied = uint64(len(l.Files))
		}
		kv(key, strings.Join(l.Files, ","))
	}
	if l.Count != implied {
		kv("Count", strconv.FormatUint(l.Count, 10))
	}
	if l.Cores != "" {
		kv("Cores", l.Cores)
	}
	if l.Links != "" {
		kv("Links", l.Links)
	}
	if l.Flags != 0 {
		kv("Flags", l.Flags.String())
	}
	return b.String()
}

// formatValue escapes '\' and '#' (which Slurm's reader would take as an
// escape or a comment) and quotes a value that has blanks or is empty.
func formatValue(v string) string {
	v = strings.NewReplacer(`\`, `\\`, `#`, `\#`).Replace(v)
	if v == "" || strings.ContainsAny(v, " \t\v\f\r\n") {
		return `"` + v + `"`
	}
	return v
}
