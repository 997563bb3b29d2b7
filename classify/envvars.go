package classify

import (
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// EnvEffect is what an environment variable makes a program do that its
// command line does not show.
type EnvEffect uint8

// Effects, and how each is judged when a command is given the variable.
const (
	// EnvNone: listed beside its siblings so that the choice is visible;
	// it changes only what a program prints or how it performs.
	EnvNone EnvEffect = iota
	// EnvRuns: the value names a program, or a command line, the program
	// runs. code:exec.
	EnvRuns
	// EnvLoads: the value says where the program finds code it loads
	// (search paths, startup files, modules, a configuration that names
	// programs), or holds options that make it load code. code:exec.
	EnvLoads
	// EnvWrites: the value is a file or directory the program writes
	// (trace and debug logs, an index, history, build output). fs:write
	// of that path.
	EnvWrites
	// EnvReads: the value is a file the program reads (certificates,
	// resolver and locale data). fs:read of that path.
	EnvReads
	// EnvConnects: the value is a proxy the program's traffic goes
	// through. network:http to its host.
	EnvConnects
	// EnvProtocol: the value enables transports, among them git's ext::,
	// which runs a command. code:exec when it enables such a transport.
	EnvProtocol
)

var effectNames = [...]string{"none", "runs a program", "loads code", "writes a file", "reads a file", "connects through a proxy", "enables a transport"}

func (e EnvEffect) String() string {
	if int(e) < len(effectNames) {
		return effectNames[e]
	}
	return "unknown"
}

// EnvVar is an environment variable that changes what a program runs,
// what code it loads, or where it writes.
type EnvVar struct {
	// Name is the variable's name, or a prefix ending in "_*" that stands
	// for every name starting with it (an exact entry wins over a prefix,
	// a longer prefix over a shorter one).
	Name   string
	Effect EnvEffect
	// Every is set for what the loader or every shell reads: inherited
	// with a value that loads code from a place commands may write, it
	// refuses the whole request (the gate's envHazard).
	Every bool
	// Paths is set when the value is a list of directories or files
	// (separated by ':' or ';'): inherited, it is ordinary when every
	// entry is absolute and outside the directories commands may write.
	Paths bool
	// Default is where the program looks when the variable is unset
	// ("~/" for the home directory): inherited with that value, it
	// changes nothing.
	Default string
	// Programs are the programs that read it (base names, a trailing "*"
	// for a prefix); none means any program may. An inherited value that
	// is not ordinary is judged with the commands of these programs only.
	Programs []string
	// What says what the variable does, from the programs' manuals.
	What string
}

// Program families, for EnvVar.Programs.
var (
	progGit    = []string{"git", "git-*", "tig", "gh", "hub", "lazygit"}
	progPython = []string{"python*", "pip*", "pytest", "ipython", "uv", "uvx", "poetry", "pdm", "hatch", "tox", "nox", "pipx", "jupyter*"}
	progNode   = []string{"node", "nodejs", "npm", "npx", "pnpm", "pnpx", "yarn", "corepack", "tsx", "ts-node"}
	progRuby   = []string{"ruby", "gem", "bundle", "bundler", "rake", "irb", "rails", "rspec"}
	progPerl   = []string{"perl*", "cpan*", "prove"}
	progLua    = []string{"lua*", "luajit"}
	progJava   = []string{"java", "javac", "jar", "jshell", "mvn", "mvnw", "gradle", "gradlew", "sbt", "kotlin*", "scala*", "ant", "clojure", "lein"}
	progDotnet = []string{"dotnet"}
	progGo     = []string{"go"}
	progCargo  = []string{"cargo", "rustc", "rustdoc", "rustup"}
	progMake   = []string{"make", "gmake", "cmake", "configure", "ninja", "meson", "cc", "gcc", "g++", "c++", "clang*", "go", "cargo", "pip*", "python*"}
	progShell  = []string{"bash", "sh", "dash", "zsh", "ksh", "mksh", "busybox"}
	progLess   = []string{"less", "man", "git", "journalctl", "systemctl"}
	progTLS    = []string{"curl", "wget", "git", "python*", "node", "npm", "pip*"}
)

// envVars is the table, sorted by name. Sources: bash(1) (shell
// variables), ld.so(8) (LD_*), git(1) ENVIRONMENT VARIABLES,
// `python3 --help-env`, `node --help` and the Node.js CLI reference
// (NODE_OPTIONS), perlrun(1), ruby(1), lua(1), the JDK's java tool
// (JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS, -javaagent), .NET's startup
// hooks, `go help environment`, Cargo's environment reference, npm's
// config (every npm_config_* is a flag), pip's configuration, `make
// --help` and GNU make's manual (MAKEFLAGS, MAKEFILES, CC...), less(1),
// man(1), gzip's zgrep (GREP), curl and libcurl (proxies, SSLKEYLOGFILE),
// glibc (GCONV_PATH, MALLOC_TRACE, LOCPATH) and GTK (GTK_MODULES).
var envVars = [...]EnvVar{
	{Name: "ACKRC", Effect: EnvLoads, Programs: []string{"ack"}, What: "ack's configuration file (options, --pager)"},
	{Name: "ACK_PAGER", Effect: EnvRuns, Programs: []string{"ack"}, What: "the pager ack pipes its output to"},
	{Name: "ACK_PAGER_COLOR", Effect: EnvRuns, Programs: []string{"ack"}, What: "the pager ack uses with color"},
	{Name: "ALL_PROXY", Effect: EnvConnects, What: "the proxy curl and others send every protocol through"},
	{Name: "AR", Effect: EnvRuns, Programs: progMake, What: "the archiver make and build scripts run"},
	{Name: "AS", Effect: EnvRuns, Programs: progMake, What: "the assembler make runs"},
	{Name: "AWS_CONFIG_FILE", Effect: EnvLoads, Programs: []string{"aws"}, What: "the AWS configuration, whose credential_process runs"},
	{Name: "AWS_SHARED_CREDENTIALS_FILE", Effect: EnvLoads, Programs: []string{"aws"}, What: "the AWS credentials file"},
	{Name: "BASHOPTS", Effect: EnvLoads, Programs: progShell, What: "shell options bash takes from the environment"},
	{Name: "BASH_ENV", Effect: EnvLoads, Every: true, Paths: true, What: "a file every non-interactive bash runs before its script"},
	{Name: "BASH_FUNC_*", Effect: EnvLoads, Every: true, What: "an exported function that replaces a command of its name in every bash"},
	{Name: "BAT_CONFIG_PATH", Effect: EnvLoads, Programs: []string{"bat", "batcat"}, What: "bat's configuration (--pager)"},
	{Name: "BAT_PAGER", Effect: EnvRuns, Programs: []string{"bat", "batcat"}, What: "the pager bat runs"},
	{Name: "BROWSER", Effect: EnvRuns, What: "the browser programs open links with"},
	{Name: "BUNDLE_GEMFILE", Effect: EnvLoads, Paths: true, Programs: progRuby, What: "the Gemfile bundler evaluates (Ruby code)"},
	{Name: "CARGO_*", Effect: EnvLoads, Programs: progCargo, What: "Cargo configuration (runners, linkers, rustc wrappers, aliases, registries)"},
	{Name: "CARGO_BUILD_JOBS", Effect: EnvNone, What: "parallel jobs"},
	{Name: "CARGO_BUILD_TARGET_DIR", Effect: EnvWrites, Programs: progCargo, What: "where Cargo writes build output"},
	{Name: "CARGO_HOME", Effect: EnvLoads, Paths: true, Default: "~/.cargo", Programs: progCargo, What: "Cargo's home: configuration, registry sources, installed binaries"},
	{Name: "CARGO_INCREMENTAL", Effect: EnvNone, What: "incremental compilation"},
	{Name: "CARGO_TARGET_DIR", Effect: EnvWrites, Programs: progCargo, What: "where Cargo writes build output"},
	{Name: "CARGO_TERM_*", Effect: EnvNone, What: "terminal output"},
	{Name: "CC", Effect: EnvRuns, Programs: progMake, What: "the C compiler make, cgo and build scripts run"},
	{Name: "CFLAGS", Effect: EnvLoads, Programs: progMake, What: "compiler options (-fplugin, -wrapper, -B load or run code)"},
	{Name: "CGO_CFLAGS", Effect: EnvLoads, Programs: progGo, What: "cgo compiler options"},
	{Name: "CGO_CPPFLAGS", Effect: EnvLoads, Programs: progGo, What: "cgo preprocessor options"},
	{Name: "CGO_CXXFLAGS", Effect: EnvLoads, Programs: progGo, What: "cgo C++ compiler options"},
	{Name: "CGO_LDFLAGS", Effect: EnvLoads, Programs: progGo, What: "cgo linker options"},
	{Name: "CLASSPATH", Effect: EnvLoads, Paths: true, Programs: progJava, What: "where the JVM loads classes from"},
	{Name: "CORECLR_ENABLE_PROFILING", Effect: EnvLoads, Programs: progDotnet, What: "loads the profiler CORECLR_PROFILER_PATH names"},
	{Name: "CORECLR_PROFILER", Effect: EnvLoads, Programs: progDotnet, What: "the profiler .NET loads"},
	{Name: "CORECLR_PROFILER_*", Effect: EnvLoads, Programs: progDotnet, What: "the profiler library .NET loads"},
	{Name: "COR_PROFILER", Effect: EnvLoads, Programs: progDotnet, What: "the profiler .NET loads"},
	{Name: "COR_PROFILER_*", Effect: EnvLoads, Programs: progDotnet, What: "the profiler library .NET loads"},
	{Name: "CPP", Effect: EnvRuns, Programs: progMake, What: "the C preprocessor make runs"},
	{Name: "CPPFLAGS", Effect: EnvLoads, Programs: progMake, What: "preprocessor options"},
	{Name: "CURL_CA_BUNDLE", Effect: EnvReads, Programs: progTLS, What: "the certificates curl trusts"},
	{Name: "CURL_HOME", Effect: EnvLoads, Paths: true, Programs: []string{"curl"}, What: "where curl reads .curlrc (output files, commands)"},
	{Name: "CVS_RSH", Effect: EnvRuns, What: "the remote shell cvs runs"},
	{Name: "CXX", Effect: EnvRuns, Programs: progMake, What: "the C++ compiler make, cgo and build scripts run"},
	{Name: "CXXFLAGS", Effect: EnvLoads, Programs: progMake, What: "C++ compiler options"},
	{Name: "DELTA_PAGER", Effect: EnvRuns, Programs: []string{"delta", "git"}, What: "the pager delta runs"},
	{Name: "DIFF", Effect: EnvRuns, What: "the diff program some tools run"},
	{Name: "DOCKER_CONFIG", Effect: EnvLoads, Paths: true, Programs: []string{"docker"}, What: "docker's configuration (credential helpers run)"},
	{Name: "DOTNET_ADDITIONAL_DEPS", Effect: EnvLoads, Paths: true, Programs: progDotnet, What: "extra dependency files .NET loads assemblies from"},
	{Name: "DOTNET_ROOT", Effect: EnvRuns, Paths: true, Programs: progDotnet, What: "where the .NET runtime is found"},
	{Name: "DOTNET_SHARED_STORE", Effect: EnvLoads, Paths: true, Programs: progDotnet, What: "where .NET loads shared assemblies"},
	{Name: "DOTNET_STARTUP_HOOKS", Effect: EnvLoads, Paths: true, Programs: progDotnet, What: "assemblies .NET runs before Main"},
	{Name: "EDITOR", Effect: EnvRuns, What: "the editor programs run"},
	{Name: "ENV", Effect: EnvLoads, Paths: true, Programs: progShell, What: "a file an interactive sh (and bash --posix) runs first"},
	{Name: "F77", Effect: EnvRuns, Programs: progMake, What: "the Fortran 77 compiler make runs"},
	{Name: "FC", Effect: EnvRuns, Programs: progMake, What: "the Fortran compiler make runs"},
	{Name: "FCEDIT", Effect: EnvRuns, Programs: progShell, What: "the editor bash's fc runs"},
	{Name: "FPATH", Effect: EnvLoads, Paths: true, Programs: progShell, What: "where zsh and ksh autoload functions from"},
	{Name: "FTP_PROXY", Effect: EnvConnects, What: "the proxy for FTP"},
	{Name: "GCONV_PATH", Effect: EnvLoads, Every: true, Paths: true, What: "where glibc's iconv loads conversion modules (shared objects)"},
	{Name: "GEM_HOME", Effect: EnvLoads, Paths: true, Default: "~/.gem", Programs: progRuby, What: "where RubyGems installs and loads gems"},
	{Name: "GEM_PATH", Effect: EnvLoads, Paths: true, Programs: progRuby, What: "where RubyGems loads gems"},
	{Name: "GH_BROWSER", Effect: EnvRuns, Programs: []string{"gh"}, What: "the browser gh runs"},
	{Name: "GH_CONFIG_DIR", Effect: EnvLoads, Paths: true, Programs: []string{"gh"}, What: "gh's configuration (aliases run shell commands)"},
	{Name: "GH_EDITOR", Effect: EnvRuns, Programs: []string{"gh"}, What: "the editor gh runs"},
	{Name: "GH_PAGER", Effect: EnvRuns, Programs: []string{"gh"}, What: "the pager gh runs"},
	{Name: "GIO_EXTRA_MODULES", Effect: EnvLoads, Paths: true, What: "extra GIO modules (shared objects)"},
	{Name: "GIO_MODULE_DIR", Effect: EnvLoads, Paths: true, What: "where GIO loads modules"},
	{Name: "GIT_ALLOW_PROTOCOL", Effect: EnvProtocol, Programs: progGit, What: "the transports git may use; ext:: runs a command"},
	{Name: "GIT_ALTERNATE_OBJECT_DIRECTORIES", Effect: EnvReads, Paths: true, Programs: progGit, What: "extra object directories git reads"},
	{Name: "GIT_ASKPASS", Effect: EnvRuns, Programs: progGit, What: "the program git runs to ask for a password"},
	{Name: "GIT_ATTR_SOURCE", Effect: EnvLoads, Programs: progGit, What: "the tree git reads attributes from (filters and diff drivers run)"},
	{Name: "GIT_CEILING_DIRECTORIES", Effect: EnvNone, What: "where git stops looking for a repository"},
	{Name: "GIT_COMMON_DIR", Effect: EnvLoads, Paths: true, Programs: progGit, What: "the repository whose configuration and hooks git uses"},
	{Name: "GIT_CONFIG", Effect: EnvLoads, Paths: true, Programs: progGit, What: "a configuration file git config reads and writes"},
	{Name: "GIT_CONFIG_*", Effect: EnvLoads, Programs: progGit, What: "configuration given in the environment (GIT_CONFIG_COUNT/KEY_n/VALUE_n, GIT_CONFIG_PARAMETERS, GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM): core.pager, core.sshCommand, aliases and hooks run"},
	{Name: "GIT_CONFIG_NOSYSTEM", Effect: EnvNone, What: "skips the system configuration"},
	{Name: "GIT_DIR", Effect: EnvLoads, Paths: true, Programs: progGit, What: "the repository git works on: its configuration and hooks run"},
	{Name: "GIT_EDITOR", Effect: EnvRuns, Programs: progGit, What: "the editor git runs"},
	{Name: "GIT_EXEC_PATH", Effect: EnvRuns, Paths: true, Programs: progGit, What: "where git finds its subcommands"},
	{Name: "GIT_EXTERNAL_DIFF", Effect: EnvRuns, Programs: progGit, What: "the program git diff runs"},
	{Name: "GIT_INDEX_FILE", Effect: EnvWrites, Programs: progGit, What: "the index file git reads and writes"},
	{Name: "GIT_OBJECT_DIRECTORY", Effect: EnvWrites, Programs: progGit, What: "the directory git writes objects to"},
	{Name: "GIT_PAGER", Effect: EnvRuns, Programs: progGit, What: "the pager git runs"},
	{Name: "GIT_PROTOCOL_FROM_USER", Effect: EnvProtocol, Programs: progGit, What: "lets a repository's URLs use transports allowed to the user only"},
	{Name: "GIT_PROXY_COMMAND", Effect: EnvRuns, Programs: progGit, What: "the command git:// connections go through"},
	{Name: "GIT_SEQUENCE_EDITOR", Effect: EnvRuns, Programs: progGit, What: "the editor git rebase -i runs"},
	{Name: "GIT_SSH", Effect: EnvRuns, Programs: progGit, What: "the ssh program git runs"},
	{Name: "GIT_SSH_COMMAND", Effect: EnvRuns, Programs: progGit, What: "the ssh command line git runs"},
	{Name: "GIT_SSL_CAINFO", Effect: EnvReads, Programs: progGit, What: "the certificates git trusts"},
	{Name: "GIT_TEMPLATE_DIR", Effect: EnvLoads, Paths: true, Programs: progGit, What: "the template git init and clone copy (hooks included)"},
	{Name: "GIT_TRACE", Effect: EnvWrites, Programs: progGit, What: "git's trace: 1, 2 or true for stderr, a number for a descriptor, an absolute path for a file"},
	{Name: "GIT_TRACE2", Effect: EnvWrites, Programs: progGit, What: "git's trace2 output file, directory or af_unix: socket"},
	{Name: "GIT_TRACE2_*", Effect: EnvWrites, Programs: progGit, What: "git's trace2 event and performance output"},
	{Name: "GIT_TRACE_*", Effect: EnvWrites, Programs: progGit, What: "git's packet, performance, setup, curl... traces"},
	{Name: "GIT_WORK_TREE", Effect: EnvLoads, Paths: true, Programs: progGit, What: "the working tree git reads and writes"},
	{Name: "GLIBC_TUNABLES", Effect: EnvNone, What: "malloc and other tunables"},
	{Name: "GOBIN", Effect: EnvWrites, Programs: progGo, What: "where go install writes programs"},
	{Name: "GOCACHE", Effect: EnvLoads, Paths: true, Default: "~/.cache/go-build", Programs: progGo, What: "the build cache go links from"},
	{Name: "GOENV", Effect: EnvLoads, Paths: true, Programs: progGo, What: "the file go reads its settings from"},
	{Name: "GOFLAGS", Effect: EnvLoads, Programs: progGo, What: "flags for every go command (-toolexec, -exec, -overlay, -modfile run or load code)"},
	{Name: "GOINSECURE", Effect: EnvLoads, Programs: progGo, What: "modules fetched without TLS"},
	{Name: "GOMODCACHE", Effect: EnvLoads, Paths: true, Default: "~/go/pkg/mod", Programs: progGo, What: "where go reads module sources"},
	{Name: "GONOSUMCHECK", Effect: EnvLoads, Programs: progGo, What: "modules not checked against the checksum database"},
	{Name: "GONOSUMDB", Effect: EnvLoads, Programs: progGo, What: "modules not checked against the checksum database"},
	{Name: "GOPATH", Effect: EnvLoads, Paths: true, Default: "~/go", Programs: progGo, What: "go's module cache and install directory"},
	{Name: "GOPROXY", Effect: EnvLoads, Programs: progGo, What: "where go downloads module sources"},
	{Name: "GOROOT", Effect: EnvRuns, Paths: true, Programs: progGo, What: "the toolchain go runs"},
	{Name: "GOSUMDB", Effect: EnvLoads, Programs: progGo, What: "the checksum database (off: none)"},
	{Name: "GOTOOLCHAIN", Effect: EnvRuns, Programs: progGo, What: "the toolchain go downloads and runs"},
	{Name: "GOWORK", Effect: EnvLoads, Paths: true, Programs: progGo, What: "the go.work file naming the modules built"},
	{Name: "GRADLE_OPTS", Effect: EnvLoads, Programs: progJava, What: "JVM options for Gradle (-javaagent)"},
	{Name: "GRADLE_USER_HOME", Effect: EnvLoads, Paths: true, Programs: progJava, What: "Gradle's home: init scripts run"},
	{Name: "GREP", Effect: EnvRuns, Programs: []string{"zgrep", "zegrep", "zfgrep", "xzgrep", "xzegrep", "xzfgrep", "bzgrep", "bzegrep", "bzfgrep", "lzgrep", "zstdgrep"}, What: "the grep program zgrep, xzgrep and bzgrep run"},
	{Name: "GTK3_MODULES", Effect: EnvLoads, What: "modules every GTK 3 program loads"},
	{Name: "GTK_MODULES", Effect: EnvLoads, What: "modules every GTK program loads"},
	{Name: "GTK_PATH", Effect: EnvLoads, Paths: true, What: "where GTK loads modules"},
	{Name: "HISTFILE", Effect: EnvWrites, Programs: progShell, What: "the file an interactive shell writes its history to"},
	{Name: "HOME", Effect: EnvLoads, Paths: true, What: "where programs read their configuration (.gitconfig, .npmrc, ...)"},
	{Name: "HOSTALIASES", Effect: EnvReads, What: "host aliases the resolver reads"},
	{Name: "HTTPS_PROXY", Effect: EnvConnects, What: "the proxy for HTTPS"},
	{Name: "HTTP_PROXY", Effect: EnvConnects, What: "the proxy for HTTP"},
	{Name: "IFS", Effect: EnvLoads, Programs: progShell, What: "how the shell splits words"},
	{Name: "INPUTRC", Effect: EnvReads, Programs: progShell, What: "readline's key bindings"},
	{Name: "JAVA_HOME", Effect: EnvRuns, Paths: true, Programs: progJava, What: "the JDK build tools run"},
	{Name: "JAVA_OPTS", Effect: EnvLoads, Programs: progJava, What: "JVM options launch scripts pass (-javaagent)"},
	{Name: "JAVA_TOOL_OPTIONS", Effect: EnvLoads, Programs: progJava, What: "options every JVM takes (-javaagent, -agentpath load code)"},
	{Name: "JDK_JAVA_OPTIONS", Effect: EnvLoads, Programs: progJava, What: "options the java launcher takes (-javaagent)"},
	{Name: "KUBECONFIG", Effect: EnvLoads, Paths: true, Programs: []string{"kubectl", "helm", "k9s"}, What: "kubectl's configuration (exec credential plugins run)"},
	{Name: "LD", Effect: EnvRuns, Programs: progMake, What: "the linker make and build scripts run"},
	{Name: "LDFLAGS", Effect: EnvLoads, Programs: progMake, What: "linker options"},
	{Name: "LD_*", Effect: EnvLoads, Every: true, Paths: true, What: "the dynamic loader's settings (LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH...): libraries loaded into every program"},
	{Name: "LD_BIND_NOT", Effect: EnvNone, What: "loader binding"},
	{Name: "LD_BIND_NOW", Effect: EnvNone, What: "loader binding"},
	{Name: "LD_DEBUG", Effect: EnvNone, What: "loader debugging on stderr (to a file with LD_DEBUG_OUTPUT)"},
	{Name: "LD_DEBUG_OUTPUT", Effect: EnvWrites, Every: true, What: "the file (with the process id appended) the loader writes LD_DEBUG's output to"},
	{Name: "LD_DYNAMIC_WEAK", Effect: EnvNone, What: "weak symbol resolution"},
	{Name: "LD_PROFILE_OUTPUT", Effect: EnvWrites, Every: true, What: "the directory the loader writes LD_PROFILE's data to"},
	{Name: "LD_SHOW_AUXV", Effect: EnvNone, What: "prints the auxiliary vector"},
	{Name: "LD_TRACE_LOADED_OBJECTS", Effect: EnvNone, What: "lists libraries instead of running (ldd)"},
	{Name: "LD_VERBOSE", Effect: EnvNone, What: "loader verbosity"},
	{Name: "LD_WARN", Effect: EnvNone, What: "loader warnings"},
	{Name: "LESS", Effect: EnvLoads, Programs: progLess, What: "less's options (+cmd, -o/-O FILE, -k FILE)"},
	{Name: "LESSCLOSE", Effect: EnvRuns, Programs: progLess, What: "the command less runs after a file"},
	{Name: "LESSEDIT", Effect: EnvRuns, Programs: progLess, What: "the editor command line less runs"},
	{Name: "LESSHISTFILE", Effect: EnvWrites, Programs: progLess, What: "the file less writes its history to (- for none)"},
	{Name: "LESSKEY", Effect: EnvLoads, Paths: true, Programs: progLess, What: "less's key bindings file"},
	{Name: "LESSKEYIN", Effect: EnvLoads, Paths: true, Programs: progLess, What: "less's key bindings source"},
	{Name: "LESSKEYIN_SYSTEM", Effect: EnvLoads, Paths: true, Programs: progLess, What: "less's system key bindings source"},
	{Name: "LESSKEY_CONTENT", Effect: EnvLoads, Programs: progLess, What: "less's key bindings"},
	{Name: "LESSKEY_SYSTEM", Effect: EnvLoads, Paths: true, Programs: progLess, What: "less's system key bindings file"},
	{Name: "LESSOPEN", Effect: EnvRuns, Programs: progLess, What: "the input preprocessor less runs (|cmd %s)"},
	{Name: "LEX", Effect: EnvRuns, Programs: progMake, What: "the lexer generator make runs"},
	{Name: "LOCPATH", Effect: EnvReads, Paths: true, What: "where glibc reads locale data"},
	{Name: "LUA_CPATH", Effect: EnvLoads, Paths: true, Programs: progLua, What: "where Lua loads C modules"},
	{Name: "LUA_CPATH_*", Effect: EnvLoads, Paths: true, Programs: progLua, What: "where a Lua version loads C modules"},
	{Name: "LUA_INIT", Effect: EnvLoads, Programs: progLua, What: "code (or @file) Lua runs first"},
	{Name: "LUA_INIT_*", Effect: EnvLoads, Programs: progLua, What: "code (or @file) a Lua version runs first"},
	{Name: "LUA_PATH", Effect: EnvLoads, Paths: true, Programs: progLua, What: "where Lua loads modules"},
	{Name: "LUA_PATH_*", Effect: EnvLoads, Paths: true, Programs: progLua, What: "where a Lua version loads modules"},
	{Name: "MAKE", Effect: EnvRuns, Programs: progMake, What: "the make build scripts run"},
	{Name: "MAKEFILES", Effect: EnvLoads, Programs: progMake, What: "makefiles make reads before the others"},
	{Name: "MAKEFLAGS", Effect: EnvLoads, Programs: progMake, What: "options make takes (-f, -C, --eval, VAR=value)"},
	{Name: "MAKESHELL", Effect: EnvRuns, Programs: progMake, What: "the shell make runs recipes with (MS-DOS)"},
	{Name: "MALLOC_TRACE", Effect: EnvWrites, Every: true, What: "the file glibc's mtrace writes"},
	{Name: "MANOPT", Effect: EnvLoads, Programs: []string{"man"}, What: "man's options (-P pager, -H browser)"},
	{Name: "MANPAGER", Effect: EnvRuns, Programs: []string{"man"}, What: "the pager man runs"},
	{Name: "MAVEN_ARGS", Effect: EnvLoads, Programs: progJava, What: "arguments every mvn takes"},
	{Name: "MAVEN_OPTS", Effect: EnvLoads, Programs: progJava, What: "JVM options for Maven (-javaagent)"},
	{Name: "MFLAGS", Effect: EnvLoads, Programs: progMake, What: "options make takes"},
	{Name: "NODE_EXTRA_CA_CERTS", Effect: EnvReads, Programs: progNode, What: "extra certificates node trusts"},
	{Name: "NODE_OPTIONS", Effect: EnvLoads, Programs: progNode, What: "options every node takes (--require, --import, --loader run code)"},
	{Name: "NODE_PATH", Effect: EnvLoads, Paths: true, Programs: progNode, What: "where node loads modules"},
	{Name: "NODE_REDIRECT_WARNINGS", Effect: EnvWrites, Programs: progNode, What: "the file node writes warnings to"},
	{Name: "NODE_REPL_EXTERNAL_MODULE", Effect: EnvLoads, Paths: true, Programs: progNode, What: "a module node loads in place of its REPL"},
	{Name: "NODE_REPL_HISTORY", Effect: EnvWrites, Programs: progNode, What: "the file node's REPL writes its history to"},
	{Name: "NODE_V8_COVERAGE", Effect: EnvWrites, Programs: progNode, What: "the directory node writes coverage to"},
	{Name: "NPM_CONFIG_*", Effect: EnvLoads, Programs: progNode, What: "any npm configuration (script-shell, prefix, userconfig, registry, node-options)"},
	{Name: "NPM_CONFIG_AUDIT", Effect: EnvNone, What: "npm audit messages"},
	{Name: "NPM_CONFIG_FUND", Effect: EnvNone, What: "npm funding messages"},
	{Name: "NPM_CONFIG_LOGLEVEL", Effect: EnvNone, What: "npm verbosity"},
	{Name: "NPM_CONFIG_UPDATE_NOTIFIER", Effect: EnvNone, What: "npm update notices"},
	{Name: "OPENSSL_CONF", Effect: EnvLoads, Paths: true, What: "OpenSSL's configuration (engines and providers are shared objects)"},
	{Name: "OPENSSL_ENGINES", Effect: EnvLoads, Paths: true, What: "where OpenSSL loads engines"},
	{Name: "OPENSSL_MODULES", Effect: EnvLoads, Paths: true, What: "where OpenSSL loads providers"},
	{Name: "PAGER", Effect: EnvRuns, What: "the pager programs run"},
	{Name: "PATH", Effect: EnvRuns, Paths: true, What: "where a program's name is looked up"},
	{Name: "PERL5DB", Effect: EnvLoads, Programs: progPerl, What: "code perl -d runs as its debugger"},
	{Name: "PERL5LIB", Effect: EnvLoads, Paths: true, Programs: progPerl, What: "where perl loads modules"},
	{Name: "PERL5OPT", Effect: EnvLoads, Programs: progPerl, What: "options every perl takes (-M, -I, -d load code)"},
	{Name: "PERLLIB", Effect: EnvLoads, Paths: true, Programs: progPerl, What: "where perl loads modules"},
	{Name: "PERL_MB_OPT", Effect: EnvLoads, Programs: progPerl, What: "Module::Build options (install locations)"},
	{Name: "PERL_MM_OPT", Effect: EnvLoads, Programs: progPerl, What: "MakeMaker options (install locations)"},
	{Name: "PIP_*", Effect: EnvLoads, Programs: progPython, What: "any pip option (index URLs, find-links, config file, target)"},
	{Name: "PIP_CACHE_DIR", Effect: EnvWrites, Default: "~/.cache/pip", Programs: progPython, What: "pip's cache"},
	{Name: "PIP_DEFAULT_TIMEOUT", Effect: EnvNone, What: "network timeout"},
	{Name: "PIP_DISABLE_PIP_VERSION_CHECK", Effect: EnvNone, What: "version check"},
	{Name: "PIP_NO_COLOR", Effect: EnvNone, What: "color"},
	{Name: "PIP_NO_INPUT", Effect: EnvNone, What: "prompts"},
	{Name: "PIP_PREFIX", Effect: EnvWrites, Programs: progPython, What: "where pip installs"},
	{Name: "PIP_PROGRESS_BAR", Effect: EnvNone, What: "progress output"},
	{Name: "PIP_QUIET", Effect: EnvNone, What: "verbosity"},
	{Name: "PIP_REQUIRE_VIRTUALENV", Effect: EnvNone, What: "refuses to install outside a virtualenv"},
	{Name: "PIP_ROOT", Effect: EnvWrites, Programs: progPython, What: "where pip installs"},
	{Name: "PIP_ROOT_USER_ACTION", Effect: EnvNone, What: "root warning"},
	{Name: "PIP_SRC", Effect: EnvWrites, Programs: progPython, What: "where pip checks out editable sources"},
	{Name: "PIP_TARGET", Effect: EnvWrites, Programs: progPython, What: "where pip installs"},
	{Name: "PIP_VERBOSE", Effect: EnvNone, What: "verbosity"},
	{Name: "PKG_CONFIG", Effect: EnvRuns, Programs: progMake, What: "the pkg-config build scripts run"},
	{Name: "PKG_CONFIG_PATH", Effect: EnvLoads, Paths: true, Programs: progMake, What: "where pkg-config reads .pc files (compiler and linker flags)"},
	{Name: "PROMPT_COMMAND", Effect: EnvRuns, Programs: progShell, What: "a command an interactive bash runs before each prompt"},
	{Name: "PS0", Effect: EnvRuns, Programs: progShell, What: "a prompt an interactive bash expands ($(...) runs)"},
	{Name: "PS1", Effect: EnvRuns, Programs: progShell, What: "a prompt an interactive shell expands ($(...) runs)"},
	{Name: "PS2", Effect: EnvRuns, Programs: progShell, What: "a prompt an interactive shell expands ($(...) runs)"},
	{Name: "PS4", Effect: EnvRuns, Every: true, What: "the prefix a tracing shell expands ($(...) runs)"},
	{Name: "PYTHONBREAKPOINT", Effect: EnvLoads, Programs: progPython, What: "the callable breakpoint() imports and runs"},
	{Name: "PYTHONHOME", Effect: EnvLoads, Paths: true, Programs: progPython, What: "where python finds its standard library"},
	{Name: "PYTHONINSPECT", Effect: EnvLoads, Programs: progPython, What: "python reads code from stdin after the script (-i)"},
	{Name: "PYTHONPATH", Effect: EnvLoads, Paths: true, Programs: progPython, What: "where python imports modules from first"},
	{Name: "PYTHONPLATLIBDIR", Effect: EnvLoads, Programs: progPython, What: "python's platform library directory"},
	{Name: "PYTHONPYCACHEPREFIX", Effect: EnvWrites, Programs: progPython, What: "where python writes (and reads) compiled bytecode"},
	{Name: "PYTHONSTARTUP", Effect: EnvLoads, Paths: true, Programs: progPython, What: "a file an interactive python runs first"},
	{Name: "PYTHONUSERBASE", Effect: EnvLoads, Paths: true, Programs: progPython, What: "the user site directory python imports from"},
	{Name: "PYTHONWARNINGS", Effect: EnvLoads, Programs: progPython, What: "warning filters (a category is imported)"},
	{Name: "PYTHON_HISTORY", Effect: EnvWrites, Programs: progPython, What: "the file python's REPL writes its history to"},
	{Name: "QT_PLUGIN_PATH", Effect: EnvLoads, Paths: true, What: "where Qt loads plugins"},
	{Name: "QT_QPA_PLATFORM_PLUGIN_PATH", Effect: EnvLoads, Paths: true, What: "where Qt loads platform plugins"},
	{Name: "REQUESTS_CA_BUNDLE", Effect: EnvReads, Programs: progPython, What: "the certificates python requests trusts"},
	{Name: "RIPGREP_CONFIG_PATH", Effect: EnvLoads, Paths: true, Programs: []string{"rg"}, What: "ripgrep's configuration (--pre runs a program)"},
	{Name: "RSYNC_RSH", Effect: EnvRuns, Programs: []string{"rsync"}, What: "the remote shell rsync runs"},
	{Name: "RUBYLIB", Effect: EnvLoads, Paths: true, Programs: progRuby, What: "where ruby loads libraries"},
	{Name: "RUBYOPT", Effect: EnvLoads, Programs: progRuby, What: "options every ruby takes (-r, -I load code)"},
	{Name: "RUSTC", Effect: EnvRuns, Programs: progCargo, What: "the compiler cargo runs"},
	{Name: "RUSTC_WORKSPACE_WRAPPER", Effect: EnvRuns, Programs: progCargo, What: "the wrapper cargo runs rustc through"},
	{Name: "RUSTC_WRAPPER", Effect: EnvRuns, Programs: progCargo, What: "the wrapper cargo runs rustc through"},
	{Name: "RUSTDOC", Effect: EnvRuns, Programs: progCargo, What: "the rustdoc cargo runs"},
	{Name: "RUSTDOCFLAGS", Effect: EnvLoads, Programs: progCargo, What: "rustdoc options"},
	{Name: "RUSTFLAGS", Effect: EnvLoads, Programs: progCargo, What: "compiler options (-C linker=, plugins)"},
	{Name: "RUSTUP_HOME", Effect: EnvLoads, Paths: true, Default: "~/.rustup", Programs: progCargo, What: "where rustup finds toolchains"},
	{Name: "RUSTUP_TOOLCHAIN", Effect: EnvRuns, Programs: progCargo, What: "the toolchain rustup runs"},
	{Name: "SHELL", Effect: EnvRuns, What: "the shell programs start (script, vim's :!, npm scripts on some systems)"},
	{Name: "SHELLOPTS", Effect: EnvLoads, Programs: progShell, What: "shell options bash takes from the environment (xtrace)"},
	{Name: "SSH_ASKPASS", Effect: EnvRuns, Programs: []string{"ssh", "scp", "sftp", "git", "ssh-add"}, What: "the program ssh runs to ask for a passphrase"},
	{Name: "SSLKEYLOGFILE", Effect: EnvWrites, Programs: progTLS, What: "the file TLS libraries write session keys to"},
	{Name: "SSL_CERT_DIR", Effect: EnvReads, Paths: true, Programs: progTLS, What: "the certificates OpenSSL trusts"},
	{Name: "SSL_CERT_FILE", Effect: EnvReads, Programs: progTLS, What: "the certificates OpenSSL trusts"},
	{Name: "SUDO_ASKPASS", Effect: EnvRuns, Programs: []string{"sudo"}, What: "the program sudo -A runs"},
	{Name: "SUDO_EDITOR", Effect: EnvRuns, Programs: []string{"sudo", "sudoedit"}, What: "the editor sudoedit runs"},
	{Name: "SYSTEMD_PAGER", Effect: EnvRuns, Programs: []string{"systemctl", "journalctl", "loginctl", "busctl", "coredumpctl"}, What: "the pager systemd's tools run"},
	{Name: "UV_CONFIG_FILE", Effect: EnvLoads, Paths: true, Programs: progPython, What: "uv's configuration (indexes)"},
	{Name: "UV_DEFAULT_INDEX", Effect: EnvLoads, Programs: progPython, What: "the index uv installs from"},
	{Name: "UV_EXTRA_INDEX_URL", Effect: EnvLoads, Programs: progPython, What: "an extra index uv installs from"},
	{Name: "UV_FIND_LINKS", Effect: EnvLoads, Programs: progPython, What: "where uv finds packages"},
	{Name: "UV_INDEX", Effect: EnvLoads, Programs: progPython, What: "indexes uv installs from"},
	{Name: "UV_INDEX_URL", Effect: EnvLoads, Programs: progPython, What: "the index uv installs from"},
	{Name: "UV_PYTHON", Effect: EnvRuns, Programs: progPython, What: "the interpreter uv runs"},
	{Name: "VIRTUAL_ENV", Effect: EnvLoads, Paths: true, Programs: progPython, What: "the environment uv and poetry run python from"},
	{Name: "VISUAL", Effect: EnvRuns, What: "the editor programs run"},
	{Name: "WGETRC", Effect: EnvLoads, Paths: true, Programs: []string{"wget"}, What: "wget's configuration (output files, execute commands)"},
	{Name: "WGET_ASKPASS", Effect: EnvRuns, Programs: []string{"wget"}, What: "the program wget runs to ask for a password"},
	{Name: "XDG_CONFIG_DIRS", Effect: EnvLoads, Paths: true, What: "where programs read system configuration"},
	{Name: "XDG_CONFIG_HOME", Effect: EnvLoads, Paths: true, What: "where programs read the user's configuration (git, pip, npm...)"},
	{Name: "YACC", Effect: EnvRuns, Programs: progMake, What: "the parser generator make runs"},
	{Name: "YARN_RC_FILENAME", Effect: EnvLoads, Programs: progNode, What: "the .yarnrc.yml yarn reads (yarnPath runs)"},
	{Name: "YARN_YARN_PATH", Effect: EnvRuns, Programs: progNode, What: "the JavaScript file yarn runs as itself"},
	{Name: "ZDOTDIR", Effect: EnvLoads, Paths: true, Programs: progShell, What: "where zsh reads its startup files"},
	{Name: "_JAVA_OPTIONS", Effect: EnvLoads, Programs: progJava, What: "options every JVM takes (-javaagent)"},
	{Name: "all_proxy", Effect: EnvConnects, What: "the proxy for every protocol"},
	{Name: "ftp_proxy", Effect: EnvConnects, What: "the proxy for FTP"},
	{Name: "http_proxy", Effect: EnvConnects, What: "the proxy for HTTP"},
	{Name: "https_proxy", Effect: EnvConnects, What: "the proxy for HTTPS"},
	{Name: "npm_config_*", Effect: EnvLoads, Programs: progNode, What: "any npm configuration (script-shell, prefix, userconfig, registry, node-options)"},
	{Name: "npm_config_audit", Effect: EnvNone, What: "npm audit messages"},
	{Name: "npm_config_fund", Effect: EnvNone, What: "npm funding messages"},
	{Name: "npm_config_loglevel", Effect: EnvNone, What: "npm verbosity"},
	{Name: "npm_config_update_notifier", Effect: EnvNone, What: "npm update notices"},
}

// EnvVars returns the table of environment variables that change what a
// program runs, loads or writes, sorted by name.
func EnvVars() []EnvVar { return slices.Clone(envVars[:]) }

// EnvVarOf returns the entry for a variable name: its own, else that of
// the longest prefix entry ("CARGO_TARGET_X_RUNNER" is CARGO_*'s).
func EnvVarOf(name string) (EnvVar, bool) {
	if i, ok := slices.BinarySearchFunc(envVars[:], name, func(e EnvVar, n string) int { return strings.Compare(e.Name, n) }); ok {
		return envVars[i], true
	}
	for i := len(name) - 2; i > 0; i-- {
		if name[i] != '_' {
			continue
		}
		if j, ok := slices.BinarySearchFunc(envVars[:], name[:i+1]+"*", func(e EnvVar, n string) int { return strings.Compare(e.Name, n) }); ok {
			return envVars[j], true
		}
	}
	return EnvVar{}, false
}

// ReadsEnv reports whether program (a base name) is one of those the
// entry says read the variable: all of them when it names none.
func (v EnvVar) ReadsEnv(program string) bool {
	if len(v.Programs) == 0 {
		return true
	}
	for _, p := range v.Programs {
		if pre, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(program, pre) {
				return true
			}
		} else if p == program {
			return true
		}
	}
	return false
}

