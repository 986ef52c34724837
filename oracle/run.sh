#!/usr/bin/env bash
# The oracle's device script: compiles every .cu of the given directories for sm_90, runs each program plainly
# and under compute-sanitizer's racecheck, synccheck, initcheck (global, and shared where this version has
# --initcheck-address-space) and memcheck, each with a timeout (a hang is a result), and writes the raw outputs,
# each tool's verdict and a markdown summary (summary.md) under the results directory.
#
# usage: oracle/run.sh [-o RESULTS_DIR] [-s] DIR...      (default RESULTS_DIR: oracle/results)
#        -s: summarize only: rebuild the verdicts and summary.md from the raw outputs and device.txt already there
# environment: PLAIN_TIMEOUT (s, default 20), SANITIZER_TIMEOUT (s, default 60), JOBS (parallel runs, default 8),
#              NVCC (default nvcc), SANITIZER (default compute-sanitizer), NVCC_FLAGS (more nvcc flags, e.g. -G),
#              RUNS_ONLY (the runs to make, by name, e.g. "plain racecheck"; default all)
# Results: RESULTS_DIR/<dir>/<program>.<run>.txt (a header line "# rc=... seconds=..." then stdout and stderr),
#          RESULTS_DIR/<dir>/<program>.compile.txt, RESULTS_DIR/<dir>.verdicts.tsv, RESULTS_DIR/summary.md.
set -u
RESULTS=oracle/results
if [ "${1:-}" = "-o" ]; then RESULTS=$2; shift 2; fi
SUMMARIZE_ONLY=false
if [ "${1:-}" = "-s" ]; then SUMMARIZE_ONLY=true; shift; fi
[ $# -gt 0 ] || { echo "usage: $0 [-o RESULTS_DIR] [-s] DIR..." >&2; exit 2; }
PLAIN_TIMEOUT=${PLAIN_TIMEOUT:-20}
SANITIZER_TIMEOUT=${SANITIZER_TIMEOUT:-60}
JOBS=${JOBS:-8}
NVCC=${NVCC:-nvcc}
SANITIZER=${SANITIZER:-compute-sanitizer}
export PLAIN_TIMEOUT SANITIZER_TIMEOUT SANITIZER
mkdir -p "$RESULTS"
BIN=$(mktemp -d)

# The runs: name and compute-sanitizer arguments ("plain" runs the program alone).
RUNS=("plain|" "racecheck|--tool racecheck" "synccheck|--tool synccheck" "initcheck|--tool initcheck")
if { $SUMMARIZE_ONLY && ls "$RESULTS"/*/*.initcheck-shared.txt >/dev/null 2>&1; } \
  || { ! $SUMMARIZE_ONLY && "$SANITIZER" --help 2>/dev/null | grep -q -- '--initcheck-address-space'; }; then
  RUNS+=("initcheck-shared|--tool initcheck --initcheck-address-space shared")
fi
RUNS+=("memcheck|--tool memcheck")
if [ -n "${RUNS_ONLY:-}" ]; then
  kept=()
  for r in "${RUNS[@]}"; do [[ " $RUNS_ONLY " == *" ${r%%|*} "* ]] && kept+=("$r"); done
  RUNS=("${kept[@]}")
fi
NVCC_FLAGS=${NVCC_FLAGS:-}

# One run of one program: writes OUTFILE with a header line, stdout and stderr.
run_one() {
  local exe=$1 name=$2 args=$3 outfile=$4 rc start end
  start=$(date +%s%N)
  if [ "$name" = plain ]; then
    timeout -k 5 "$PLAIN_TIMEOUT" "$exe" >"$outfile.body" 2>&1
  else
    # shellcheck disable=SC2086
    timeout -k 5 "$SANITIZER_TIMEOUT" "$SANITIZER" $args "$exe" >"$outfile.body" 2>&1
  fi
  rc=$?
  end=$(date +%s%N)
  { printf '# rc=%s seconds=%d.%d run=%s\n' "$rc" $(((end - start) / 1000000000)) $(((end - start) / 100000000 % 10)) "$name"
    cat "$outfile.body"; } >"$outfile"
  rm -f "$outfile.body"
}
export -f run_one

# The verdict of one run's file: "hang (timeout N s)", "clean", "N errors" (a sanitizer's count) and/or the
# program's own failure ("exit N", a CUDA error, a reference mismatch).
verdict() {
  local file=$1 name=$2 rc errors parts=()
  rc=$(head -1 "$file" | sed -n 's/^# rc=\([0-9]*\).*/\1/p')
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    if [ "$name" = plain ]; then echo "hang (killed at ${PLAIN_TIMEOUT} s)"; else echo "hang (killed at ${SANITIZER_TIMEOUT} s)"; fi
    return
  fi
  if [ "$name" = racecheck ]; then
    # "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)"
    local hazards
    hazards=$(grep -o 'RACECHECK SUMMARY: [0-9]* hazards\? displayed ([^)]*)' "$file" | head -1 \
      | sed 's/RACECHECK SUMMARY: \([0-9]*\) \(hazards\?\) displayed/\1 \2/')
    if [ -z "$hazards" ]; then parts+=("no summary"); elif [ "${hazards%% *}" = 0 ]; then parts+=("clean"); else parts+=("$hazards"); fi
  elif [ "$name" != plain ]; then
    errors=$(grep -o 'ERROR SUMMARY: [0-9]* error' "$file" | grep -o '[0-9]*' | tail -1)
    if [ -z "$errors" ]; then parts+=("no summary"); elif [ "$errors" = 0 ]; then parts+=("clean"); else parts+=("$errors errors"); fi
  fi
  local cerr
  cerr=$(grep -o '^cuda-error [A-Za-z]*' "$file" | head -1 | sed 's/cuda-error //')
  [ -n "$cerr" ] && parts+=("$cerr")
  [ "$rc" != 0 ] && [ -z "$cerr" ] && parts+=("exit $rc")
  local ref
  ref=$(grep -o '^reference mismatch [0-9]*' "$file" | head -1 | sed 's/reference //')
  [ -n "$ref" ] && parts+=("result: $ref")
  if [ "$name" = plain ] && [ ${#parts[@]} -eq 0 ]; then parts+=("ok"); fi
  local IFS=';'
  echo "${parts[*]}" | sed 's/;/; /g'
}

# The first error lines of a sanitizer run (at most 3), for the summary's details.
first_errors() {
  grep -E '^========= [^ ]' "$1" | grep -v -E 'COMPUTE-SANITIZER|SUMMARY|Target application returned' \
    | sed 's/^========= //' | awk '!seen[$0]++' | head -3
}

if ! $SUMMARIZE_ONLY; then
  {
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- device: $(nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>/dev/null | head -1 \
      | awk -F', ' '{ printf "%s, driver %s, compute capability %s", $1, $2, $3 }')"
    echo "- nvcc: $("$NVCC" --version | grep -o 'release [0-9.]*, V[0-9.]*')"
    echo "- compute-sanitizer: $("$SANITIZER" --version 2>/dev/null | grep -io 'version [0-9.]*' | head -1)"
    echo "- command: \`${NVCC_FLAGS:+NVCC_FLAGS=$NVCC_FLAGS }${RUNS_ONLY:+RUNS_ONLY=\"$RUNS_ONLY\" }oracle/run.sh $*\` (PLAIN_TIMEOUT=$PLAIN_TIMEOUT s, SANITIZER_TIMEOUT=$SANITIZER_TIMEOUT s, JOBS=$JOBS runs at a time)"
  } >"$RESULTS/device.txt"
fi
{
  echo "# compute-sanitizer and plain runs of the oracle programs"
  echo
  cat "$RESULTS/device.txt"
  echo "- compile: \`nvcc -arch=sm_90 -lineinfo -diag-suppress 20054 $(sed -n 's/^- command: `NVCC_FLAGS=\([^ ]*\) .*/\1 /p' "$RESULTS/device.txt")-o PROGRAM FILE.cu\`"
  echo "- runs: plain; $(for r in "${RUNS[@]:1}"; do printf '`compute-sanitizer %s`; ' "${r#*|}"; done)"
  echo "- verdicts: \"clean\" (no error reported), \"N errors\" (the tool's ERROR SUMMARY), \"N hazards (E errors, W warnings)\""
  echo "  (racecheck's summary), \"hang\" (killed at the timeout), a CUDA error the program got, \"exit N\", and"
  echo "  \"result: mismatch K\" when K output elements differ from the program's plain C++ reference; \"ok\" for a plain"
  echo "  run that finished with the reference's result."
} >"$RESULTS/summary.md"

for dir in "$@"; do
  set_name=$(basename "$dir")
  out="$RESULTS/$set_name"
  mkdir -p "$out"
  if ! $SUMMARIZE_ONLY; then
    for src in "$dir"/*.cu; do           # compile JOBS at a time
      prog=$(basename "$src" .cu)
      "$NVCC" -arch=sm_90 -lineinfo -diag-suppress 20054 $NVCC_FLAGS -o "$BIN/$set_name.$prog" "$src" >"$out/$prog.compile.txt" 2>&1 &
      while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    done
    wait
    progs=()
    for src in "$dir"/*.cu; do
      prog=$(basename "$src" .cu)
      if [ -x "$BIN/$set_name.$prog" ]; then progs+=("$prog"); else echo "compile failed: $src" >&2; fi
    done
    # every (program, run) pair, JOBS at a time; plain runs first
    for r in "${RUNS[@]}"; do
      for prog in "${progs[@]}"; do
        printf '%s|%s|%s|%s\n' "$BIN/$set_name.$prog" "${r%%|*}" "${r#*|}" "$out/$prog.${r%%|*}.txt"
      done
    done | xargs -P "$JOBS" -d '\n' -n 1 bash -c 'IFS="|" read -r e n a o <<<"$1"; run_one "$e" "$n" "$a" "$o"' _
  fi

  tsv="$RESULTS/$set_name.verdicts.tsv"
  header="program"
  for r in "${RUNS[@]}"; do header+=$'\t'"${r%%|*}"; done
  echo "$header" >"$tsv"
  {
    echo
    echo "## $dir"
    echo
    echo "| program | $(for r in "${RUNS[@]}"; do printf '%s | ' "${r%%|*}"; done)"
    echo "|---|$(for r in "${RUNS[@]}"; do printf -- '---|'; done)"
  } >>"$RESULTS/summary.md"
  for src in "$dir"/*.cu; do
    prog=$(basename "$src" .cu)
    row="| $prog |"
    line="$prog"
    for r in "${RUNS[@]}"; do
      f="$out/$prog.${r%%|*}.txt"
      if [ -f "$f" ]; then v=$(verdict "$f" "${r%%|*}"); else v="not run (compile failed)"; fi
      row+=" $v |"
      line+=$'\t'"$v"
    done
    echo "$row" >>"$RESULTS/summary.md"
    echo "$line" >>"$tsv"
  done
  {
    echo
    echo "First error lines of each sanitizer run that reported errors:"
    echo
    for src in "$dir"/*.cu; do
      prog=$(basename "$src" .cu)
      for r in "${RUNS[@]:1}"; do
        f="$out/$prog.${r%%|*}.txt"
        [ -f "$f" ] || continue
        lines=$(first_errors "$f")
        [ -n "$lines" ] && printf -- '- %s, %s: %s\n' "$prog" "${r%%|*}" "$(echo "$lines" | paste -sd '|' | sed 's/|/ \/ /g')"
      done
    done
  } >>"$RESULTS/summary.md"
done
rm -rf "$BIN"
