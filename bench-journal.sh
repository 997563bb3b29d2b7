#!/usr/bin/env bash
# The journal's cost on real work, side by side: every workload runs under
# `mnemos run` with the journal on and with it off (journal: enabled: false),
# alternately in one hyperfine run, so a noisy machine weighs on both alike.
# Needs hyperfine. Usage: ./bench-journal.sh [RUNS]
# Workloads: a run that changes nothing (/bin/true); unpacking 10 000 small
# files (tar); `git checkout` between two distant commits of a large
# repository (GIT_REPO=DIR, a clone with history, e.g. of git itself; skipped
# without); `npm run build` of a JavaScript project (NPM_PROJECT=DIR, with
# node_modules installed; skipped without); `go test ./...` of mnemos itself
# (BENCH_GO_TEST=1; minutes per run).
set -euo pipefail
cd "$(dirname "$0")"
src=$(pwd)
runs=${1:-10}
command -v hyperfine >/dev/null || { echo "bench-journal.sh: install hyperfine (apt-get install hyperfine)" >&2; exit 1; }
# Outside /tmp, on the file system the state directory is on.
tmp=$(mktemp -d -p /var/tmp)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$tmp/mnemos" ./cmd/mnemos
m="$tmp/mnemos"
for mode in on off; do
  h="$tmp/home-$mode"
  "$m" --home "$h" init >/dev/null
  sed -i 's/^level: .*/level: full/' "$h/policy.yaml"
  if [ $mode = off ]; then
    # Without the journal a big deletion asks; here it is timed.
    sed -i '/^journal:/,/^[a-z]/{s/^  enabled: true/  enabled: false/; s/^  big_deletion: .*/  big_deletion: 1000000/}' "$h/policy.yaml"
  fi
  grep -q "enabled: $([ $mode = on ] && echo true || echo false)" "$h/policy.yaml" || { echo "bench-journal.sh: the default policy has no journal: enabled line" >&2; exit 1; }
  # Without the journal nothing is contained work: code asks at full.
  # The same rules in both homes let the timed commands run.
  cat >>"$h/policy.yaml" <<'POL'
rules:
  - {name: bench tar, action: allow, command: {argv_prefix: [tar, -xf]}}
  - {name: bench checkout, action: allow, command: {argv_prefix: [git, checkout]}}
  - {name: bench npm, action: allow, command: {argv_prefix: [npm, run, build]}}
  - {name: bench go test, action: allow, command: {argv_prefix: [go, test]}}
POL
done
on="$m --home $tmp/home-on run --"
off="$m --home $tmp/home-off run --"

# 10 000 small files in 100 directories, as a tarball to unpack.
mkdir -p "$tmp/src/files"
for d in $(seq 100); do
  mkdir "$tmp/src/files/d$d"
  for f in $(seq 100); do echo "file $d/$f" >"$tmp/src/files/d$d/f$f"; done
done
git init -q "$tmp/ws"
# Ignored, as build outputs are: deleting untracked files is work
# dropped, which without the journal asks.
echo files/ >"$tmp/ws/.gitignore"
# Inside the workspace, where the sandbox lets tar read it.
tar -C "$tmp/src" -cf "$tmp/ws/files.tar" files
cd "$tmp/ws"
args=(-N --warmup 2 --runs "$runs")
hyperfine "${args[@]}" --export-markdown "$tmp/nothing.md" \
  -n 'nothing, journal on' "$on /bin/true" -n 'nothing, journal off' "$off /bin/true"
hyperfine "${args[@]}" --export-markdown "$tmp/files.md" --prepare "rm -rf $tmp/ws/files" \
  -n '10000 files, journal on' "$on tar -xf $tmp/ws/files.tar" -n '10000 files, journal off' "$off tar -xf $tmp/ws/files.tar"
# The same 10 000 files deleted (each one kept first, with the journal on).
hyperfine "${args[@]}" --export-markdown "$tmp/rm.md" --prepare "sh -c 'rm -rf $tmp/ws/files; tar -xf $tmp/ws/files.tar'" \
  -n 'rm 10000 files, journal on' "$on rm -r files" -n 'rm 10000 files, journal off' "$off rm -r files"
out=("$tmp/nothing.md" "$tmp/files.md" "$tmp/rm.md")
if [ -n "${GIT_REPO:-}" ]; then
  # Two commits far apart; each timed run goes from one to the other.
  a=$(git -C "$GIT_REPO" rev-parse HEAD)
  b=$(git -C "$GIT_REPO" rev-list -n 1 --before=5.years HEAD)
  cd "$GIT_REPO"
  git checkout -q "$a"
  hyperfine "${args[@]}" --export-markdown "$tmp/git.md" --prepare "git checkout -q -f $a" \
    -n 'git checkout, journal on' "$on git checkout -q $b" -n 'git checkout, journal off' "$off git checkout -q $b"
  git checkout -q -f "$a"
  out+=("$tmp/git.md")
fi
if [ -n "${NPM_PROJECT:-}" ]; then
  cd "$NPM_PROJECT"
  hyperfine "${args[@]}" --export-markdown "$tmp/npm.md" \
    -n 'npm run build, journal on' "$on npm run build" -n 'npm run build, journal off' "$off npm run build"
  out+=("$tmp/npm.md")
fi
if [ -n "${BENCH_GO_TEST:-}" ]; then
  cd "$src"
  # Some of mnemos's tests cannot pass inside a sandbox (they build
  # namespaces of their own); the time is what is compared.
  hyperfine -N -i --runs "${GO_TEST_RUNS:-1}" --export-markdown "$tmp/gotest.md" \
    -n 'go test ./..., journal on' "$on go test -count=1 ./..." -n 'go test ./..., journal off' "$off go test -count=1 ./..."
  out+=("$tmp/gotest.md")
fi
cat "${out[@]}"
