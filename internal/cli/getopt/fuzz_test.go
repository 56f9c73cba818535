package getopt

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// fuzzArgs runs check on fuzzed argument vectors, which the corpus holds
// NUL-separated, seeded with vectors for both fuzz targets.
func fuzzArgs(f *testing.F, check func(t *testing.T, args []string)) {
	for _, s := range []string{
		"--form=%i\x00-j123\x00x", "--sta", "--cl=x", "-Ux\x00--accounts-U", "-alo\x00%i", "--=x",
		"a\x00-l\x00b\x00--\x00-a", "-j\x00--jobs=\x00-s", "--lo=1", "-\u00e9", "-a-", "--",
		"--no", "--h\x00--clu=x", "--N\x00-al\x00-", "--form\x00--al", "--bogus=1\x00--F=x=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > 1<<10 {
			return
		}
		check(t, strings.Split(in, "\x00"))
	})
}

// FuzzNormalize checks Normalize on fuzzed argument vectors: errors are
// *Error with a message; tokens name defined options (never an alias),
// pflag accepts them, and written back as arguments (operands after "--")
// they normalize to themselves.
func FuzzNormalize(f *testing.F) {
	fuzzArgs(f, func(t *testing.T, args []string) {
		fs := testFlags(nil)
		tokens, operands, err := Normalize(fs, args, testAliases)
		if err != nil {
			var ge *Error
			if !errors.As(err, &ge) || ge.Error() == "" {
				t.Fatalf("%q: error %v (%T) is not a worded *Error", args, err, err)
			}
		}
		// again is the tokens as a user could write them: letter-only
		// flags have no long name to write.
		var again []string
		for _, tok := range tokens {
			name, value, _ := strings.Cut(strings.TrimPrefix(tok, "--"), "=")
			fl := fs.Lookup(name)
			if !strings.HasPrefix(tok, "--") || fl == nil || testAliases[name] != "" {
				t.Fatalf("%q: token %q does not name an option", args, tok)
			}
			if isShortOnly(fl) {
				again = append(again, "-"+fl.Shorthand, value)
			} else {
				again = append(again, tok)
			}
		}
		if err := testFlags(nil).Parse(tokens); err != nil {
			t.Fatalf("%q: pflag refuses tokens %q: %v", args, tokens, err)
		}
		if err == nil {
			again = append(append(again, "--"), operands...)
		}
		t2, o2, err2 := Normalize(testFlags(nil), again, testAliases)
		if err2 != nil {
			t.Fatalf("%q: tokens %q do not normalize: %v", args, again, err2)
		}
		want := []any{tokens, operands}
		if err != nil {
			want[1] = []string(nil)
		}
		if d := cmp.Diff(want, []any{t2, o2}, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("%q: normalizing %q again (-first +second):\n%s", args, again, d)
		}
	})
}

// FuzzExpandLong checks ExpandLong on fuzzed argument vectors: it rewrites
// arguments one for one, changes only the name of a long option before
// "--", into the one table name it abbreviates, is idempotent, and refuses
// only ambiguous abbreviations.
func FuzzExpandLong(f *testing.F) {
	fuzzArgs(f, func(t *testing.T, args []string) {
		out, err := ExpandLong(args, expandNames, expandAliases)
		if err != nil {
			var ge *Error
			if !errors.As(err, &ge) || !strings.Contains(ge.Error(), "is ambiguous; possibilities:") {
				t.Fatalf("%q: unexpected error %v", args, err)
			}
			return
		}
		if len(out) != len(args) {
			t.Fatalf("%q: %d arguments became %d: %q", args, len(args), len(out), out)
		}
		ended := false
		for i, a := range args {
			ended = ended || a == "--"
			if out[i] == a {
				continue
			}
			name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			full, value2, hasValue2 := strings.Cut(strings.TrimPrefix(out[i], "--"), "=")
			if ended || !strings.HasPrefix(a, "--") || !strings.HasPrefix(full, name) ||
				!slices.Contains(expandNames, full) || value != value2 || hasValue != hasValue2 {
				t.Fatalf("%q: argument %q became %q", args, a, out[i])
			}
		}
		again, err := ExpandLong(out, expandNames, expandAliases)
		if err != nil {
			t.Fatalf("%q: expanding %q again: %v", args, out, err)
		}
		if d := cmp.Diff(out, again); d != "" {
			t.Fatalf("%q: expanding again (-first +second):\n%s", args, d)
		}
	})
}
