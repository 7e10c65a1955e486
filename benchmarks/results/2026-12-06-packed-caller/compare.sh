#!/bin/bash
# usage: compare.sh BIN REPS SPEC: the medians of run_train_s for serial, packed and streams,
# alternated run by run (--backend cpu, no journal), and packed's and streams' samples/s over serial's.
BIN=$1; N=$2; SPEC=$3
csv=$(mktemp)
for i in $(seq "$N"); do for m in serial packed streams; do
  "$BIN" run "$SPEC" --mode $m --backend cpu --quiet --csv "$csv" >/dev/null 2>&1
  python3 -c "import csv,sys; print('$m', next(csv.DictReader(open(sys.argv[1])))['run_train_s'])" "$csv"
done; done | python3 -c "
import sys, statistics as st, collections
d = collections.defaultdict(list)
for l in sys.stdin: m, v = l.split(); d[m].append(float(v))
for m, v in d.items(): print(m, 'median %.4f' % st.median(v), 'min %.4f' % min(v), len(v))
s = st.median(d['serial'])
print('packed/serial samples ratio %.3f' % (s / st.median(d['packed'])), 'streams %.3f' % (s / st.median(d['streams'])))
"
rm -f "$csv"
