package render

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Labels, names, targets, notes and errors are data: whoever wrote a suite,
// a label or an imported file must not be able to drive the reader's
// terminal or restructure a report. Every renderer passes such text
// through Terminal or mdEscape (HTML through html/template and esc).

// Terminal makes s safe to print on a terminal: control characters (C0
// including newline and tab, DEL, C1 such as CSI U+009B), bytes that are not
// UTF-8, and the bidirectional overrides that reorder what is shown are
// replaced by visible escapes (\n, \x1b, \u202e). Ordinary text, including
// backslashes and any printable Unicode, is unchanged.
func Terminal(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			// Non-ASCII is checked rune by rune; plain ASCII text returns
			// here without allocating.
			for _, r := range s[i:] {
				if r < 0x20 || r == 0x7f || r == utf8.RuneError || unsafeRune(r) {
					return true
				}
			}
			return false
		}
	}
	return false
}

// unsafeRune is a C1 control or a character that reorders or hides text.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls: CSI, OSC, ST...
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi embeddings, overrides, isolates
		return true
	case r == 0x200e || r == 0x200f || r == 0x061c: // direction marks
		return true
	}
	return false
}

// mdEscape keeps text literal in Markdown, on one line: emphasis, code
// spans and fences, pipes, HTML, and link syntax; newlines and other
// control characters become visible escapes, so no text can end its line
// and start a heading, a fence, a table or a link definition.
func mdEscape(s string) string {
	s = mdReplacer.Replace(s)
	// "[PASS] random" is ordinary text; "[x](url)", "[x][ref]", "[x]: url"
	// and "![x](url)" would be links or images.
	if strings.Contains(s, "](") || strings.Contains(s, "][") || strings.Contains(s, "]:") {
		s = strings.NewReplacer("[", `\[`, "]", `\]`).Replace(s)
	}
	return Terminal(s)
}

// mdBlock escapes text that starts a block (a paragraph, a list item, a
// heading's text): there "# " would make a heading, ">" a quote, and
// "- ", "+ ", "1. " a list.
func mdBlock(s string) string {
	s = mdEscape(s)
	if blockStart.MatchString(s) {
		s = `\` + s
	}
	return s
}

var blockStart = regexp.MustCompile(`^(#+( |$)|>|[-+=]( |$)|[0-9]+[.)]( |$))`)

var mdReplacer = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "~", `\~`, "|", `\|`, "<", "&lt;")

// mdFence returns a code fence longer than any run of backticks in body,
// so nothing in it can close the block early.
func mdFence(body string) string {
	longest, run := 0, 0
	for _, c := range body {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}
