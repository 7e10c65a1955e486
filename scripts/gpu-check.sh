#!/usr/bin/env bash
# The GPU check: one command on a machine with an NVIDIA GPU. A GPU machine is
# lent for about 15 minutes, start included, at most 10 minutes a command, and
# only what the command left in its output folder comes back (at most 8 files,
# 16 MiB each); so the check runs its most valuable steps first, stops itself at
# a deadline (default 8 minutes), and keeps its three files in OUTDIR current as
# it goes.
#
# It runs the binaries of the bundle that scripts/gpu-bundle.sh made
# (gpu-bundle/multifit-gpu.tar.xz, or the file MULTIFIT_BUNDLE names), or those
# of a build's bin/ folder named with --binaries (data from MULTIFIT_DATA then),
# with the repository's scripts/gpu-check.sh, scripts/env.sh, examples/,
# benchmarks/ and labs/ beside it: a file of those that a step needs and that is
# missing stops the check at once (exit 2), a dry run too. In order:
#   1. records the device (nvidia-smi), driver, toolkit, compute-sanitizer and the
#      bundle's manifest, the machine's sharing facts (compute, persistence and MIG
#      modes, the MPS control's path, MPS daemons already running and their owners,
#      /dev/shm's size: the summary's first lines too), and finds cuBLAS 13 and cuDNN 9
#      in the toolkit's folders or Python's nvidia packages (logs/device.txt);
#   2. info: `multifit info`; cuda_device: fails when nvidia-smi lists a GPU that
#      multifit does not find (a driver too old for CUDA 13, say), and when there is
#      no GPU at all outside a dry run;
#   3. gpu_tests: every kernel against the CPU backend, the cuBLAS and cuDNN paths,
#      Fashion-MNIST training on cuda against cpu;
#   4. the GPU's sharing mechanisms, which no other step measures, with --solo for
#      each model's slowdown: 4 tiny models in processes mode time-sliced (mps_off)
#      and under MPS (mps_on), on streams sharing every SM (streams_shared) and on 4
#      SM partitions (streams_partitions), then lab 12 at its quick size (lab12);
#   5. memcheck, racecheck, synccheck: compute-sanitizer over the kernel, dense and
#      pack parity tests, pack training and the CUDA graph tests at their small sizes,
#      judged by the errors the tool counts; memcheck sized to finish, racecheck and
#      synccheck capped for a first run; one that reaches its limit with none found
#      is "timed out", neither ok nor FAILED;
#   6. cpu_help, cpu_seed_model: multifit from the bundle on the CPU;
#   7. the Fashion-MNIST search (81 trials under ASHA) packed and on streams
#      (search_packed, search_streams), the micro-benchmarks, Fashion-MNIST end to end with our kernels, cuBLAS
#      products and cuDNN activations, and one run with MULTIFIT_SYNC_LAUNCHES=1;
#   8. the contention study (the Fashion-MNIST grid and the 32 tiny models in every
#      mode), every lab at its quick size on the GPU (labs/run-all), the scaling study
#      (benchmarks/scaling.py, at most 32 models at once) and, where Python has
#      PyTorch, W1 side by side with it.
#
# OUTDIR holds exactly three files, each rewritten after every step:
#   steps.txt         one line per step as it ends: ok, FAILED, timed out or skipped,
#                     its name, and in brackets its seconds or why
#   summary.txt       its first line: whether the check finished, the steps counted by
#                     outcome, and what the machine lacked ("skipped: no compute-sanitizer");
#                     then steps.txt; once the check ends, benchmarks/summarize.py's tables
#   gpu-check.tar.gz  steps.txt, summary.txt and logs/: every step's log and documents
#                     (largest first left out, and listed, should it pass 15 MiB)
# The loose logs are written into a temporary folder, deleted at the end, or into
# --logs DIR, kept. A TERM or INT stops the running step, writes the three files and
# exits 128+signal; once the deadline has passed every remaining step is skipped, so
# the check ends at most about 50 s after it (a step's kill, the tables, the archive).
# Each step's limit is an estimate of its worst case (no GPU has run the check yet):
# steps 1 to 6 end inside the default deadline even when every one runs into its
# limit with every tool present (--plan shows it), the device's probes before them
# (seconds; 20 s each at most) and a step that ignores SIGTERM (10 s more) aside.
#
# usage: scripts/gpu-check.sh [--deadline SECONDS] [--dry-run] [--binaries DIR] [--logs DIR] OUTDIR
#        scripts/gpu-check.sh --plan [--deadline SECONDS]
#   --deadline SECONDS  stop starting steps after this long (default 480); each
#                       step's own limit is cut to the time left
#   --dry-run           for a machine without a GPU (CI): the GPU steps say why they
#                       are skipped and the CPU steps run; without it, finding no
#                       GPU fails the check
#   --binaries DIR      run DIR/multifit, DIR/gpu_tests, DIR/kernel_bench (a build's
#                       bin/) instead of a bundle's
#   --logs DIR          keep the loose logs in DIR (new or empty)
#   --plan              runs nothing: prints the schedule, each step with its limit and
#                       the time by which it ends at worst (every tool and library
#                       present, every step running into its limit), as the deadline
#                       cuts it
# MULTIFIT_SANITIZER_LIMIT_S, when set, is each compute-sanitizer step's limit in place of the one
# sized from the kernels its tests run (below). MULTIFIT_LIBRARY_DIRS, when set (folders separated by
# ":"), is where cuBLAS 13 and cuDNN 9 are looked for, in place of the toolkit's folders and Python's
# nvidia-* packages.
# Exit code: 0 when no step failed; 2 for bad arguments or a missing input.
set -uo pipefail

