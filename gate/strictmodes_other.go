//go:build !unix

package gate

import "io/fs"

// ownerOf cannot tell a file's owner here, where files have no Unix
// owners and modes: StrictModes checks nothing.
func ownerOf(fs.FileInfo) (int, bool) { return 0, false }
