package classify

import "path"

// RunsLater reports whether writing the absolute path p writes what runs
// later (a git hook or configuration, a shell startup file, an agent's
// hooks or MCP servers, autostart, cron...) or a program directly in one
// of the PATH directories pathDirs: what a write access to p would be
// judged as running code for. The gate asks it of the path a link
// resolves to, which the command line does not name.
func RunsLater(p, home string, pathDirs []string) bool {
	if !path.IsAbs(p) {
		return false
	}
	return laterTarget(p, false, home, true) || onPath(p, false, pathDirs, true)
}
