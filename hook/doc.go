// Package hook speaks the pre-tool hook protocols of AI coding agents
// (Claude Code, Codex CLI, Gemini CLI, Cursor, GitHub Copilot CLI, Amp):
// it reads the payload an agent writes to a hook's stdin into a [Call],
// and turns mnemos's [Verdict] into the [Answer] that agent understands:
// the bytes for stdout, the text for stderr and the exit status.
//
// Every agent fails open: a hook that crashes, times out, exits with a
// status the agent does not read as a decision, or prints output it cannot
// parse lets the tool call run. So every answer here is one the agent's
// documentation names as a decision, and a payload that cannot be read is
// answered with the agent's own block ([Agent.Refuse]), never with an
// error status. The exit codes and field names are those of each agent's
// published documentation and source; the tests hold them to the examples
// given there.
//
// The package also knows where each agent keeps its hook configuration and
// how to add, find and remove mnemos's entry there without losing any other
// setting ([Agent.Install], [Agent.Uninstall], [Agent.Find]). It reads and
// writes no file itself, decides nothing and runs nothing: the caller
// (cmd/mnemos) reads the files, asks the gate and prints the answer.
package hook