// EnvAccess is what giving a program one variable does, in the
// registry's vocabulary: Capability is empty when the value does
// nothing that matters.
type EnvAccess struct {
	Capability Capability
	// Target is the path written or read, the proxy's host, or "".
	Target string
	// Dynamic is set when the target is not known before the command runs.
	Dynamic bool
	// Why says what the value makes the program do.
	Why string
}

// JudgeEnv says what NAME=value does to a program given it. known is
// false when the value is not known before the command runs (read,
// printf -v, a substitution): it is then judged by what the variable may
// do at worst.
func JudgeEnv(name, value string, known bool) EnvAccess {
	v, ok := EnvVarOf(name)
	if !ok {
		return EnvAccess{}
	}
	switch v.Effect {
	case EnvRuns:
		if known && harmlessCommand(name, value) {
			return EnvAccess{}
		}
		if known && (name == "PS0" || name == "PS1" || name == "PS2" || name == "PS4") && !strings.ContainsAny(value, "$`\\") {
			return EnvAccess{}
		}
		if known && name == "GOTOOLCHAIN" && (value == "local" || value == "auto" || value == "path") {
			return EnvAccess{}
		}
		return EnvAccess{Capability: CodeExec, Why: name + " names a program, or a command line, that " + programsOf(v) + " run"}
	case EnvLoads:
		if known && harmlessOptions(name, value) {
			return EnvAccess{}
		}
		return EnvAccess{Capability: CodeExec, Why: name + " makes " + programsOf(v) + " load code from where it says"}
	case EnvProtocol:
		if known {
			switch name {
			case "GIT_ALLOW_PROTOCOL":
				if !slices.Contains(strings.Split(value, ":"), "ext") {
					return EnvAccess{}
				}
			case "GIT_PROTOCOL_FROM_USER":
				if value == "0" {
					return EnvAccess{}
				}
			}
		}
		return EnvAccess{Capability: CodeExec, Why: name + " lets git use a transport that runs a command (ext::)"}
	case EnvWrites:
		if known && strings.HasPrefix(name, "GIT_TRACE") && !strings.Contains(value, "/") {
			// 1, 2, true, false or a descriptor number: stderr or an
			// open descriptor, no file.
			return EnvAccess{}
		}
		if known && name == "LESSHISTFILE" && value == "-" {
			return EnvAccess{}
		}
		value = strings.TrimPrefix(value, "af_unix:")
		value = strings.TrimPrefix(strings.TrimPrefix(value, "stream:"), "dgram:")
		return EnvAccess{Capability: FSWrite, Target: value, Dynamic: !known || value == "", Why: name + " makes " + programsOf(v) + " write to " + orUnknown(value, known)}
	case EnvReads:
		return EnvAccess{Capability: FSRead, Target: value, Dynamic: !known || value == "", Why: name + " makes " + programsOf(v) + " read " + orUnknown(value, known)}
	case EnvConnects:
		host := proxyHost(value)
		return EnvAccess{Capability: NetworkHTTP, Target: host, Dynamic: !known || host == "", Why: name + " sends " + programsOf(v) + "'s traffic through " + orUnknown(host, known && host != "")}
	}
	return EnvAccess{}
}

