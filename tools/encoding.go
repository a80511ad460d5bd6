package tools

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
)

// legacyEncodings are the single-byte encodings a file that is not UTF-8
// is tried in, most used first (Cyrillic, Western and Central European,
// Greek, Turkish, Hebrew, Arabic, Baltic, DOS Cyrillic).
var legacyEncodings = []struct {
	name string
	enc  encoding.Encoding
}{
	{"windows-1251", charmap.Windows1251},
	{"koi8-r", charmap.KOI8R},
	{"windows-1252", charmap.Windows1252},
	{"windows-1250", charmap.Windows1250},
	{"iso-8859-5", charmap.ISO8859_5},
	{"ibm866", charmap.CodePage866},
	{"koi8-u", charmap.KOI8U},
	{"windows-1253", charmap.Windows1253},
	{"windows-1254", charmap.Windows1254},
	{"windows-1255", charmap.Windows1255},
	{"windows-1256", charmap.Windows1256},
	{"windows-1257", charmap.Windows1257},
	{"iso-8859-2", charmap.ISO8859_2},
	{"iso-8859-15", charmap.ISO8859_15},
}

// legacyEdit finds the encoding of a file that is not UTF-8 by the text
// the edit names: the first legacy encoding in which old occurs in data.
// The edit is then made on the bytes, old and new encoded as the file is,
// so every other byte stays as it was and the file keeps its encoding (as
// OpenHands' editor keeps a cp1251 file cp1251). ok is false when data is
// UTF-8 or old occurs in no encoding; encode fails on a character the
// file's encoding cannot hold.
func legacyEdit(data []byte, old string) (name string, oldB []byte, encode func(string) ([]byte, error), ok bool) {
	if utf8.Valid(data) {
		return "", nil, nil, false
	}
	for _, l := range legacyEncodings {
		ob, err := l.enc.NewEncoder().Bytes([]byte(old))
		if err != nil || len(ob) == 0 || !bytes.Contains(data, ob) {
			continue
		}
		enc := l.enc
		return l.name, ob, func(s string) ([]byte, error) { return enc.NewEncoder().Bytes([]byte(s)) }, true
	}
	return "", nil, nil, false
}