usage() {
  echo "usage: scripts/gpu-check.sh [--deadline SECONDS] [--dry-run] [--binaries DIR] [--logs DIR] OUTDIR" >&2
  echo "       scripts/gpu-check.sh --plan [--deadline SECONDS]" >&2
  exit 2
}
die() { echo "gpu-check: $*" >&2; exit 2; }

deadline_s=480 dry_run=0 plan=0 binaries="" logs="" outdir=""
while [ $# -gt 0 ]; do
  case $1 in
    --deadline) [[ ${2:-} =~ ^[0-9]+$ ]] || usage; deadline_s=$2; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    --plan) plan=1; shift ;;
    --binaries) [ -n "${2:-}" ] || usage; binaries=$2; shift 2 ;;
    --logs) [ -n "${2:-}" ] || usage; logs=$2; shift 2 ;;
    -*) usage ;;
    *) [ -z "$outdir" ] || usage; outdir=$1; shift ;;
  esac
done
if ((plan)); then
  [ -z "$outdir$binaries$logs" ] && ((!dry_run)) || usage
  outdir=$(mktemp -d)  # steps.txt's lines only, deleted at the end
fi
[ -n "$outdir" ] || usage
[[ ${MULTIFIT_SANITIZER_LIMIT_S-1} =~ ^[1-9][0-9]*$ ]] ||
  die "MULTIFIT_SANITIZER_LIMIT_S=$MULTIFIT_SANITIZER_LIMIT_S: not a whole number of seconds, 1 or more"
clock0=$SECONDS  # the deadline's start (SECONDS counts whole seconds from the shell's, which may be 1 here)
deadline=$((clock0 + deadline_s))
planned_s=0  # --plan: the seconds the steps planned so far would take at worst, on top of SECONDS
plan_end=0   # --plan: when the last step planned would end at worst, from clock0 (the planning's own time not added)
mkdir -p "$outdir" && out=$(cd "$outdir" && pwd) || die "cannot create $outdir"
[ -z "$binaries" ] || binaries=$(cd "$binaries" 2>/dev/null && pwd) || die "--binaries: no folder $binaries"
cd "$(dirname "$0")/.." || die "cannot enter the repository"

# What the steps read from the repository; the GPU machine gets what was taken along, so a file left
# behind is said here, before any step, rather than found by a step halfway through the session.
inputs=(scripts/env.sh examples/binary-classifier.json examples/fashion-mnist-mlp.json
        examples/fashion-mnist-grid.json examples/fashion-search-asha.json examples/tiny-sweep.json benchmarks/summarize.py
        benchmarks/scaling.py benchmarks/peers/harness.py labs/run-all labs/lab.py labs/verdicts.py
        labs/12-partitions-change-contention/run.py)
for f in "${inputs[@]}"; do
  [ -f "$f" ] || die "$f is missing from $(pwd): take the repository's examples/, benchmarks/ and" \
                     "labs/ along with scripts/ and gpu-bundle/ (README.md, \"On a GPU machine\")"
done
. scripts/env.sh

