#!/bin/sh
# ticker.sh ID FILE [COUNT [STOP_MS]]: a held command's work, in a
# grandchild of its runner (a subshell: not the shell rbarrier started),
# as `sh -c 'python3 work.py'` puts it. It appends "ID <ns>" to FILE every
# 50 ms, COUNT times (0: until killed); with STOP_MS it takes that long to
# stop after SIGTERM, ticking all the while. Its pid goes to FILE.ID.pid.
id=$1 file=$2 count=${3:-0} stop_ms=${4:-0}
echo "${RBARRIER_PROGRESS:-}" > "$file.$id.progress"
(
    if [ "$stop_ms" -gt 0 ]; then
        trap 'end=$(( $(date +%s%N) / 1000000 + stop_ms ))
              while [ $(( $(date +%s%N) / 1000000 )) -lt $end ]; do
                  echo "$id $(date +%s%N)" >> "$file"; sleep 0.05
              done; exit 0' TERM
    fi
    i=0
    while [ "$count" -eq 0 ] || [ $i -lt "$count" ]; do
        echo "$id $(date +%s%N)" >> "$file"
        i=$((i + 1))
        sleep 0.05
    done
) &
echo $! > "$file.$id.pid.tmp" && mv "$file.$id.pid.tmp" "$file.$id.pid"
wait
