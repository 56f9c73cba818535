package sbatchscript

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheck(t *testing.T) {
	tests := map[string]struct {
		script string
		want   error
	}{
		"ok":                  {script: "#!/bin/sh\necho hi\n", want: nil},
		"shebang only":        {script: "#!", want: nil},
		"empty":               {script: "", want: ErrEmpty},
		"blanks":              {script: " \n\t\r\n", want: ErrWhitespace},
		"blanks then NUL":     {script: " \n\x00echo", want: ErrWhitespace},
		"no shebang":          {script: "echo hi\n", want: ErrNoShebang},
		"leading blank":       {script: " #!/bin/sh\n", want: ErrNoShebang},
		"hash only":           {script: "# comment\n#!/bin/sh\n", want: ErrNoShebang},
		"NUL":                 {script: "#!/bin/sh\necho \x00\n", want: ErrNUL},
		"DOS":                 {script: "#!/bin/sh\r\necho hi\r\n", want: ErrDOSLineBreaks},
		"lone CR is fine":     {script: "#!/bin/sh\recho\n", want: nil},
		"NUL before DOS wins": {script: "#!/bin/sh\r\n\x00", want: ErrNUL},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Check([]byte(tc.script))
			if got != tc.want {
				t.Fatalf("Check(%q) = %v, want %v", tc.script, got, tc.want)
			}
		})
	}
}

func TestCheckMessages(t *testing.T) {
	// The exact lines sbatch prints after "sbatch: error: ".
	want := []string{
		"This does not look like a batch script.  The first",
		"line must start with #! followed by the path to an interpreter.",
		"For instance: #!/bin/sh",
	}
	var se *ScriptError
	if !errors.As(Check([]byte("echo\n")), &se) {
		t.Fatal("no ScriptError")
	}
	if diff := cmp.Diff(want, se.Lines()); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{
		"Batch script contains DOS line breaks (\\r\\n)",
		"instead of expected UNIX line breaks (\\n).",
	}, ErrDOSLineBreaks.Lines()); diff != "" {
		t.Errorf("DOS lines (-want +got):\n%s", diff)
	}
}