# A reused OUTDIR must not mix two checks' files; it holds the three files alone. A --logs folder is not
# ours to empty, so it must be.
rm -rf "$out/logs" "$out/steps.txt" "$out/summary.txt" "$out/gpu-check.tar.gz"
[ -z "$(ls -A "$out")" ] || die "$out holds other files ($(ls -A "$out" | head -3 | tr '\n' ' ')): name a new or empty folder"
# The stage holds inputs only (the unpacked bundle, the wrappers, derived specs), never a result:
# deleting it at exit loses nothing that a step produced. The loose logs, when not --logs, are in the
# archive by then.
stage=$(mktemp -d) kept=""
if [ -n "$logs" ]; then
  mkdir -p "$logs" && [ -z "$(ls -A "$logs")" ] || die "--logs $logs: not a new or empty folder"
  logs=$(cd "$logs" && pwd)
  [[ $logs/ != "$out"/* ]] || die "--logs $logs: inside OUTDIR, which holds the three files alone"
  trap 'rm -rf "$stage"' EXIT
  kept=" in $logs"
else
  logs=$(mktemp -d)
  trap 'rm -rf "$stage" "$logs"' EXIT
fi
((plan)) && trap 'rm -rf "$stage" "$logs" "$out"' EXIT
: >"$out/steps.txt"
status=0 current="" child="" started=$SECONDS lacks=""
grace_s=10  # a step's processes get SIGKILL this long after SIGTERM
reap_s=10   # and a process still there this long after it (stuck in the driver) is left behind

record() { printf '%-9s %s (%s)\n' "$1" "$2" "$3" | tee -a "$out/steps.txt"; }  # record OUTCOME NAME DETAIL
skip() { record skipped "$1" "$2"; }
fail() { record FAILED "$1" "$2"; status=1; }

# ---- the results: summary.txt and the archive, kept current so that any stop leaves them -----------
write_summary() {  # write_summary STATE [tables]
  local counts
  counts=$(awk '{n[$1]++} END {split("ok FAILED timed skipped", k); for (i = 1; i <= 4; i++)
    if (n[k[i]]) printf "%s%d %s", (s++ ? ", " : ""), n[k[i]], k[i] == "timed" ? "timed out" : k[i]}' "$out/steps.txt")
  {
    echo "gpu-check: $1 ($((SECONDS - started)) s, deadline ${deadline_s} s$( ((dry_run)) && echo ", dry run"))${counts:+: $counts}$lacks"
    grep '^sharing: ' "$logs/device.txt" 2>/dev/null
    echo
    cat "$out/steps.txt"
    if [ "${2:-}" = tables ]; then
      echo
      # bounded: a stop must still leave the archive
      if command -v python3 >/dev/null; then timeout -k 5 20 python3 benchmarks/summarize.py "$logs" || echo "summarize.py failed"
      else echo "(no python3: the tables are in the archive's JSON)"; fi
    fi
  } >"$out/summary.txt.tmp" 2>&1 && mv "$out/summary.txt.tmp" "$out/summary.txt"
}
archive_max=$((15 * 1048576))  # what comes back is at most 16 MiB a file
pack() {
  # Should the logs pass the bound packed, the largest files are left out one by one and listed in
  # logs/left-out.txt (a trace, say: the tables do not need it).
  local left_out=() largest
  rm -f "$logs/left-out.txt"
  while :; do
    tar -czf "$out/gpu-check.tar.gz.tmp" "${left_out[@]/#/--exclude=./}" -C "$out" steps.txt summary.txt \
      -C "$logs" --transform 's|^\.|logs|' . || return 1
    (($(stat -c %s "$out/gpu-check.tar.gz.tmp") <= archive_max)) && break
    largest=$(cd "$logs" && find . -type f ! -name left-out.txt -printf '%s %P\n' | sort -nr |
      awk -v done=" ${left_out[*]} " 'index(done, " " $2 " ") == 0 {print $2; exit}')
    [ -n "$largest" ] || break
    left_out+=("$largest")
    echo "$largest: $(stat -c %s "$logs/$largest") bytes" >>"$logs/left-out.txt"
  done
  mv "$out/gpu-check.tar.gz.tmp" "$out/gpu-check.tar.gz"
}
on_signal() {  # on_signal NAME NUMBER: stops the running step, records it, writes what there is, exits
  trap '' TERM INT
  if [ -n "$child" ]; then
    # The step's whole process group (timeout made one): the tool, the tests, the workers.
    kill -TERM -- "-$child" 2>/dev/null || kill -TERM "$child" 2>/dev/null
    reap $((SECONDS + 3)) || { kill -KILL -- "-$child" 2>/dev/null; reap $((SECONDS + 2)); }
    fail "$current" "stopped by SIG$1 after $((SECONDS - step_start)) s: see logs/$current.log"
  fi
  write_summary "stopped by SIG$1${current:+ during $current}; the steps after it did not run" tables
  pack
  exit $((128 + $2))
}
trap 'on_signal TERM 15' TERM
trap 'on_signal INT 2' INT

# ---- running a step -----------------------------------------------------------------------------------
# launch NAME LIMIT COMMAND...: runs COMMAND into logs/NAME.log, bounded by LIMIT seconds or the time left
# before the deadline, whichever is less; sets rc, took, limit and cut (1 when the deadline set the limit).
# Past the deadline it runs nothing, says so in steps.txt and returns 1. SIGTERM at the limit, SIGKILL
# grace_s later; a step whose process is still there reap_s after that (a process in the driver ends
# only when the driver lets it) is recorded FAILED and left behind, with the GPU steps after it
# skipped, and launch returns 1. The command runs in the background so that a TERM is handled at once
# (bash runs a trap only after the foreground command ends), and the handler stops it.
launch() {
  current=$1 limit=$2 cut=0
  shift 2
  if ! may_start "$current"; then current=""; return 1; fi
  local left=$((deadline - SECONDS - planned_s))
  ((limit > left)) && limit=$left cut=1
  if ((plan)); then
    planned_s=$((planned_s + limit)) plan_end=$((SECONDS + planned_s - clock0))
    record planned "$current" "$limit s, ends by $plan_end s$( ((cut)) && echo ": cut to the time left")"
    current=""
    return 1
  fi
  step_start=$SECONDS rc=0
  timeout -k "$grace_s" "$limit" "$@" >"$logs/$current.log" 2>&1 &
  child=$!
  if ! reap $((step_start + limit + grace_s + reap_s)); then
    fail "$current" "still running ${reap_s} s after SIGKILL (stuck in the driver?): left behind; see logs/$current.log"
    no_gpu="$current did not end after SIGKILL" child=""
    finished
    return 1
  fi
  took=$((SECONDS - step_start))
}
reap() {  # reap UNTIL: waits for the step's process until SECONDS reaches UNTIL; sets rc; 1 if still there
  while kill -0 "$child" 2>/dev/null; do
    ((SECONDS < $1)) || return 1
    sleep 0.1
  done
  wait "$child"
  rc=$? child=""
}
expired() { ((rc == 124 || rc == 137)) && ((took >= limit)); }  # the step ran into its limit
may_start() {  # may_start NAME [WHY-NOT]: whether step NAME may start; if not, says why in steps.txt
  if ((SECONDS + planned_s >= deadline)); then skip "$1" "past the deadline"; return 1; fi
  if [ -n "${2:-}" ]; then skip "$1" "$2"; return 1; fi
}
finished() {
  current=""
  ((plan)) || { write_summary "running: unfinished (this file is rewritten after each step)"; pack; }
}

# step NAME LIMIT COMMAND...: one step, judged by its exit code: 77 is a step that skipped itself (a lab
# without what it needs), saying why on its last line. A step stopped by the deadline is skipped, not
# failed: the time ran out, the code did not go wrong; one over its own limit failed (a hang).
step() {
  local name=$1
  launch "$@" || return 0
  if ((rc == 0)); then record ok "$name" "$took s"
  elif expired && ((cut)); then skip "$name" "stopped at the deadline after $took s: see logs/$name.log"
  elif expired; then fail "$name" "over $limit s: see logs/$name.log"
  elif ((rc == 77)); then skip "$name" "$(tail -1 "$logs/$name.log")"
  else fail "$name" "exit $rc, $took s: see logs/$name.log"; fi
  finished
}
gpu_step() {  # gpu_step NAME LIMIT COMMAND...: a step that needs the GPU
  may_start "$1" "$no_gpu" && step "$@"
}

# derive FROM TO SED-EXPRESSION...: FROM with each substitution made, written to TO; one that changes
# nothing (the example changed) stops the check, so that no step runs on a spec it did not mean.
derive() {
  local from=$1 to=$2 e
  shift 2
  cp "$from" "$to"
  for e; do
    sed "$e" "$to" >"$to.new" && ! cmp -s "$to" "$to.new" ||
      die "$from: '$e' changes nothing: the spec the check derives from it no longer matches it"
    mv "$to.new" "$to"
  done
}

# ---- the binaries and the data -------------------------------------------------------------------------
# Without a bundle the check stops instead of building in place, as it once did: a build costs minutes of
# a 15-minute session and needs packages a bare GPU machine lacks, so a bundle left behind turned silently
# into a session spent compiling. A build made by hand is named explicitly with --binaries.
if ((plan)); then
  bin=$stage/planned  # runs nothing
  echo "binaries: none (--plan)" >"$logs/bundle.txt"
elif [ -n "$binaries" ]; then
  bin=$binaries
  echo "binaries: $bin (no bundle)" >"$logs/bundle.txt"
else
  bundle=${MULTIFIT_BUNDLE:-gpu-bundle/multifit-gpu.tar.xz}
  [ -f "$bundle" ] || die "no bundle at $bundle: build it with scripts/gpu-bundle.sh and take gpu-bundle/ along" \
                          "(or name a build's bin/ folder with --binaries DIR)"
  # with xz where the machine has it, else with Python's tarfile (its lzma module)
  if command -v xz >/dev/null; then
    tar -xJf "$bundle" -C "$stage" || die "cannot unpack $bundle"
  else
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="tar")' \
      "$bundle" "$stage" || die "cannot unpack $bundle (no xz, and Python's tarfile could not)"
  fi
  bin=$stage/multifit-gpu/bin
  export MULTIFIT_DATA=$stage/multifit-gpu/data
  cp "$stage/multifit-gpu/MANIFEST" "$logs/bundle.txt"
fi
((plan)) || [ -x "$bin/multifit" ] || die "no multifit in $bin"

# The specs the steps derive from the examples, made before any step so that a dry run checks them.
b128=$stage/fashion-mnist-mlp-b128.json
derive examples/fashion-mnist-mlp.json "$b128" 's/"batch_size": 32/"batch_size": 128/' 's/"epochs": 10/"epochs": 3/'
# 4 of the tiny sweep's models (one learning rate, 4 seeds) on 64 times its rows for 8 epochs: 6144
# steps each (49152 training rows, batch 64), so that each run's wall passes the 0.1 s under which
# multifit says its timings are not to be judged, while every step is still a tiny model's, bound by its
# launches.
tiny4=$stage/tiny-4.json
derive examples/tiny-sweep.json "$tiny4" 's/"learning_rate": \[[^]]*\]/"learning_rate": [0.01]/' \
  's/"seed": \[[^]]*\]/"seed": [1, 2, 3, 4]/' 's/rows=1024"/rows=65536"/' 's/"epochs": 2,/"epochs": 8,/'

# compute-sanitizer: on PATH, else in the toolkit's folder (CUDA_HOME, beside nvcc, /usr/local/cuda*),
# where a toolkit installed without its bin/ on PATH keeps it.
find_sanitizer() {
  local nvcc candidates=()
  nvcc=$(command -v nvcc) && candidates+=("$(dirname "$nvcc")/../compute-sanitizer/compute-sanitizer")
  [ -z "${CUDA_HOME:-}" ] || candidates=("$CUDA_HOME/compute-sanitizer/compute-sanitizer" "$CUDA_HOME/bin/compute-sanitizer" "${candidates[@]}")
  command -v compute-sanitizer && return
  for c in "${candidates[@]}" /usr/local/cuda/compute-sanitizer/compute-sanitizer \
           $(ls -d /usr/local/cuda-*/compute-sanitizer/compute-sanitizer 2>/dev/null | sort -rV); do
    [ -x "$c" ] && { echo "$c"; return; }
  done
  return 1
}
sanitizer=$(find_sanitizer) || {
  sanitizer=""
  lacks="; skipped: no compute-sanitizer"
}
((plan)) && sanitizer=${sanitizer:-compute-sanitizer} lacks=""  # planned as present

