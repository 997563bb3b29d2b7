//go:build !unix

package policy

import "io/fs"

// FileOwner cannot tell a file's owner here, where files have no Unix
// owners: no system policy is trusted, and StrictModes checks nothing.
func FileOwner(fs.FileInfo) (int, bool) { return 0, false }

// openNoBlock adds nothing to the open flags here.
const openNoBlock = 0
