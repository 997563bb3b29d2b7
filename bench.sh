#!/usr/bin/env bash
# Whole-process timings of mnemos against /bin/true, side by side; then the
# decision in one process (the Decide benchmarks, against their budget);
# then the sandbox's share of a run.
# Needs hyperfine (Debian package "hyperfine"). Usage: ./bench.sh [RUNS [ROUNDS]]
# RUNS is hyperfine's runs per command; ROUNDS the rounds of 100 starts of
# the sandbox benchmark at the end. MNEMOS_DECIDE_ROUNDS (default 6) is
# the rounds of the Decide benchmarks, each benchmark 2s a round.
# MNEMOS_BASELINE=REV also builds revision REV, times its run in the same
# hyperfine run and its Decide benchmarks in the same rounds, alternating
# with this tree's, so that a noisy machine weighs on both alike.
set -euo pipefail
cd "$(dirname "$0")"
src=$(pwd)
runs=${1:-50}
rounds=${2:-20}
decide_rounds=${MNEMOS_DECIDE_ROUNDS:-6}
command -v hyperfine >/dev/null || { echo "bench.sh: install hyperfine (apt-get install hyperfine)" >&2; exit 1; }
# Outside /tmp: the sandbox refuses to grant /tmp when it holds mnemos's state.
tmp=$(mktemp -d -p /var/tmp)
trap 'rm -rf "$tmp"' EXIT
# Static, as shipped: cgo (pulled in by os/user, net and psx) costs ~1 ms per process start.
CGO_ENABLED=0 go build -trimpath -o "$tmp/mnemos" ./cmd/mnemos
export MNEMOS_HOME="$tmp/home"
"$tmp/mnemos" init >/dev/null
# A policy that allows /bin/true by rule, so the run path is exercised.
cat >>"$MNEMOS_HOME/policy.yaml" <<'POL'
rules:
  - name: bench true
    action: allow
    command: {argv_prefix: [/bin/true]}
POL
cd "$tmp"
git init -q repo && cd repo
# For scale, where they work here: bubblewrap and sudo starting /bin/true.
scale=()
if command -v bwrap >/dev/null && bwrap --ro-bind / / /bin/true 2>/dev/null; then
  scale+=(-n bwrap 'bwrap --ro-bind / / /bin/true')
fi
if command -v sudo >/dev/null && sudo -n /bin/true 2>/dev/null; then
  scale+=(-n sudo 'sudo -n /bin/true')
fi
# MNEMOS_BASELINE=REV also times `policy check` and `run` as built from
# that revision, in the same hyperfine run, with its own state directory.
baseline=()
if [ -n "${MNEMOS_BASELINE:-}" ]; then
  mkdir "$tmp/base"
  git -C "$src" archive "$MNEMOS_BASELINE" | tar -x -C "$tmp/base"
  (cd "$tmp/base" && CGO_ENABLED=0 go build -trimpath -o "$tmp/mnemos-base" ./cmd/mnemos)
  "$tmp/mnemos-base" --home "$tmp/basehome" init >/dev/null
  cat >>"$tmp/basehome/policy.yaml" <<'POL'
rules:
  - name: bench true
    action: allow
    command: {argv_prefix: [/bin/true]}
POL
  baseline+=(-n check-baseline "$tmp/mnemos-base --home $tmp/basehome policy check --dry-run -- git status"
    -n run-baseline "$tmp/mnemos-base --home $tmp/basehome run -- /bin/true")
fi
hyperfine -N --warmup 5 --runs "$runs" --export-json "$tmp/h.json" \
  -n true '/bin/true' \
  -n check "$tmp/mnemos policy check --dry-run -- git status" \
  -n check-recorded "$tmp/mnemos policy check -- git status" \
  -n run "$tmp/mnemos run -- /bin/true" \
  "${baseline[@]}" "${scale[@]}" >&2
python3 - "$tmp/h.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
base = r["true"]["median"]
for name, x in r.items():
    print(f"{name:16s} median {x['median']*1000:7.3f} ms  {x['median']/base:5.1f}x /bin/true  (n={len(x['times'])})")
PY
ls -l "$tmp/mnemos" | awk '{print "binary size: " $5 " bytes"}'