# ---- 1. the device, and cuBLAS and cuDNN (loaded at run time, found where this machine keeps them) ---
gpus_listed=0
((plan)) || gpus_listed=$(timeout -k 5 20 nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
((plan)) || {
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if command -v nvidia-smi >/dev/null; then
    timeout -k 5 20 nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader 2>&1 |
      sed 's/^/gpu: /'
  else
    echo "gpu: nvidia-smi not found"
  fi
  command -v nvcc >/dev/null && nvcc --version | tail -1 | sed 's/^/nvcc: /'
  if [ -n "$sanitizer" ]; then
    echo "sanitizer: $sanitizer ($(timeout -k 5 20 "$sanitizer" --version 2>&1 | grep -m1 -i version))"
  else
    echo "sanitizer: no compute-sanitizer on PATH, in \$CUDA_HOME, beside nvcc or in /usr/local/cuda*"
  fi
  sed 's/^/bundle /' "$logs/bundle.txt"
  # The machine's sharing facts, which an MPS or time-slicing result is read against.
  command -v nvidia-smi >/dev/null &&
    timeout -k 5 20 nvidia-smi --query-gpu=compute_mode,persistence_mode,mig.mode.current --format=csv,noheader 2>&1 |
      sed 's/^/sharing: compute mode, persistence mode, MIG: /'
  echo "sharing: nvidia-cuda-mps-control: $(command -v nvidia-cuda-mps-control || echo none)"
  daemons=$(ps -o user=,pid=,args= -C nvidia-cuda-mps-control,nvidia-cuda-mps-server 2>/dev/null | tr -s ' ' | paste -sd ';') || true
  echo "sharing: MPS daemons running before the check: ${daemons:-none}"
  echo "sharing: /dev/shm size, free: $(df -h --output=size,avail /dev/shm 2>/dev/null | tail -1 | tr -s ' ' || echo unknown)"
  [ -f "$bin/gpu_tests" ] && command -v cuobjdump >/dev/null &&
    cuobjdump --list-elf --list-ptx "$bin/gpu_tests" 2>&1 | sed 's/.*\.\(sm_[0-9a-z]*\)\..*/\1/; s/.*\.\(compute_[0-9a-z]*\)\..*/\1/' |
    sort | uniq -c | awk '{printf "%s x%s  ", $2, $1} END {print ""}' | sed 's/^/gpu_tests code: /'
} >"$logs/device.txt"

dirs=("${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/lib64 /usr/local/cuda/lib
      /usr/local/cuda/targets/x86_64-linux/lib)
if [ -n "${MULTIFIT_LIBRARY_DIRS:-}" ]; then  # where this machine keeps them, said by hand
  IFS=: read -ra dirs <<<"$MULTIFIT_LIBRARY_DIRS"
elif command -v python3 >/dev/null; then  # pip's nvidia-* packages: site-packages/nvidia/*/lib
  mapfile -t -O ${#dirs[@]} dirs < <(python3 -c '
import glob, site
for root in site.getsitepackages() + [site.getusersitepackages()]:
    for lib in sorted(glob.glob(root + "/nvidia/*/lib")):
        print(lib)' 2>/dev/null)
fi
libpath=${LD_LIBRARY_PATH:-}
missing=" "  # the reference libraries not found: the steps that load one skip, saying so
for lib in libcublas.so.13 libcudnn.so.9; do
  ((plan)) && continue  # planned as present
  found=""
  for d in "${dirs[@]}"; do [ -e "$d/$lib" ] && { found=$d; break; }; done
  if [ -n "$found" ]; then
    libpath=$found${libpath:+:$libpath}
    echo "library: $lib from $found"
  else
    missing+="$lib "
    echo "library: $lib not found in ${dirs[*]}: its reference path will be refused"
  fi
done >>"$logs/device.txt"

# The library folders are given to multifit's own binaries alone, through these wrappers: put on the whole
# script's LD_LIBRARY_PATH, they would also be loaded by Python and PyTorch (the peers step) in place of
# the libraries PyTorch carries.
mkdir -p "$stage/run"
for b in multifit gpu_tests kernel_bench; do
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%q exec %q "$@"\n' "$libpath" "$bin/$b" >"$stage/run/$b"
  chmod +x "$stage/run/$b"
done
run=$stage/run

# ---- 2. multifit's view of the device ------------------------------------------------------------------
step info 15 "$run/multifit" info
no_gpu=""  # why the GPU steps are skipped; empty when they run
if ((plan)); then
  :  # planned with a GPU
elif [ ! -f "$logs/info.log" ]; then  # info was past the deadline
  skip cuda_device "past the deadline"
  no_gpu="past the deadline"
elif cat "$logs/info.log" >>"$logs/device.txt" && ! grep -q '^cuda:' "$logs/info.log"; then
  why=$(sed -n 's/^CUDA devices: none (\(.*\))$/\1/p' "$logs/info.log")
  why=${why:-multifit info found none: see logs/info.log}
  if ((gpus_listed > 0)); then
    # The failure that once passed unseen: every GPU step skipped as if there were no GPU.
    echo "gpu-check: nvidia-smi lists $gpus_listed GPU(s) but multifit finds no CUDA device ($why);" \
         "a driver too old for CUDA 13 does this: see logs/device.txt" >&2
    fail cuda_device "nvidia-smi lists $gpus_listed GPU(s), multifit finds none: $why"
  elif ((dry_run)); then
    record ok cuda_device "dry run: no GPU, so the GPU steps are skipped"
  else
    fail cuda_device "no CUDA device: $why; on a machine without a GPU, pass --dry-run"
  fi
  no_gpu="no CUDA device: $why"
else
  record ok cuda_device "$(grep -c '^cuda:' "$logs/info.log") device(s)"
fi
finished

# ---- 3. the GPU tests -------------------------------------------------------------------------------------
gpu_step gpu_tests 120 "$run/gpu_tests" --gtest_output=json:"$logs/gpu_tests.json"

# ---- 4. the GPU's sharing mechanisms (issue 35) -----------------------------------------------------------
# Each model's slowdown against its own solo run (--solo) and the run's wall, under each mechanism; the
# processes' documents give each worker's device memory, its CUDA context included (process_device_bytes).
# First after the tests: no other step measures them.
for variant in "mps_off:30:--mode processes --mps off" "mps_on:30:--mode processes --mps on" \
               "streams_shared:25:--mode streams" "streams_partitions:25:--mode streams --sm-partitions 4"; do
  name=${variant%%:*} rest=${variant#*:}
  gpu_step "$name" "${rest%%:*}" "$run/multifit" run "$tiny4" ${rest#*:} --solo --backend cuda --quiet \
    --json "$logs/$name.json"
done
# A model that fills the GPU beside a small one, five ways (streams on every SM and on 2 partitions,
# processes time-sliced, under MPS and under MPS with 50% shares): the partitions' effect on slowdown.
if command -v python3 >/dev/null; then
  gpu_step lab12 75 env MULTIFIT="$run/multifit" python3 labs/12-partitions-change-contention/run.py --quick \
    --out "$logs/lab12"
else
  may_start lab12 "no python3"
fi

# ---- 5. compute-sanitizer ----------------------------------------------------------------------------------
# The suites whose kernels the tool must see: every parity suite, pack training, the CUDA graphs and the
# warm-up that captures them, at their small sizes (MULTIFIT_TEST_SIZES=small, tests/parity/test_sizes.h:
# every kernel, tile configuration, split-K plan, edge tile, pack and step graph of the full sizes, on
# fewer rows), since the tool's cost is per kernel and per access.
sanitize_filter='KernelParity*:DenseParity*:PackParity*:PackTraining*:*Graph*:WarmUp*'
# The kernels those tests run, measured once under host execution, which runs the same tests' kernels on
# the CPU: hostexec_tests with this filter (less HostExec* and WarmUpGraphs*, which gpu_tests lacks) at
# MULTIFIT_TEST_SIZES=small, under gdb with a breakpoint on mf::hostexec::run_grid, counting every grid
# run, launched or replayed from a graph: 4048 (3686 launches; at the full sizes 6868 grids). cuBLAS's
# and cuDNN's kernels are not among them.
sanitize_kernels=4048
# Each tool's limit is its start (loading and instrumenting the modules) plus the kernels at its cost per
# kernel, in ms, with the tests' own CPU work inside it. These costs are estimates until a GPU has run
# the tools (each step's line records the ms per kernel it took): memcheck and synccheck instrument every
# access, racecheck also tracks each shared-memory access, which the tiled products make most.
sanitizer_start_s=20
sanitize() {  # sanitize TOOL MS-PER-KERNEL [CAP-S]: the tool over those tests, judged by the errors it counts
  local tool=$1 ms=$2 cap=${3:-} summary errors tests sized limit_s missing=""
  [ -n "$sanitizer" ] || missing="no compute-sanitizer on PATH, in \$CUDA_HOME, beside nvcc or in /usr/local/cuda*"
  may_start "$tool" "${no_gpu:-$missing}" || return 0
  # The tests' own exit code is gpu_tests's business, and --report-api-errors no leaves out the API
  # errors the libraries return and handle (cuDNN's probes, say). LD_LIBRARY_PATH reaches the tool, which
  # hands its environment to gpu_tests; it loads no cuBLAS itself.
  sized="sized for $sanitize_kernels kernels at $ms ms and $sanitizer_start_s s to start"
  limit_s=$((sanitizer_start_s + sanitize_kernels * ms / 1000))
  if [ -n "$cap" ] && ((cap < limit_s)); then limit_s=$cap sized="capped at $cap s for a first run"; fi
  [ -z "${MULTIFIT_SANITIZER_LIMIT_S:-}" ] || limit_s=$MULTIFIT_SANITIZER_LIMIT_S sized=MULTIFIT_SANITIZER_LIMIT_S
  launch "$tool" "$limit_s" env LD_LIBRARY_PATH="$libpath" \
    MULTIFIT_TEST_SIZES=small "$sanitizer" --tool "$tool" --report-api-errors no "$bin/gpu_tests" \
    --gtest_filter="$sanitize_filter" || return 0
  if [ "$tool" = racecheck ]; then  # "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)"
    summary=$(grep -o 'RACECHECK SUMMARY: .*' "$logs/$tool.log" | tail -1)
    errors=$(sed -n 's/.*(\([0-9]*\) error.*/\1/p' <<<"$summary")
  else  # "ERROR SUMMARY: N errors"
    summary=$(grep -o 'ERROR SUMMARY: [0-9]* error[s]*' "$logs/$tool.log" | tail -1)
    errors=$(sed -n 's/ERROR SUMMARY: \([0-9]*\).*/\1/p' <<<"$summary")
  fi
  if expired; then
    # Stopped before its summary: the errors it reported as it went are each a line "========= <what>"
    # (details indented under it), apart from its banner, summaries, warnings and the end of the tests.
    errors=$(grep -E '^========= [^ ]' "$logs/$tool.log" |
      grep -Evc 'COMPUTE-SANITIZER|SUMMARY:|^========= Warning|Target application|terminate successfully')
    tests="tests passed: $(grep -c '^\[       OK \]' "$logs/$tool.log")"
    if ((errors > 0)); then fail "$tool" "$errors error(s) reported before its limit of $limit s: see logs/$tool.log"
    elif ((cut)); then skip "$tool" "stopped at the deadline after $took s; $tests, no error so far: see logs/$tool.log"
    else record "timed out" "$tool" "at its limit of $limit s ($sized); $tests, no error so far: see logs/$tool.log"; fi
  elif [ -z "$errors" ]; then
    skip "$tool" "the tool did not run (exit $rc: $(grep -m1 -i 'error\|not supported' "$logs/$tool.log")): see logs/$tool.log"
  elif ((errors > 0)); then fail "$tool" "$summary, $took s: see logs/$tool.log"
  else
    record ok "$tool" "$took s, $summary; $((took * 1000 / sanitize_kernels)) ms a kernel over $sanitize_kernels (the limit's estimate: $ms)$( ((rc != 0)) && echo "; the tests exited $rc")"
  fi
  finished
}
# memcheck over every kernel; racecheck (the slowest, tracking every shared-memory access) and synccheck
# capped, so that a first run ends inside the deadline: "timed out" with no error so far is their answer
# then, and a later run with MULTIFIT_SANITIZER_LIMIT_S gives them their whole time.
sanitize memcheck 10
sanitize racecheck 25 40
sanitize synccheck 10 30

# ---- 6. multifit on the CPU ------------------------------------------------------------------------------
step cpu_help 5 "$run/multifit" --help
step cpu_seed_model 20 "$run/multifit" train examples/binary-classifier.json --backend cpu \
  --json "$logs/seed_model_cpu.json"


# ---- 7. the benchmarks -----------------------------------------------------------------------------------
# The Fashion-MNIST search (81 trials under ASHA) packed and on streams: what a sweep's packs give on a GPU
# while a search's trials differ in shape (each a pack of its own until heterogeneous packs land).
for mode in packed streams; do
  gpu_step "search_$mode" 90 "$run/multifit" run examples/fashion-search-asha.json --mode "$mode" --backend cuda \
    --quiet --json "$logs/search_$mode.json"
done
gpu_step kernel_bench 150 "$run/kernel_bench" --benchmark_filter='^cuda' --benchmark_min_time=0.05 \
  --benchmark_out="$logs/kernel_bench.json" --benchmark_out_format=json
for variant in tiled:ours cublas:ours tiled:cudnn; do
  gemm=${variant%:*} activations=${variant#*:}
  needs=""  # the reference library the variant loads
  [ "$gemm" = cublas ] && needs=libcublas.so.13
  [ "$activations" = cudnn ] && needs=libcudnn.so.9
  for spec in b32:examples/fashion-mnist-mlp.json "b128:$b128"; do
    name="fashion_${spec%%:*}_${gemm}_${activations}"
    if [ -n "$needs" ] && [[ $missing == *" $needs "* ]]; then
      may_start "$name" "no $needs on this machine (logs/device.txt)"
      continue
    fi
    gpu_step "$name" 120 "$run/multifit" train "${spec#*:}" --backend cuda --gemm "$gemm" \
      --activations "$activations" --json "$logs/$name.json"
  done
done
gpu_step seed_model_sync_launches 60 env MULTIFIT_SYNC_LAUNCHES=1 "$run/multifit" train \
  examples/binary-classifier.json --backend cuda --json "$logs/seed_model_sync_launches.json"

# ---- 8. the studies --------------------------------------------------------------------------------------
for study in grid:examples/fashion-mnist-grid.json tiny:examples/tiny-sweep.json; do
  name="study_${study%%:*}"
  gpu_step "$name" 90 "$run/multifit" run "${study#*:}" --mode all --backend cuda --quiet \
    --json "$logs/$name.json" --csv "$logs/$name.csv" --trace "$logs/$name.trace.json"
done
if ! command -v python3 >/dev/null; then
  may_start labs "no python3"
  may_start scaling "no python3"
  may_start peers_w1 "no python3"
else
  # Every lab at its quick size on the GPU: 04 and 06 test device memory, 08 a device fault (the
  # poisoned context), 10 skips with one GPU; their verdicts are in labs/*/verdict.json.
  gpu_step labs 150 env MULTIFIT="$run/multifit" MULTIFIT_LAB_BACKEND=cuda python3 labs/run-all --quick \
    --out "$logs/labs"
  # scaling.py records a failed run in failures.txt and goes on; its exit 1 at the end fails this step only.
  gpu_step scaling 240 python3 benchmarks/scaling.py --out "$logs/scaling" --backend cuda --binary "$run/multifit" \
    --graphs on,off --fmnist-counts 1,4 --concurrency 32
  # PyTorch's import can take tens of seconds from a cold disk: bounded, by the time left too.
  torch_s=$((deadline - SECONDS - planned_s < 30 ? deadline - SECONDS - planned_s : 30))
  if ((torch_s <= 0)); then
    may_start peers_w1
  elif ((plan)) || timeout -k 2 "$torch_s" python3 -c 'import torch' 2>/dev/null; then
    gpu_step peers_w1 90 python3 benchmarks/peers/harness.py --out "$logs/peers" --python "$(command -v python3)" \
      --multifit "$run/multifit" --device cuda --reps 2 --only w1
  else
    may_start peers_w1 "no PyTorch in this python3 (or its import took over $torch_s s)"
  fi
fi

if ((plan)); then
  echo "gpu-check --plan: at worst the check ends by $plan_end s of its ${deadline_s} s deadline"
  exit 0
fi
write_summary "finished" tables
pack
failed=$(awk '$1 == "FAILED" {printf "%s ", $2}' "$out/steps.txt")
echo "gpu-check: $out: steps.txt, summary.txt, gpu-check.tar.gz (the logs packed${kept:+; kept$kept})${failed:+; FAILED: $failed}"
exit $status