func TestDirectives(t *testing.T) {
	tests := map[string]struct {
		script string
		want   []string
	}{
		"basic": {
			script: "#!/bin/bash\n#SBATCH -N 2 --job-name=x\n#SBATCH --mem=1G\nsrun hostname\n",
			want:   []string{"-N", "2", "--job-name=x", "--mem=1G"},
		},
		"stops at first command": {
			script: "#!/bin/bash\n#SBATCH -N1\necho hi\n#SBATCH -N2\n",
			want:   []string{"-N1"},
		},
		"blank lines and comments skipped": {
			script: "#!/bin/bash\n\n   \n# a comment\n   # indented comment\n#SBATCH -n4\n",
			want:   []string{"-n4"},
		},
		"indented directive is a comment": {
			script: "#!/bin/sh\n  #SBATCH -N3\n#SBATCH -n1\n",
			want:   []string{"-n1"},
		},
		"case sensitive": {
			script: "#!/bin/sh\n#sbatch -N3\n#SBATCH -n1\n",
			want:   []string{"-n1"},
		},
		"no space after marker": {
			script: "#!/bin/sh\n#SBATCH--mem=10\n",
			want:   []string{"--mem=10"},
		},
		"tabs": {
			script: "#!/bin/sh\n#SBATCH\t-J\tname\n",
			want:   []string{"-J", "name"},
		},
		"double quotes": {
			script: "#!/bin/sh\n#SBATCH --comment=\"hello world\" -J x\n",
			want:   []string{"--comment=hello world", "-J", "x"},
		},
		"single quotes": {
			script: "#!/bin/sh\n#SBATCH --comment='a \"b\" c'\n",
			want:   []string{`--comment=a "b" c`},
		},
		"quote in middle of word": {
			script: "#!/bin/sh\n#SBATCH -J my' 'job\n",
			want:   []string{"-J", "my job"},
		},
		"comment after options": {
			script: "#!/bin/sh\n#SBATCH -N 1 # one node\n#SBATCH -n 2#two\n",
			want:   []string{"-N", "1", "-n", "2"},
		},
		"hash in quotes": {
			script: "#!/bin/sh\n#SBATCH --comment=\"run #1\"\n",
			want:   []string{"--comment=run #1"},
		},
		"escaped hash": {
			script: "#!/bin/sh\n#SBATCH --comment=run\\#1\n",
			want:   []string{"--comment=run#1"},
		},
		"escaped space": {
			script: "#!/bin/sh\n#SBATCH -J my\\ job\n",
			want:   []string{"-J", "my job"},
		},
		"escaped quote inside quotes": {
			script: "#!/bin/sh\n#SBATCH --comment=\"say \\\"hi\\\"\"\n",
			want:   []string{`--comment=say "hi"`},
		},
		"escaped backslash": {
			script: "#!/bin/sh\n#SBATCH --comment=a\\\\b\n",
			want:   []string{`--comment=a\b`},
		},
		"trailing backslash": {
			script: "#!/bin/sh\n#SBATCH -J name\\\n",
			want:   []string{"-J", "name"},
		},
		"escaped tab ends word": {
			script: "#!/bin/sh\n#SBATCH -J a\\\tb\n",
			want:   []string{"-J", "a", "b"},
		},
		"empty quoted word ends line": {
			script: "#!/bin/sh\n#SBATCH -N1 \"\" -n2\n#SBATCH -c3\n",
			want:   []string{"-N1", "-c3"},
		},
		"empty directive": {
			script: "#!/bin/sh\n#SBATCH\n#SBATCH    \n#SBATCH -c1\n",
			want:   []string{"-c1"},
		},
		"legacy prefix ignored": {
			script: "#!/bin/sh\n#SLURM -N2\n#SBATCH -c1\n",
			want:   []string{"-c1"},
		},
		"no trailing newline": {
			script: "#!/bin/sh\n#SBATCH -c1",
			want:   []string{"-c1"},
		},
		"hetjob stops": {
			script: "#!/bin/sh\n#SBATCH -N1\n#SBATCH hetjob\n#SBATCH -N2\n",
			want:   []string{"-N1"},
		},
		"separator word ends line": {
			script: "#!/bin/sh\n#SBATCH -N1 hetjob -N2\n#SBATCH -c4\n",
			want:   []string{"-N1", "-c4"},
		},
		"hetjobs is a word": {
			script: "#!/bin/sh\n#SBATCH -J hetjobs\n",
			want:   []string{"-J", "hetjobs"},
		},
		"NUL ends script": {
			script: "#!/bin/sh\n#SBATCH -c1\x00\n#SBATCH -c2\n",
			want:   []string{"-c1"},
		},
		"no directives": {
			script: "#!/bin/sh\necho\n",
			want:   nil,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Directives([]byte(tc.script), Prefix)
			if err != nil {
				t.Fatalf("Directives: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDirectivesCustomPrefix(t *testing.T) {
	script := "#!/bin/sh\n#SBATCH -N1\n#DROVER -N2 --x\n"
	got, err := Directives([]byte(script), "#DROVER")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"-N2", "--x"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestScan(t *testing.T) {
	script := "#!/bin/sh\n#SLURM -N1\n#SBATCH -n2\n#SBATCH packjob\n#SBATCH -n3\nhostname\n"
	got, err := Scan([]byte(script), Prefix, LegacyPrefix)
	if err != nil {
		t.Fatal(err)
	}
	want := []Directive{
		{Line: 2, Prefix: LegacyPrefix, Args: []string{"-N1"}},
		{Line: 3, Prefix: Prefix, Args: []string{"-n2"}},
		{Line: 4, Prefix: Prefix, Separator: true},
		{Line: 5, Prefix: Prefix, Args: []string{"-n3"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDirectivesErrors(t *testing.T) {
	tests := map[string]struct {
		script string
		want   *SyntaxError
		msg    string
	}{
		"unmatched double quote": {
			script: "#!/bin/sh\n#SBATCH -J x --comment=\"abc\n",
			want:   &SyntaxError{Line: 2, Text: ` --comment="abc`, Quote: '"'},
			msg:    "job.sh: line 2: Unmatched `\"` in [ --comment=\"abc]",
		},
		"unmatched single quote": {
			script: "#!/bin/sh\n\n#SBATCH 'abc\n",
			want:   &SyntaxError{Line: 3, Text: `'abc`, Quote: '\''},
			msg:    "job.sh: line 3: Unmatched `'` in ['abc]",
		},
		"colon": {
			script: "#!/bin/sh\n#SBATCH -N1 : -N2\n",
			want:   &SyntaxError{Line: 2, Text: " : -N2"},
			msg:    "job.sh: line 2: Unexpected `:` in [ : -N2]",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Directives([]byte(tc.script), Prefix)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *SyntaxError", err)
			}
			if diff := cmp.Diff(tc.want, se); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got := se.Message("job.sh"); got != tc.msg {
				t.Errorf("Message = %q, want %q", got, tc.msg)
			}
		})
	}
}
