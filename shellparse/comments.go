package shellparse

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// checkComments refuses a parse in which a comment starts where the shell
// would not start one. Bash starts a comment only at the beginning of a
// word; the parser, inside $(…), `…` and <(…), also takes a "#" glued to
// a parameter expansion ("$x#") for one, so everything after it would be
// hidden from the guard while the shell runs it. Where the two disagree,
// the script is refused rather than judged on the parser's reading.
func checkComments(src string, f *syntax.File) error {
	if err := checkCommentContinuations(src, f); err != nil {
		return err
	}
	// Every comment starts at a "#" of the source: when bash could start
	// one at each of them, no comment can be out of place.
	for off := 0; ; {
		i := strings.IndexByte(src[off:], '#')
		if i < 0 {
			return nil
		}
		off += i
		if !commentMayStartAt(src, off) {
			break
		}
		off++
	}
	var bad *syntax.Comment
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.Comment); ok && bad == nil && !commentMayStartAt(src, int(c.Hash.Offset())) {
			bad = c
		}
		return bad == nil
	})
	if bad == nil {
		return nil
	}
	return &ParseError{Line: int(bad.Hash.Line()), Col: int(bad.Hash.Col()),
		Msg: `"#" glued to a word is part of the word for the shell but a comment for the parser; add a space before it or quote it`}
}

// checkCommentContinuations refuses a comment holding a backslash-newline.
// Bash ends a comment at the end of its line, backslash or not; the parser
// takes the backslash-newline for a line continuation and reads the next
// line as more words of the command before the comment, so
// "echo hi # note \<LF>rm -rf ~" would be judged as one echo.
func checkCommentContinuations(src string, f *syntax.File) error {
	if !strings.Contains(src, "\\\n") || !strings.Contains(src, "#") {
		return nil
	}
	var bad *syntax.Comment
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.Comment); ok && bad == nil && strings.Contains(c.Text, "\\\n") {
			bad = c
		}
		return bad == nil
	})
	if bad == nil {
		return nil
	}
	return &ParseError{Line: int(bad.Hash.Line()), Col: int(bad.Hash.Col()),
		Msg: "a comment ends in a backslash: the shell ends the comment at the line end, the parser joins the next line to the command; remove the backslash"}
}

// commentMayStartAt reports whether bash would start a comment at the "#"
// at offset off: at the start of the source or after a blank or an
// operator character.
func commentMayStartAt(src string, off int) bool {
	if off <= 0 || off > len(src) {
		return off == 0
	}
	switch src[off-1] {
	case ' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>':
		return true
	}
	return false
}

// crError refuses a carriage return. The parser reads an unquoted CR as a
// blank and backslash-CR-LF as a line continuation; bash keeps the CR in
// the word and ends the command at the LF, so "echo ok \\<CR><LF>rm -rf /"
// would hide the second line.
func crError(src string, off int) error {
	line := 1 + strings.Count(src[:off], "\n")
	col := off - strings.LastIndexByte(src[:off], '\n')
	return &ParseError{Line: line, Col: col, Msg: "carriage return in a script: the shell and the parser read it differently; use LF line endings"}
}
