#!/bin/bash
# usage: journaled.sh REPS SPEC NAME=BIN...: train_s of serial, packed and streams with the journal
# written (--json, so OUT.journal beside it), builds and modes alternated run by run (--backend cpu);
# medians and ranges, and packed's and streams' samples/s over serial's per build.
N=$1; SPEC=$2; shift 2
dir=$(mktemp -d)
for i in $(seq "$N"); do for build in "$@"; do for m in serial packed streams; do
  "${build#*=}" run "$SPEC" --mode $m --backend cpu --quiet --json "$dir/r.json" >/dev/null 2>&1
  python3 -c "import json,sys; print('${build%%=*}', '$m', json.load(open(sys.argv[1]))['train_s'])" "$dir/r.json"
done; done; done | python3 -c "
import sys, statistics as st, collections
d = collections.defaultdict(list)
for l in sys.stdin: b, m, v = l.split(); d[b, m].append(float(v))
for (b, m), v in d.items(): print(b, m, 'train_s median %.4f [%.4f-%.4f]' % (st.median(v), min(v), max(v)), len(v))
for b in dict.fromkeys(b for b, _ in d):
  s = st.median(d[b, 'serial'])
  print(b, 'samples/s over serial: packed %.2fx, streams %.2fx' % (s / st.median(d[b, 'packed']), s / st.median(d[b, 'streams'])))
"
rm -rf "$dir"
