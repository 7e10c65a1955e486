#!/bin/bash
# usage: threads_busy.sh REPS SPEC BIN BUSY: serial's train_s with --threads 1 and 2 (the default
# here), alternated run by run beside BUSY processes that spin (python3 -c "while True: pass");
# medians [least-most].
N=$1; SPEC=$2; BIN=$3; BUSY=$4
dir=$(mktemp -d)
pids=()
for _ in $(seq "$BUSY"); do python3 -c "while True: pass" & pids+=($!); done
for i in $(seq "$N"); do for t in 1 2; do
  "$BIN" run "$SPEC" --mode serial --threads $t --backend cpu --quiet --json "$dir/r.json" >/dev/null 2>&1
  python3 -c "import json,sys; print('$t', json.load(open(sys.argv[1]))['train_s'])" "$dir/r.json"
done; done | python3 -c "
import sys, statistics as st, collections
d = collections.defaultdict(list)
for l in sys.stdin: t, v = l.split(); d[t].append(float(v))
for t, v in d.items(): print('--threads %s: train_s median %.3f [%.3f-%.3f] of %d' % (t, st.median(v), min(v), max(v), len(v)))
print('2 threads over 1: %.3fx the time' % (st.median(d['2']) / st.median(d['1'])))
"
[ ${#pids[@]} -gt 0 ] && kill "${pids[@]}"
rm -rf "$dir"
