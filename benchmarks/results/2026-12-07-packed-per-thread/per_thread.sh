#!/bin/bash
# usage: per_thread.sh REPS SPEC BIN BUSY WHOLE: packed mode's wall_s with --threads 2, its default
# (a pack per thread) against --pack-size WHOLE (one pack of all the models, its operations spread
# over both threads), alternated run by run beside BUSY processes that spin
# (python3 -c "while True: pass"); medians [least-most].
N=$1; SPEC=$2; BIN=$3; BUSY=$4; WHOLE=$5
dir=$(mktemp -d)
pids=()
for _ in $(seq "$BUSY"); do python3 -c "while True: pass" & pids+=($!); done
for i in $(seq "$N"); do for size in 0 "$WHOLE"; do
  "$BIN" run "$SPEC" --mode packed --pack-size "$size" --threads 2 --backend cpu --quiet \
    --json "$dir/r.json" >/dev/null 2>&1
  python3 -c "import json,sys; print('$size', json.load(open(sys.argv[1]))['wall_s'])" "$dir/r.json"
done; done | python3 -c "
import sys, statistics as st, collections
d = collections.defaultdict(list)
for l in sys.stdin: s, v = l.split(); d[s].append(float(v))
name = {'0': 'a pack per thread', '$WHOLE': 'one pack of $WHOLE'}
for s, v in d.items(): print('%s: wall_s median %.3f [%.3f-%.3f] of %d' % (name[s], st.median(v), min(v), max(v), len(v)))
print('a pack per thread over one pack: %.3fx the time' % (st.median(d['0']) / st.median(d['$WHOLE'])))
"
[ ${#pids[@]} -gt 0 ] && kill "${pids[@]}"
rm -rf "$dir"
