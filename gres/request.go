package gres

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalidTRES is wrapped by every syntax error in a job's GRES request. It
// stands for Slurm's ESLURM_INVALID_TRES (2115, "Invalid Trackable RESource
// (TRES) specification"), which is what slurmctld answers when it cannot
// parse a tres_per_* string.
var ErrInvalidTRES = errors.New("Invalid Trackable RESource (TRES) specification")

// ErrInvalidGRESType is returned when one request names the same GRES both
// with and without a type ("gpu:1,gpu:a100:1"). It stands for Slurm's
// ESLURM_INVALID_GRES_TYPE (2119), which slurmctld returns for that case.
var ErrInvalidGRESType = errors.New("Invalid GRES specification (with and without type identification)")

// Request is one entry of a job's GRES request: Count units of GRES Name,
// optionally restricted to one Type ("gpu:a100:2" is {gpu, a100, 2}).
type Request struct {
	// Name is the GRES name, e.g. "gpu"; it must be one of GresTypes, which
	// the controller checks, not this package.
	Name string
	// Type is the optional GRES type, e.g. "a100"; empty means any type.
	Type string
	// Count is the number of units asked for, after any k/m/g suffix.
	Count uint64
}

// String returns the request as the user writes it after --gres:
// "gpu:2", "gpu:a100:2". The count is always written, so the string parses
// back to the same Request.
func (r Request) String() string {
	var b strings.Builder
	b.WriteString(r.Name)
	if r.Type != "" {
		b.WriteByte(':')
		b.WriteString(r.Type)
	}
	b.WriteByte(':')
	b.WriteString(strconv.FormatUint(r.Count, 10))
	return b.String()
}

// TRES returns the request the way slurmctld stores and shows it in
// tres_per_node / tres_per_job: "gres/gpu:2", "gres/gpu:a100:2"
// (scontrol's TresPerNode=, squeue's tres-per-node, REST's tres_per_node).
func (r Request) TRES() string {
	return tresPrefix + r.String()
}

// tresPrefix is what Slurm's clients put before each GRES entry when they
// turn --gres into tres_per_node (gres_prepend_tres_type).
const tresPrefix = "gres/"

// FormatTRES joins requests into a tres_per_node (or tres_per_job) string,
// "gres/gpu:2,gres/nic:1". No requests give "", which Slurm prints as an
// empty string in REST and leaves out of scontrol's output.
//
// Slurm keeps the user's own spelling ("--gres=gpu" stays "gres/gpu");
// Drover always writes the count ("gres/gpu:1"), which Slurm's own parser
// reads as the same request.
func FormatTRES(reqs []Request) string {
	parts := make([]string, len(reqs))
	for i, r := range reqs {
		parts[i] = r.TRES()
	}
	return strings.Join(parts, ",")
}

// ParseRequest parses the value of a job's --gres option (or a
// tres_per_node string): a comma-separated list of name[:type][:count]
// entries, each optionally prefixed with "gres/". It follows the rules of
// Slurm's TRES parser:
//
//   - a missing count is 1; the count takes Slurm's suffixes k/m/g/t/p
//     (powers of 1024, also kib..pib) and kb..pb (powers of 1000);
//   - "name:x" is a count when x starts with a digit and a type otherwise;
//   - "name=count" is accepted as a count as well;
//   - empty entries are skipped, and so are entries with a count of 0;
//   - "none" (any case) and "" ask for nothing and give a nil slice;
//   - a repeated name:type keeps its first position and its last count.
//
// Syntax errors wrap ErrInvalidTRES; naming one GRES with and without a type
// returns ErrInvalidGRESType. Whether a name is configured (GresTypes) is for
// the controller to check.
func ParseRequest(s string) ([]Request, error) {
	if s == "" || strings.EqualFold(s, "none") {
		return nil, nil
	}
	var out []Request
	for entry := range strings.SplitSeq(s, ",") {
		if entry == "" {
			continue
		}
		r, err := parseEntry(strings.TrimPrefix(entry, tresPrefix))
		if err != nil {
			return nil, err
		}
		if r.Count == 0 {
			continue
		}
		out = mergeRequest(out, r)
	}
	if err := checkTypeMix(out); err != nil {
		return nil, err
	}
	return out, nil
}

// ParseGPUs parses the value of --gpus (-G), "[type:]count", into a request
// for GRES "gpu". As Slurm turns --gpus=X into "gres/gpu:X", a lone word is
// a type with a count of 1 and an empty value or a count of 0 asks for no
// GPUs (Count 0, no error). Lists ("a100:1,v100:2") are refused here; see
// ParseGPUList for the --gpus-per-* options that take them.
func ParseGPUs(s string) (Request, error) {
	if strings.Contains(s, ",") {
		return Request{}, fmt.Errorf("%w: --gpus takes one [type:]count, got %q", ErrInvalidTRES, s)
	}
	if s == "" {
		return Request{Name: "gpu"}, nil
	}
	return parseGPUEntry(s)
}

