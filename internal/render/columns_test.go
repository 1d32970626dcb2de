package render

import (
	"bytes"
	"testing"
)

func TestColumns(t *testing.T) {
	var b bytes.Buffer
	err := Columns(&b, 1, []string{"FORMAT", "FILES", "EXACT"}, [][]string{{"fio-json", "41", "41"}, {"dd\x1b[31m", "7", "6"}})
	if err != nil {
		t.Fatal(err)
	}
	got := b.String()
	want := "FORMAT      FILES  EXACT\n" +
		"fio-json       41     41\n" +
		"dd\\x1b[31m      7      6\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if bytes.Contains(b.Bytes(), []byte("\x1b")) {
		t.Errorf("a terminal escape in a cell was printed raw: %q", got)
	}
}
