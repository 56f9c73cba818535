package sprio

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// field is one %[.][size]type of a format, with the text before it.
type field struct {
	prefix string
	right  bool
	width  int
	letter byte
	header string
}

var headers = map[byte]string{
	'i': "JOBID", 'r': "PARTITION", 'u': "USER", 'o': "ACCOUNT", 'c': "CLUSTER", 'n': "QOSNAME",
	'N': "NICE", 'Y': "PRIORITY", 'y': "PRIORITY", 'S': "SITE", 's': "SITE", 'A': "AGE", 'a': "AGE",
	'B': "ASSOC", 'b': "ASSOC", 'F': "FAIRSHARE", 'f': "FAIRSHARE", 'J': "JOBSIZE", 'j': "JOBSIZE",
	'P': "PARTITION", 'p': "PARTITION", 'Q': "QOS", 'q': "QOS", 'T': "TRES", 't': "TRES",
}

// parseFormat reads an -o format as sprio does; text outside the fields
// is printed as it is (after the last field too).
func parseFormat(format string) ([]field, error) {
	var out []field
	var prefix strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			prefix.WriteByte(format[i])
			continue
		}
		i++
		f := field{prefix: prefix.String()}
		prefix.Reset()
		if i < len(format) && format[i] == '.' {
			f.right = true
			i++
		}
		start := i
		for i < len(format) && format[i] >= '0' && format[i] <= '9' {
			i++
		}
		if i > start {
			n, err := strconv.Atoi(format[start:i])
			if err != nil || n > 1024 {
				return nil, fmt.Errorf("Invalid job format specification: %s", format[start:i])
			}
			f.width = n
		}
		if i >= len(format) {
			return nil, fmt.Errorf("Invalid job format specification: %s", format[start-1:])
		}
		f.letter = format[i]
		h, ok := headers[f.letter]
		if !ok {
			return nil, fmt.Errorf("Invalid job format specification: %c", f.letter)
		}
		f.header = h
		out = append(out, f)
	}
	if prefix.Len() > 0 {
		out = append(out, field{prefix: prefix.String()})
	}
	return out, nil
}

// printLine prints one line, each cell padded to its width (right or left
// aligned) and cut at it, as Slurm's _print_str does.
func printLine(w io.Writer, fields []field, cell func(field) string) {
	var b strings.Builder
	for _, f := range fields {
		b.WriteString(f.prefix)
		if f.letter == 0 {
			continue
		}
		s := cell(f)
		if f.width > 0 {
			if len(s) > f.width {
				s = s[:f.width]
			}
			if f.right {
				s = strings.Repeat(" ", f.width-len(s)) + s
			} else {
				s += strings.Repeat(" ", f.width-len(s))
			}
		}
		b.WriteString(s)
	}
	fmt.Fprintln(w, b.String())
}

const helpText = `Usage: sprio [OPTIONS]
      --federation                display jobs in federation if a member of one
  -h, --noheader                  no headers on output
  -j, --jobs                      comma separated list of jobs
                                  to view, default is all
      --local                     display jobs on local cluster only
  -l, --long                      long report
  -M, --cluster=cluster_name      cluster to issue commands to.  Default is
                                  current cluster.  cluster with no name will
                                  reset to default.
                                  NOTE: SlurmDBD must be up.
  -n, --norm                      display normalized values
  -o, --format=format             format specification
      --sibling                   display job records separately for each federation cluster
  -p, --partition=partition_name  comma separated list of partitions
  -u, --user=user_name            comma separated list of users to view
  -v, --verbose                   verbosity level
  -V, --version                   output version information and exit
  -w, --weights                   show the weights for each priority factor

Help options:
  --help                          show this help message
  --usage                         display a brief summary of sprio options
`