// ParseGPUList parses the value of --gpus-per-node, --gpus-per-socket or
// --gpus-per-task: a comma-separated list of [type:]count, each entry read
// as "gpu:" + entry the way Slurm's clients build tres_per_*. Entries with a
// count of 0 are dropped.
func ParseGPUList(s string) ([]Request, error) {
	var out []Request
	for entry := range strings.SplitSeq(s, ",") {
		if entry == "" {
			continue
		}
		r, err := parseGPUEntry(entry)
		if err != nil {
			return nil, err
		}
		if r.Count == 0 {
			continue
		}
		out = mergeRequest(out, r)
	}
	if err := checkTypeMix(out); err != nil {
		return nil, err
	}
	return out, nil
}

func parseGPUEntry(s string) (Request, error) {
	r, err := parseEntry("gpu:" + s)
	if err != nil {
		return Request{}, fmt.Errorf("invalid GPU specification %q: %w", s, err)
	}
	return r, nil
}

// parseEntry parses one name[:type][:count] entry, prefix already removed.
func parseEntry(entry string) (Request, error) {
	bad := func(why string) (Request, error) {
		return Request{}, fmt.Errorf("%w: %q: %s", ErrInvalidTRES, entry, why)
	}
	r := Request{Count: 1}
	head := entry
	// As Slurm does, look at the last separator first: it holds either the
	// count or, when it does not start with a digit, the type.
	if i := strings.LastIndexByte(entry, '='); i >= 0 {
		n, err := parseCount(entry[i+1:])
		if err != nil {
			return bad("count after '=' is not a number")
		}
		r.Count, head = n, entry[:i]
	} else if i := strings.LastIndexByte(entry, ':'); i >= 0 {
		tail := entry[i+1:]
		head = entry[:i]
		switch {
		case tail == "":
			return bad("nothing after ':'")
		case isCountToken(tail):
			n, err := parseCount(tail)
			if err != nil {
				return bad("count is not a number")
			}
			r.Count = n
		default:
			r.Type = tail
		}
	}
	if i := strings.IndexByte(head, ':'); i >= 0 {
		if r.Type != "" {
			return bad("too many ':' separated fields")
		}
		r.Type = head[i+1:]
		head = head[:i]
		if r.Type == "" {
			return bad("empty type")
		}
	}
	r.Name = head
	if r.Name == "" {
		return bad("missing GRES name")
	}
	if !ValidName(r.Name) {
		return bad("invalid GRES name")
	}
	if r.Type != "" && !validToken(r.Type) {
		return bad("invalid character in GRES type")
	}
	return r, nil
}

// mergeRequest adds r to reqs; a request for the same name and type replaces
// the count of the earlier one, as slurmctld keeps one record per name:type
// and the later value wins.
func mergeRequest(reqs []Request, r Request) []Request {
	for i := range reqs {
		if reqs[i].Name == r.Name && reqs[i].Type == r.Type {
			reqs[i].Count = r.Count
			return reqs
		}
	}
	return append(reqs, r)
}

// checkTypeMix refuses a GRES asked for both with and without a type, which
// slurmctld rejects unless the untyped entry carries only per-GRES options.
func checkTypeMix(reqs []Request) error {
	typed := map[string]bool{}
	untyped := map[string]bool{}
	for _, r := range reqs {
		if r.Type == "" {
			untyped[r.Name] = true
		} else {
			typed[r.Name] = true
		}
		if typed[r.Name] && untyped[r.Name] {
			return fmt.Errorf("%w: %s", ErrInvalidGRESType, r.Name)
		}
	}
	return nil
}

// ValidName reports whether s can be a GRES name in a request, a node GRES
// string or gres.conf: printable ASCII without blanks, quotes, '#' or the
// characters that separate GRES fields (":,=/()"), not starting with a digit
// (Slurm reads a leading number as a count).
func ValidName(s string) bool {
	return validToken(s) && !isCountToken(s)
}

// ValidType reports whether s can be a GRES type: like ValidName, except
// that a type may start with a digit ("2g.20gb").
func ValidType(s string) bool {
	return validToken(s)
}

// validToken reports whether s can be a GRES name or type: printable ASCII
// without blanks, quotes or the characters that separate GRES fields
// (":,=/()"), so that every formatted string parses back unchanged.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(":,=/()\"'#", c) >= 0 {
			return false
		}
	}
	return true
}
