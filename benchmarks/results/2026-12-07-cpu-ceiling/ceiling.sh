#!/bin/bash
# usage: ceiling.sh REPS SPEC BIN: how much faster than serial two cores can train SPEC's models at
# all. Alternates, run by run (--backend cpu, --quiet): serial on one thread alone; two such serial
# runs at once (the ceiling: two independent copies, nothing shared but the machine); packed and
# streams on two threads. Prints train_s medians [least-most] and each one's samples/s over serial's
# (two copies at once trained twice the samples in the slower copy's train_s).
N=$1; SPEC=$2; BIN=$3
dir=$(mktemp -d)
train_s() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['train_s'])" "$1"; }
for i in $(seq "$N"); do
  "$BIN" run "$SPEC" --mode serial --threads 1 --backend cpu --quiet --json "$dir/a.json" >/dev/null 2>&1
  echo serial "$(train_s "$dir/a.json")"
  "$BIN" run "$SPEC" --mode serial --threads 1 --backend cpu --quiet --json "$dir/b.json" >/dev/null 2>&1 &
  "$BIN" run "$SPEC" --mode serial --threads 1 --backend cpu --quiet --json "$dir/c.json" >/dev/null 2>&1
  wait
  echo two-at-once "$(python3 -c "print(max($(train_s "$dir/b.json"), $(train_s "$dir/c.json")) / 2)")"
  for m in packed streams; do
    "$BIN" run "$SPEC" --mode $m --threads 2 --backend cpu --quiet --json "$dir/d.json" >/dev/null 2>&1
    echo $m "$(train_s "$dir/d.json")"
  done
done | python3 -c "
import sys, statistics as st, collections
d = collections.defaultdict(list)
for l in sys.stdin: m, v = l.split(); d[m].append(float(v))
s = st.median(d['serial'])
for m, v in d.items():
  print('%-12s train_s per copy of the models: median %.3f [%.3f-%.3f] of %d; samples/s over serial %.2fx'
        % (m, st.median(v), min(v), max(v), len(v), s / st.median(v)))
"
rm -rf "$dir"