# The decision in one process: parse, guard, policy and judge over one
# request with the default policy, recording nothing (gate/bench_test.go).
# Budget: 3-command script <= 20 us, 50-command script <= 200 us. Each
# round runs every binary once (-test.cpu 1), baseline first; the medians
# of the rounds are compared, and benchstat's table printed when it is
# installed (go install golang.org/x/perf/cmd/benchstat@latest).
cd "$src"
go test -c -o "$tmp/decide.test" ./gate/
decide_bins=("$tmp/decide.test")
decide_dirs=("$src/gate")
decide_names=(this)
if [ -n "${MNEMOS_BASELINE:-}" ]; then
  (cd "$tmp/base" && go test -c -o "$tmp/decide-base.test" ./gate/)
  decide_bins=("$tmp/decide-base.test" "${decide_bins[@]}")
  decide_dirs=("$tmp/base/gate" "${decide_dirs[@]}")
  decide_names=(baseline "${decide_names[@]}")
fi
for _ in $(seq "$decide_rounds"); do
  for i in "${!decide_bins[@]}"; do
    (cd "${decide_dirs[$i]}" && "${decide_bins[$i]}" -test.run '^$' -test.bench '^BenchmarkDecide' \
      -test.benchtime 2s -test.count 1 -test.cpu 1 -test.benchmem) >>"$tmp/decide-${decide_names[$i]}.txt"
  done
done
python3 - "$tmp" "${decide_names[@]}" <<'PY'
import re, statistics, sys
tmp, names = sys.argv[1], sys.argv[2:]
budget = {"DecideThreeCommands": 20e3, "DecideFiftyCommands": 200e3}
res = {}
for name in names:
    for line in open(f"{tmp}/decide-{name}.txt"):
        m = re.match(r"Benchmark(\w+)\s+\d+\s+([\d.]+) ns/op\s+(\d+) B/op\s+(\d+) allocs/op", line)
        if m:
            r = res.setdefault((m.group(1), name), [[], 0, 0])
            r[0].append(float(m.group(2)))
            r[1], r[2] = int(m.group(3)), int(m.group(4))
for (bench, name), (ns, b, allocs) in sorted(res.items()):
    med = statistics.median(ns)
    line = f"{bench:26s} {name:8s} median {med/1e3:8.1f} us/op (min {min(ns)/1e3:.1f}, n={len(ns)})  {b:7d} B/op  {allocs:5d} allocs/op"
    if bench in budget:
        line += f"  budget {budget[bench]/1e3:.0f} us: {'within' if med <= budget[bench] else 'OVER'}"
    print(line)
    if name == "this" and "baseline" in names and (bench, "baseline") in res:
        base = statistics.median(res[(bench, "baseline")][0])
        print(f"{'':26s} {'':8s} {med/base:5.2f}x the baseline's median")
PY
benchstat=$(command -v benchstat || echo "$(go env GOPATH)/bin/benchstat")
if [ -x "$benchstat" ] && [ -n "${MNEMOS_BASELINE:-}" ]; then
  "$benchstat" "$tmp/decide-baseline.txt" "$tmp/decide-this.txt"
fi

# The sandbox's share of a run, in one process: /bin/true started and
# waited for plainly, then with sandbox.Start under the spec the gate builds
# for `mnemos run -- /bin/true`, and building that spec. The product has no
# switch to turn the sandbox off, so it is timed from Go: ROUNDS rounds of
# 100 starts each, the medians of the rounds compared.
cd "$src"
go test -run '^$' -bench '^BenchmarkSandboxStart$' -benchtime 100x -count "$rounds" ./gate/ >"$tmp/sandbox.txt"
python3 - "$tmp/sandbox.txt" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"BenchmarkSandboxStart/(\w+)-\d+\s+\d+\s+([\d.]+) ns/op", line)
    if m:
        runs.setdefault(m.group(1), []).append(float(m.group(2)) / 1e6)
med = {k: statistics.median(v) for k, v in runs.items()}
for name, what in [("exec", "/bin/true, plain exec.Cmd"), ("sandbox", "/bin/true, sandbox.Start"),
                   ("noview", "/bin/true, without the view"), ("helper", "/bin/true, view by the helper"),
                   ("prepared", "/bin/true, prepared thread"), ("spec", "building the run's spec")]:
    if name in med:
        print(f"{what:28s} median {med[name]:7.3f} ms  (n={len(runs[name])} rounds of 100)")
print(f"{'the view, on a thread':28s} median {med['sandbox'] - med['noview']:7.3f} ms  (sandbox - noview: as root)")
if "helper" in med:
    print(f"{'the view, by the helper':28s} median {med['helper'] - med['noview']:7.3f} ms  (helper - noview: without CAP_SYS_ADMIN)")
added = med["sandbox"] - med["exec"] + med["spec"]
print(f"{'sandbox step, cold':28s} median {added:7.3f} ms  (sandbox - exec + spec: nothing prepared)")
print(f"{'sandbox step, as run':28s} median {med['prepared'] - med['exec']:7.3f} ms  (prepared - exec: spec and thread prepared during the decision; target 0.3 ms)")
PY
