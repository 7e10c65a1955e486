#!/usr/bin/env bash
# every way at op sizes 5, 20, 100 us, 4 parts, 1 s each, 3 interleaved rounds; BUSY busy processes beside
busy=${1:-0}
pids=()
for ((i = 0; i < busy; i++)); do python3 -c "while True: pass" & pids+=($!); done
sleep 0.5
for round in 1 2 3; do
  for op in 5 20 100; do
    ./team_bench one 1 $op 4 1 | sed "s/^/$busy /"
    ./team_bench team 2 $op 4 1 | sed "s/^/$busy /"
    ./team_bench omp 2 $op 4 1 | sed "s/^/$busy /"
    OMP_WAIT_POLICY=passive ./team_bench omp 2 $op 4 1 | sed "s/^/$busy /;s/ omp / omp-passive /"
    ./team_bench tbb 2 $op 4 1 | sed "s/^/$busy /"
  done
done
for p in "${pids[@]}"; do kill $p; done