func orUnknown(v string, known bool) string {
	if !known || v == "" {
		return "a path not known before it runs"
	}
	return v
}

func programsOf(v EnvVar) string {
	if len(v.Programs) == 0 {
		return "programs"
	}
	p := strings.TrimSuffix(v.Programs[0], "*")
	if len(v.Programs) > 1 {
		return p + " and others"
	}
	return p
}

// harmlessCommand reports a pager or editor that shows or accepts and
// runs nothing: GIT_PAGER=cat, GIT_EDITOR=true, GIT_SEQUENCE_EDITOR=:.
func harmlessCommand(name, value string) bool {
	if !strings.HasSuffix(name, "PAGER") && !strings.HasSuffix(name, "EDITOR") && name != "VISUAL" {
		return false
	}
	v := strings.TrimSpace(value)
	v = strings.TrimPrefix(strings.TrimPrefix(v, "/usr"), "/bin/")
	switch v {
	case "cat", "true", "false", ":", "less", "more":
		return true
	}
	return false
}

// harmlessOptions reports option values that load no code: NODE_OPTIONS
// of memory and diagnostics flags only, GOFLAGS of module and build mode
// flags only, LESS with display options only, GOPROXY=off, an empty
// search path.
func harmlessOptions(name, value string) bool {
	switch name {
	case "NODE_OPTIONS":
		for _, f := range strings.Fields(value) {
			opt, _, _ := strings.Cut(f, "=")
			switch opt {
			case "--max-old-space-size", "--max-semi-space-size", "--enable-source-maps", "--no-warnings",
				"--no-deprecation", "--trace-warnings", "--trace-deprecation", "--trace-uncaught",
				"--unhandled-rejections", "--openssl-legacy-provider", "--dns-result-order",
				"--experimental-vm-modules", "--no-experimental-fetch", "--use-openssl-ca", "--use-bundled-ca",
				"--stack-trace-limit", "--preserve-symlinks", "--pending-deprecation", "--throw-deprecation":
			default:
				return false
			}
		}
		return true
	case "GOFLAGS":
		for _, f := range strings.Fields(value) {
			opt, _, _ := strings.Cut(strings.TrimPrefix(f, "-"), "=")
			switch opt {
			case "-mod", "mod", "-modcacherw", "modcacherw", "-buildvcs", "buildvcs", "-trimpath", "trimpath",
				"-race", "race", "-tags", "tags", "-v", "v", "-count", "count", "-p", "p", "-short", "short",
				"-timeout", "timeout", "-failfast", "failfast", "-cover", "cover":
			default:
				return false
			}
		}
		return true
	case "GOPROXY":
		return value == "off"
	case "GOSUMDB":
		return false
	case "LESS":
		return lessDisplayOnly(value)
	}
	return false
}

