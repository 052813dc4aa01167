# Sourced by the GPU-machine scripts (gpu-tune.sh, gpu-fp8.sh): parts of one device call, each
# bounded in time, so that a part that fails or runs out of time does not stop the rest.
# The caller sets LOG (the log file), START (the call's start, seconds) and DEADLINE.

say() { echo "== $* ($(( $(date +%s) - START )) s)" | tee -a "$LOG"; }
# The seconds a part may take: at most $1, leaving $2 for the parts after it (0 when under 10 remain).
limit() {
  local left=$(( DEADLINE - $(date +%s) - $2 ))
  (( left > $1 )) && left=$1
  (( left < 10 )) && left=0
  echo $left
}
# Runs "$@" for at most $1 seconds, its output appended to $LOG (and said when cut short or failed).
bounded() {
  local t=$1; shift
  if (( t == 0 )); then echo "skipped: no time left" | tee -a "$LOG"; return 0; fi
  timeout --kill-after=10 "$t" "$@" >> "$LOG" 2>&1
  local rc=$?
  (( rc == 124 || rc == 137 )) && echo "cut short after $t s: $1" | tee -a "$LOG"
  (( rc != 0 && rc != 124 && rc != 137 )) && echo "exit $rc: $1" | tee -a "$LOG"
  return 0
}
