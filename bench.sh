#!/usr/bin/env bash
# Whole-process timings of mnemos against /bin/true, side by side.
# Needs hyperfine (Debian package "hyperfine"). Usage: ./bench.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")"
runs=${1:-50}
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
hyperfine -N --warmup 5 --runs "$runs" --export-json "$tmp/h.json" \
  -n true '/bin/true' \
  -n check "$tmp/mnemos policy check --dry-run -- git status" \
  -n check-recorded "$tmp/mnemos policy check -- git status" \
  -n run "$tmp/mnemos run -- /bin/true" >&2
python3 - "$tmp/h.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
base = r["true"]["median"]
for name, x in r.items():
    print(f"{name:16s} median {x['median']*1000:7.3f} ms  {x['median']/base:5.1f}x /bin/true  (n={len(x['times'])})")
PY
ls -l "$tmp/mnemos" | awk '{print "binary size: " $5 " bytes"}'
