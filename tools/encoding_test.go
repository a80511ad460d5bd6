package tools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"

	"github.com/tgp-go/tgp/tools"
)

// A cp1251 file edited by patch_file stays cp1251 (as OpenHands' editor
// keeps a file's encoding): the Cyrillic old_string is found in it, the
// new text is written in the same encoding and every other byte is kept.
func TestPatchFileKeepsLegacyEncoding(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		enc := func(s string) string {
			b, err := charmap.Windows1251.NewEncoder().Bytes([]byte(s))
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		before := enc("// Привет, мир\nconst greeting = \"Привет\";\n") + "\x98" // 0x98: no character in cp1251
		e.write(t, "notes/ru.txt", before)
		raw, _ := json.Marshal(map[string]string{"path": "notes/ru.txt", "old_string": "\"Привет\"", "new_string": "\"Здравствуйте\""})
		res, err := e.call("patch_file", string(raw))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := e.fs.ReadFile("notes/ru.txt")
		want := enc("// Привет, мир\nconst greeting = \"Здравствуйте\";\n") + "\x98"
		if string(got) != want {
			t.Fatalf("file after the edit:\n%q\nwant\n%q", got, want)
		}
		if wr := res.Value.(tools.WriteResult); wr.Encoding != "windows-1251" {
			t.Fatalf("encoding reported %q", wr.Encoding)
		}
		raw, _ = json.Marshal(map[string]string{"path": "notes/ru.txt", "old_string": "мир", "new_string": "世界"})
		if _, err := e.call("patch_file", string(raw)); err == nil || !strings.Contains(err.Error(), "windows-1251") {
			t.Fatalf("a character cp1251 cannot hold: %v", err)
		}
	})
}
