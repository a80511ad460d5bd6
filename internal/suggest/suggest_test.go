package suggest

import "testing"

func TestNearest(t *testing.T) {
	names := []string{"write_file", "read_file", "patch_file", "git_status", "git.remote"}
	for in, want := range map[string]string{
		"wirte_file": "write_file", // a swap of neighbours is one edit
		"read_fle":   "read_file",
		"git_stauts": "git_status",
		"git.remot":  "git.remote",
		"WRITE_FILE": "", // the name itself, in another case: nothing to suggest
		"frobnicate": "", // like no name
		"x":          "", // too short to guess
		"patch":      "", // more than a third of it differs
		"gti_status": "git_status",
	} {
		if got := Nearest(in, names); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
}
