package sbatchscript

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// quoteWord writes w so that the directive splitter reads it back as w:
// single quotes around it, with a backslash before quotes and backslashes.
func quoteWord(w string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(w); i++ {
		if w[i] == '\'' || w[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(w[i])
	}
	b.WriteByte('\'')
	return b.String()
}

// FuzzDirectives checks that Scan and Directives never panic, that errors are
// *SyntaxError values pointing at a real line, that every word is non-empty
// and free of newlines, and that the words survive a round trip: quoting
// them into a fresh script and splitting it again gives the same words.
func FuzzDirectives(f *testing.F) {
	for _, s := range []string{
		"#!/bin/bash\n#SBATCH -N 2 --job-name=x\n#SBATCH --mem=1G\nsrun hostname\n",
		"#!/bin/sh\n#SBATCH --comment=\"hello world\" -J 'a b' # trailing\n",
		"#!/bin/sh\n#SBATCH -J my\\ job --comment=a\\#b\n",
		"#!/bin/sh\n#SBATCH -J x --comment=\"abc\n",
		"#!/bin/sh\n#SBATCH -N1 : -N2\n",
		"#!/bin/sh\n#SBATCH -N1\n#SBATCH hetjob\n#SBATCH -N2\n",
		"#!/bin/sh\n#SLURM -N1\n\n# c\n#SBATCH \"\" x\n",
		"#SBATCH\t\\\t'\\'' \"\\\"\"\n",
		"#SBATCH a\\",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		ds, err := Scan(script, Prefix, LegacyPrefix)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Scan error %T %v is not a *SyntaxError", err, err)
			}
			if se.Line < 1 || se.Line > strings.Count(string(script), "\n")+1 {
				t.Fatalf("error line %d out of range", se.Line)
			}
			if se.Quote != 0 && se.Quote != '"' && se.Quote != '\'' {
				t.Fatalf("odd quote %q", se.Quote)
			}
			return
		}
		var words []string
		last := 0
		for _, d := range ds {
			if d.Line <= last {
				t.Fatalf("lines not increasing: %d after %d", d.Line, last)
			}
			last = d.Line
			if d.Separator && len(d.Args) != 0 {
				t.Fatalf("separator line %d has args %q", d.Line, d.Args)
			}
			for _, w := range d.Args {
				if w == "" || strings.ContainsAny(w, "\n\x00") {
					t.Fatalf("bad word %q", w)
				}
			}
			if d.Prefix == Prefix && !d.Separator {
				words = append(words, d.Args...)
			}
		}
		// Directives with one prefix agrees with Scan up to a separator.
		if _, err := Directives(script, Prefix); err != nil {
			// A syntax error on a #SLURM-only line cannot happen here,
			// and #SBATCH lines were already split without error.
			t.Fatalf("Directives failed where Scan succeeded: %v", err)
		}
		if len(words) == 0 {
			return
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = quoteWord(w)
		}
		again := "#!/bin/sh\n#SBATCH " + strings.Join(quoted, " ") + "\n"
		got, err := Directives([]byte(again), Prefix)
		if err != nil {
			t.Fatalf("round trip of %q: %v", again, err)
		}
		if diff := cmp.Diff(words, got); diff != "" {
			t.Fatalf("round trip of %q (-want +got):\n%s", again, diff)
		}
	})
}

// FuzzCheck checks that Check never panics and only returns its documented
// values, and that an accepted script starts with "#!" and has no NUL.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"", " ", "#!/bin/sh\n", "echo\n", "#!\x00", "#!\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		err := Check(script)
		switch err {
		case nil:
			if !strings.HasPrefix(string(script), "#!") || strings.ContainsRune(string(script), 0) ||
				strings.Contains(string(script), "\r\n") {
				t.Fatalf("accepted %q", script)
			}
		case ErrEmpty, ErrWhitespace, ErrNoShebang, ErrNUL, ErrDOSLineBreaks:
		default:
			t.Fatalf("unexpected error %v", err)
		}
	})
}