// lessDisplayOnly reports a LESS value whose options change only the
// display (-R, -F, -X, ...): not +CMD, -o/-O FILE, -k FILE, ...
func lessDisplayOnly(v string) bool {
	if v == "" || strings.ContainsAny(v, "+$`\\\"'") {
		return false
	}
	var words []shellparse.Word
	for _, f := range strings.Fields(v) {
		words = append(words, shellparse.Word{Value: f})
	}
	spec := specOf("less")
	return len(optionValues(words, spec, spec.outs)) == 0 && len(optionValues(words, spec, spec.runs)) == 0
}

// proxyHost is the host of a proxy setting: a URL or host[:port].
func proxyHost(v string) string {
	if v == "" {
		return ""
	}
	if !strings.Contains(v, "://") {
		v = "http://" + v
	}
	u, err := url.Parse(v)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// splitAssign splits a NAME=value word of Command.Assigns. known is false
// for a value computed at run time (its text holds $ or a backquote), an
// append (NAME+=), an array element, and the empty value the parser
// writes for an exported variable it cannot follow.
func SplitAssign(a string) (name, value string, known bool) {
	name, value, _ = strings.Cut(a, "=")
	known = value != "" && !strings.ContainsAny(value, "$`")
	if n, ok := strings.CutSuffix(name, "+"); ok {
		name, known = n, false
	}
	if i := strings.IndexByte(name, '['); i > 0 {
		name, known = name[:i], false
	}
	return name, value, known
}

// envAssign judges one variable given to the command (its own NAME=value
// words, env's, those the script exported to it) or set by it for the
// commands after it (later): it adds the access and, for what runs code,
// the floor.
func (c *Classification) envAssign(cmd shellparse.Command, pl Place, name, value string, known, later bool) {
	if code, ok := EnvInPlace(name, value, known, pl); ok {
		if code {
			c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
			if c.Verb == "compute" || c.Verb == "read" {
				c.Verb = "run"
			}
		}
		return
	}
	j := JudgeEnv(name, value, known)
	if j.Capability == "" {
		return
	}
	whom := "the program"
	if later {
		whom = "the programs after it"
	}
	switch j.Capability {
	case CodeExec:
		c.Accesses = append(c.Accesses, Access{Capability: CodeExec, Target: cmd.String()})
		c.raise(Ask, "sets "+name+", which can make "+whom+" run other code: "+j.Why)
		if c.Verb == "compute" || c.Verb == "read" {
			c.Verb = "run"
		}
	case FSWrite, FSRead:
		n := len(c.Accesses)
		if j.Dynamic {
			c.Accesses = append(c.Accesses, Access{Capability: j.Capability, Target: j.Target, Dynamic: true})
		} else {
			c.add(pl, j.Capability, shellparse.Word{Value: j.Target})
		}
		if j.Capability != FSWrite {
			break
		}
		// A write the command line does not show, outside the places
		// commands write freely, asks at every level.
		for _, a := range c.Accesses[n:] {
			if a.Dynamic || !deletable(a.Target, pl) {
				c.raise(Ask, "sets "+name+": "+j.Why)
				break
			}
		}
	case NetworkHTTP:
		c.Accesses = append(c.Accesses, Access{Capability: NetworkHTTP, Target: j.Target, Dynamic: j.Dynamic})
	}
}

// setsVariables returns the variables a builtin assigns a value not
// known before it runs (read, printf -v, mapfile, getopts). A name
// reference (declare -n r=PATH) changes nothing by itself; what is
// assigned through it is the parser's to follow.
func setsVariables(name string, args []shellparse.Word) []string {
	var out []string
	switch name {
	case "read":
		for i := 0; i < len(args); i++ {
			v := args[i].Value
			switch {
			case v == "--":
				for _, w := range args[i+1:] {
					out = append(out, w.Value)
				}
				return out
			case strings.HasPrefix(v, "-") && len(v) > 1:
				// -a NAME; -d, -i, -n, -N, -p, -t, -u take a value.
				for k := 1; k < len(v); k++ {
					if strings.IndexByte("adinNptu", v[k]) >= 0 {
						val := v[k+1:]
						if val == "" && i+1 < len(args) {
							i++
							val = args[i].Value
						}
						if v[k] == 'a' {
							out = append(out, val)
						}
						break
					}
				}
			default:
				out = append(out, v)
			}
		}
	case "printf":
		for i := 0; i < len(args); i++ {
			v := args[i].Value
			if v == "-v" && i+1 < len(args) {
				out = append(out, args[i+1].Value)
				break
			}
			if n, ok := strings.CutPrefix(v, "-v"); ok && n != "" {
				out = append(out, n)
				break
			}
			if !strings.HasPrefix(v, "-") || v == "--" {
				break
			}
		}
	case "mapfile", "readarray":
		for i := 0; i < len(args); i++ {
			v := args[i].Value
			if strings.HasPrefix(v, "-") && len(v) > 1 {
				if k := strings.IndexAny(v[1:], "dnOsuCc"); k >= 0 && k == len(v)-2 {
					i++ // the option's value is the next word
				}
				continue
			}
			out = append(out, v)
			break
		}
	case "getopts":
		if len(args) >= 2 {
			out = append(out, args[1].Value)
		}
	}
	return out
}

// startsNoProgram reports a shell builtin that runs in the shell itself
// and starts no program (echo, printf, cd, export, ...), so that no
// variable it is given changes what it does: the shell runs it (or a
// shell's -c, command or builtin peeled before it), not env, sudo or
// xargs, which would start the program of that name.
func startsNoProgram(cmd shellparse.Command, name string) bool {
	switch name {
	case "echo", "printf", "cd", "export", "declare", "typeset", "local", "readonly", "unset", "set", "shift",
		"test", "[", "true", "false", ":", "alias", "unalias", "exit", "return", "umask", "shopt", "break",
		"continue", "pwd", "read", "getopts":
	default:
		return false
	}
	if strings.Contains(cmd.Argv[0].Value, "/") {
		return false
	}
	if n := len(cmd.Wrappers); n > 0 {
		last := cmd.Wrappers[n-1].Name
		return last == "command" || last == "builtin" || strings.HasSuffix(last, " -c")
	}
	return true
}

// readByShell reports a variable the shell that runs a builtin reads
// itself (BASH_ENV, PS4, the loader's), or may have been started with.
func readByShell(name string) bool {
	v, ok := EnvVarOf(name)
	return ok && (v.Every || slices.Contains(v.Programs, "bash"))
}

// envSetters judges the variables a builtin sets for the commands after
// it (read PATH, printf -v PAGER, mapfile LD_PRELOAD, declare -n r=PATH;
// export and declare NAME=value).
func (c *Classification) envSetters(cmd shellparse.Command, pl Place, name string) {
	args := cmd.Argv[1:]
	for _, n := range setsVariables(name, args) {
		if strings.ContainsAny(n, "$`") {
			continue // a dynamic name: the parser forgets what it may set
		}
		c.envAssign(cmd, pl, n, "", false, true)
	}
	switch name {
	case "export", "declare", "typeset", "local", "readonly":
		// export PAGER=... makes later programs run that command.
		for _, w := range args {
			if n, v, ok := strings.Cut(w.Value, "="); ok && !strings.HasPrefix(w.Value, "-") {
				n, v, known := SplitAssign(n + "=" + v)
				c.envAssign(cmd, pl, n, v, known && !w.Dynamic, true)
			}
		}
	}
}

// sortedEnvVars is checked by a test: EnvVarOf searches the table.
func sortedEnvVars() bool {
	return slices.IsSortedFunc(envVars[:], func(a, b EnvVar) int { return strings.Compare(a.Name, b.Name) })
}

// systemPrefixes are where the system keeps programs: no command
// writes there without privileges.
var systemPrefixes = []string{"/usr", "/bin", "/sbin", "/lib", "/snap", "/nix/store"}

// EnvInPlace judges NAME=value given to a program where the place says
// more than JudgeEnv can, for the two variables a build's toolchain is
// chosen by: a PATH known before the command runs (the script's own
// PATH=…, export, a sourced file shellparse.Env.Sourced knows) whose
// every directory is one commands do not write freely, so the programs
// found there are the ones installed: a directory already on the PATH
// the command inherits (Place.Path), the system's, or a tool directory
// under home (Place.Tools); and a VIRTUAL_ENV naming a virtualenv of the
// workspace whose bin is among Place.Tools. A virtualenv of the
// workspace on either means the workspace's code runs (workspaceCode:
// code:exec, which the sandbox confines). ok is false when the place
// does not settle it (a relative or empty entry, another directory of
// the workspace, temp, the rest of home, another variable): JudgeEnv
// then judges it as a variable that can make programs run other code.
func EnvInPlace(name, value string, known bool, pl Place) (workspaceCode, ok bool) {
	if !known {
		return false, false
	}
	switch name {
	case "PATH":
		for _, d := range strings.Split(value, ":") {
			if !path.IsAbs(d) {
				return false, false // "" and relative entries are the working directory's
			}
			d = path.Clean(d)
			switch {
			case slices.Contains(pl.Path, d):
			case WithinAny(d, pl.Tools):
				if pl.Workspace != "" && Within(pl.Workspace, d) {
					workspaceCode = true
				}
			case WithinAny(d, systemPrefixes) && (pl.Home == "" || !Within(pl.Home, d)):
			default:
				return false, false
			}
		}
		return workspaceCode, true
	case "VIRTUAL_ENV":
		bin := path.Join(path.Clean(value), "bin")
		if path.IsAbs(value) && pl.Workspace != "" && Within(pl.Workspace, bin) && slices.Contains(pl.Tools, bin) {
			return true, true
		}
	}
	return false, false
}
