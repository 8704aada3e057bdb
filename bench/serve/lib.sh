# Shared by bench/serve_load.sh and bench/soak.sh (source it; bash only).
#
# What: install wrk, build the request payload, start/stop the groundcite
# service and the FastAPI baseline on loopback, wait for /healthz, write the
# wrk Lua script, run wrk and parse its result line.
#
# Knobs (environment):
#   GC_SERVE_CMD      command that starts the groundcite service, run with
#                     `bash -c "exec $GC_SERVE_CMD"` (so its PID is the
#                     server's: one command; set variables with `env X=1 cmd`),
#                     single-quoted so these variables, exported to it, expand
#                     there: GC_ADDR (127.0.0.1:8787), GC_TMP and TMP (the
#                     run's scratch dir), GC_KEYS_FILE ($GC_TMP/keys.toml),
#                     GC_API_KEY (the key, for a server that takes it from
#                     the environment).
#                     Default:
#                       target/release/groundcite serve --addr "$GC_ADDR"
#                         --database "sqlite://$GC_TMP/load.sqlite3"
#                         --api-keys-file "$GC_KEYS_FILE"
#   GC_ADDR           where the groundcite service listens (127.0.0.1:8787)
#   GC_BUILD=1        with the default GC_SERVE_CMD, `cargo build --release
#                     -p groundcite-cli --bins` first (0: use the binary as is)
#   BASELINE_ADDR     where the FastAPI baseline listens (127.0.0.1:8788)
#   BASELINE_WORKERS  uvicorn workers of the baseline (1; the machine the
#                     numbers in BENCHMARKS.md come from has 2 cores)
#   HEALTH_TIMEOUT    seconds to wait for /healthz (60)
#   GC_KEEP_LOGS      prefix for copies of the logs at exit (callers set
#                     bench/out/<name>-), e.g. bench/out/serve_load-wrk.log
#   PAYLOAD_LINE      use this line (1-based) of the workload instead of the
#                     automatically picked typical one
#   DISTINCT=N        send the first N requests of the workload in turn
#                     instead of one request again and again (each has its
#                     own 20 chunks, so the
#                     store that keeps each chunk once sees them again
#                     after N requests)
#   UNIQUE=1          send the one request with a fresh number appended to
#                     every chunk's content each time: no chunk is ever seen
#                     twice, the worst case for a store that keeps each
#                     chunk once (quotes still match: they are substrings)
#
# The API key is random per run, never printed; the groundcite key file
# format is in gc_write_keys_file (adapt it there).

GC_ADDR=${GC_ADDR:-127.0.0.1:8787}
BASELINE_ADDR=${BASELINE_ADDR:-127.0.0.1:8788}
BASELINE_WORKERS=${BASELINE_WORKERS:-1}
HEALTH_TIMEOUT=${HEALTH_TIMEOUT:-60}
GC_BUILD=${GC_BUILD:-1}
GC_DEFAULT_CMD='target/release/groundcite serve --no-model --addr "$GC_ADDR" --database "sqlite://$GC_TMP/load.sqlite3" --api-keys-file "$GC_KEYS_FILE"'

# Scratch dir for keys, database, logs, payload; removed by gc_cleanup.
GC_TMP=$(mktemp -d "${TMPDIR:-/tmp}/groundcite-load.XXXXXX")
GC_KEYS_FILE=$GC_TMP/keys.toml
GC_API_KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
declare -A GC_PIDS=()

gc_log() { echo "==> $*" >&2; }

# Install a Debian package when a command is missing (sudo only when not root).
gc_need() { # command package
  command -v "$1" >/dev/null 2>&1 && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  gc_log "installing $2 (apt)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$2" >/dev/null
}

# The groundcite key file. ASSUMPTION (the server's format is not fixed yet):
# TOML, one [[keys]] table per key with the key itself and its tenant.
gc_write_keys_file() { # path key
  (
    umask 077
    cat > "$1" <<EOF
[[keys]]
tenant = "load"
sha256 = "$(printf '%s' "$2" | sha256sum | cut -d' ' -f1)"
EOF
  )
}

# A typical request of the verify workload as $GC_TMP/payload.json: the
# workload is generated exactly as bench/verify_batch.sh step 1 does when
# missing; then, among its first 200 lines, an answerable request with the
# median number of claims and the size closest to the median size (with
# the default workload: ~53 KB, 20 chunks of ~2 KB, 3 claims).
gc_payload() {
  local workload=bench/data/workload.jsonl
  local requests=${REQUESTS:-2000} chunks=${CHUNKS:-20} chunk_bytes=${CHUNK_BYTES:-2048} seed=${SEED:-20260}
  local params="requests=$requests chunks=$chunks chunk_bytes=$chunk_bytes seed=$seed"
  mkdir -p bench/data
  if [[ ! -s $workload || "$(cat "$workload.params" 2>/dev/null)" != "$params" ]]; then
    gc_log "generating $workload ($params)"
    python3 bench/gen_workload.py --requests "$requests" --chunks "$chunks" \
      --chunk-bytes "$chunk_bytes" --seed "$seed" --out "$workload.tmp"
    mv "$workload.tmp" "$workload"
    echo "$params" > "$workload.params"
  fi
  GC_PAYLOAD=$GC_TMP/payload.json
  python3 - "$workload" "$GC_PAYLOAD" "${PAYLOAD_LINE:-}" <<'PY'
import json, statistics, sys
src, dst, want = sys.argv[1], sys.argv[2], sys.argv[3]
rows = []
with open(src, "rb") as f:
    for i, raw in enumerate(f, 1):
        if want and i != int(want):
            continue
        req = json.loads(raw)
        rows.append((i, raw.rstrip(b"\n"), req))
        if want or i >= 200:
            break
if not rows:
    sys.exit(f"no line {want} in {src}")
if want:
    i, raw, req = rows[0]
else:
    ok = [r for r in rows if r[2]["answer"]["answerable"] and r[2]["answer"]["claims"]]
    med_claims = statistics.median_low(len(r[2]["answer"]["claims"]) for r in ok)
    med_size = statistics.median(len(r[1]) for r in ok)
    i, raw, req = min((r for r in ok if len(r[2]["answer"]["claims"]) == med_claims),
                      key=lambda r: (abs(len(r[1]) - med_size), r[0]))
with open(dst, "wb") as f:
    f.write(raw)
print(f"==> payload: line {i} of {src}: {len(raw)} bytes, {len(req['chunks'])} chunks, "
      f"{len(req['answer']['claims'])} claims", file=sys.stderr)
PY
  GC_BODIES= GC_TEMPLATE=
  if [ "${UNIQUE:-0}" = 1 ]; then
    GC_TEMPLATE=$GC_TMP/template.json
    python3 - "$GC_PAYLOAD" "$GC_TEMPLATE" <<'PY'
import json, sys
req = json.load(open(sys.argv[1], "rb"))
for c in req["chunks"]:
    c["content"] += " #~SEQ~"
open(sys.argv[2], "w").write(json.dumps(req, ensure_ascii=False))
PY
    gc_log "every request's chunks made unique (a number appended to each)"
  fi
  if (( ${DISTINCT:-0} > 0 )); then
    GC_BODIES=$GC_TMP/payloads.jsonl
    head -n "$DISTINCT" "$workload" > "$GC_BODIES"
    gc_log "rotating through $(wc -l < "$GC_BODIES") distinct requests of $workload"
  fi
}

# wrk script: POST the payload with the bearer key; counts non-2xx responses
# per thread and prints one machine-readable line at the end. WRK_DELAY_MS
# (default 0) waits that long between a connection's requests.
gc_wrk_script() {
  GC_WRK_LUA=$GC_TMP/post.lua
  cat > "$GC_WRK_LUA" <<'LUA'
local f = assert(io.open(os.getenv("WRK_BODY_FILE"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("WRK_API_KEY")

-- WRK_DELAY_MS > 0 paces each connection (a bounded rate for long soaks,
-- whose traces would otherwise fill the disk).
local pause = tonumber(os.getenv("WRK_DELAY_MS") or "0")
if pause > 0 then
  function delay() return pause end
end

-- WRK_BODIES_FILE (one JSON body per line): each connection sends them in
-- turn, starting at a different line per thread.
local bodies_file = os.getenv("WRK_BODIES_FILE") or ""
if bodies_file ~= "" then
  bodies = {}
  for line in io.lines(bodies_file) do
    if #line > 0 then table.insert(bodies, line) end
  end
  assert(#bodies > 0, "no bodies in " .. bodies_file)
  next_body = 0
  function request()
    next_body = next_body % #bodies + 1
    return wrk.format(nil, nil, nil, bodies[next_body])
  end
end

-- WRK_TEMPLATE_FILE: the body with "~SEQ~" where a number unique to this
-- request goes (every chunk's content ends with one).
local template_file = os.getenv("WRK_TEMPLATE_FILE") or ""
if template_file ~= "" then
  local t = assert(io.open(template_file, "rb"))
  local text = t:read("*a")
  t:close()
  pieces = {}
  local from = 1
  while true do
    local i, j = string.find(text, "~SEQ~", from, true)
    if not i then break end
    table.insert(pieces, string.sub(text, from, i - 1))
    from = j + 1
  end
  table.insert(pieces, string.sub(text, from))
  sent = 0
  function request()
    sent = sent + 1
    return wrk.format(nil, nil, nil, table.concat(pieces, thread_tag .. "-" .. sent))
  end
end

local threads = {}
local thread_count = 0
function setup(thread)
  thread_count = thread_count + 1
  thread:set("thread_tag", tostring(thread_count) .. "-" .. tostring(os.time()))
  table.insert(threads, thread)
end
function init(args)
  non2xx = 0
  if bodies then next_body = math.random(#bodies) end
end
function response(status, headers, body)
  if status < 200 or status > 299 then non2xx = non2xx + 1 end
end
function done(summary, latency, requests)
  local bad = 0
  for _, t in ipairs(threads) do bad = bad + t:get("non2xx") end
  local e = summary.errors
  io.write(string.format(
    "GC_RESULT requests=%d rps=%.2f p50_us=%d p99_us=%d non2xx=%d sock_errors=%d\n",
    summary.requests, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99), bad,
    e.connect + e.read + e.write + e.timeout))
end
LUA
}

# gc_wrk_run URL CONCURRENCY SECONDS: run wrk against URL/v1/verify, output
# on stdout (ends with the GC_RESULT line).
gc_wrk_run() {
  local url=$1 c=$2 secs=$3 threads
  threads=$(( c < ${WRK_THREADS:-2} ? c : ${WRK_THREADS:-2} ))
  WRK_BODY_FILE=$GC_PAYLOAD WRK_BODIES_FILE=${GC_BODIES:-} WRK_TEMPLATE_FILE=${GC_TEMPLATE:-} \
    WRK_API_KEY=$GC_API_KEY \
    wrk -t "$threads" -c "$c" -d "${secs}s" --timeout "${WRK_TIMEOUT:-10}s" --latency \
      -s "$GC_WRK_LUA" "$url/v1/verify" 2>&1
}

# gc_wrk URL CONCURRENCY SECONDS -> sets WRK_REQUESTS WRK_RPS WRK_P50_MS
# WRK_P99_MS WRK_ERRORS (non-2xx + socket errors/timeouts); full wrk output
# appended to $GC_TMP/wrk.log.
gc_wrk() {
  local out
  out=$(gc_wrk_run "$@") || { echo "$out" >&2; return 1; }
  printf '### %s c=%s d=%ss\n%s\n\n' "$1" "$2" "$3" "$out" >> "$GC_TMP/wrk.log"
  gc_wrk_parse "$out"
}

# Parse the GC_RESULT line of wrk's output (see gc_wrk for the variables).
gc_wrk_parse() { # wrk-output
  local out=$1 line
  line=$(grep '^GC_RESULT ' <<<"$out") || { echo "$out" >&2; return 1; }
  WRK_REQUESTS=$(sed -E 's/.* requests=([0-9]+).*/\1/' <<<"$line")
  WRK_RPS=$(sed -E 's/.* rps=([0-9.]+).*/\1/' <<<"$line")
  WRK_P50_MS=$(awk -v u="$(sed -E 's/.* p50_us=([0-9]+).*/\1/' <<<"$line")" 'BEGIN{printf "%.2f", u/1000}')
  WRK_P99_MS=$(awk -v u="$(sed -E 's/.* p99_us=([0-9]+).*/\1/' <<<"$line")" 'BEGIN{printf "%.2f", u/1000}')
  WRK_ERRORS=$(( $(sed -E 's/.* non2xx=([0-9]+).*/\1/' <<<"$line") + $(sed -E 's/.* sock_errors=([0-9]+).*/\1/' <<<"$line") ))
}

# CPU time (user + system, clock ticks) of a process and its threads so
# far; 0 when it is gone. The baseline's uvicorn is one process (1 worker).
gc_cpu_ticks() { # pid
  awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0
}

gc_port_free() { # host:port
  ! (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null
}

# Wait until GET URL/healthz answers 2xx; fail early if PID died.
gc_wait_healthy() { # name url pid
  local name=$1 url=$2 pid=$3 deadline=$((SECONDS + HEALTH_TIMEOUT))
  while ! curl -fsS -o /dev/null --max-time 2 "$url/healthz" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "error: $name exited before becoming healthy; last log lines:" >&2
      tail -n 30 "$GC_TMP/$name.log" >&2 || true
      return 1
    fi
    if (( SECONDS >= deadline )); then
      echo "error: $name not healthy at $url/healthz after ${HEALTH_TIMEOUT}s; last log lines:" >&2
      tail -n 30 "$GC_TMP/$name.log" >&2 || true
      return 1
    fi
    sleep 0.2
  done
  gc_log "$name healthy at $url (pid $pid)"
}

# Sanity checks before timing: 401 without the key, 200 with it, and the
# body is a renderer contract.
gc_smoke() { # name url
  local code
  code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    --data-binary "@$GC_PAYLOAD" "$2/v1/verify")
  [ "$code" = 401 ] || { echo "error: $1: POST /v1/verify without a key gave $code, want 401" >&2; return 1; }
  code=$(curl -sS -o "$GC_TMP/$1.smoke.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -H @<(printf 'Authorization: Bearer %s\n' "$GC_API_KEY") --data-binary "@$GC_PAYLOAD" "$2/v1/verify")
  [ "$code" = 200 ] || { echo "error: $1: POST /v1/verify gave $code, want 200:" >&2; head -c 600 "$GC_TMP/$1.smoke.json" >&2; echo >&2; return 1; }
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["contract_version"]=="1" and "claims" in d, d' \
    "$GC_TMP/$1.smoke.json" || { echo "error: $1: the response is not a contract" >&2; return 1; }
}

gc_start_groundcite() {
  local cmd=${GC_SERVE_CMD:-$GC_DEFAULT_CMD}
  gc_port_free "$GC_ADDR" || { echo "error: $GC_ADDR is already in use" >&2; return 1; }
  if [ -z "${GC_SERVE_CMD:-}" ] && [ "$GC_BUILD" = 1 ]; then
    gc_log "cargo build --release -p groundcite-cli --bins"
    cargo build --release -p groundcite-cli --bins >&2
  fi
  gc_write_keys_file "$GC_KEYS_FILE" "$GC_API_KEY"
  gc_log "starting groundcite: $cmd"
  GC_ADDR=$GC_ADDR GC_TMP=$GC_TMP TMP=$GC_TMP GC_KEYS_FILE=$GC_KEYS_FILE GC_API_KEY=$GC_API_KEY \
    bash -c "exec $cmd" > "$GC_TMP/groundcite.log" 2>&1 &
  GC_PIDS[groundcite]=$!
  gc_wait_healthy groundcite "http://$GC_ADDR" "${GC_PIDS[groundcite]}"
}

gc_start_baseline() {
  gc_port_free "$BASELINE_ADDR" || { echo "error: $BASELINE_ADDR is already in use" >&2; return 1; }
  if ! .venv/bin/python -c 'import fastapi, uvicorn, uvloop, httptools' 2>/dev/null; then
    gc_log "installing bench/serve/requirements.txt into .venv"
    [ -x .venv/bin/python ] || python3 -m venv .venv
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -r bench/serve/requirements.txt >&2
  fi
  # Like for like by default: the baseline commits the same durable traces
  # before answering, as groundcite does. BASELINE_TRACE_DB=none stores
  # nothing (the lighter, unfair baseline of the first published run).
  local trace_db=${BASELINE_TRACE_DB-$GC_TMP/baseline-traces.sqlite3}
  [ "$trace_db" != none ] || trace_db=""
  gc_log "starting FastAPI baseline (workers: $BASELINE_WORKERS; traces: ${trace_db:-none})"
  BASELINE_TRACE_DB=$trace_db BASELINE_API_KEY=$GC_API_KEY .venv/bin/python bench/serve/fastapi_verify.py \
    --host "${BASELINE_ADDR%:*}" --port "${BASELINE_ADDR##*:}" --workers "$BASELINE_WORKERS" \
    > "$GC_TMP/baseline.log" 2>&1 &
  GC_PIDS[baseline]=$!
  gc_wait_healthy baseline "http://$BASELINE_ADDR" "${GC_PIDS[baseline]}"
}

# Sum of VmRSS (KiB) of PID and all its descendants (uvicorn workers).
gc_rss_kib() { # pid
  local pid=$1 total=0 kids k
  local rss
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
  total=${rss:-0}
  kids=$(cat /proc/"$pid"/task/*/children 2>/dev/null || true)
  for k in $kids; do total=$(( total + $(gc_rss_kib "$k") )); done
  echo "$total"
}

gc_cleanup() {
  local name pid
  for name in "${!GC_PIDS[@]}"; do
    pid=${GC_PIDS[$name]}
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
  done
  # Keep the server logs and wrk output (never the key file) for a post-mortem.
  if [ -n "${GC_KEEP_LOGS:-}" ]; then
    mkdir -p "$(dirname "$GC_KEEP_LOGS")"
    for f in "$GC_TMP"/*.log; do
      [ -e "$f" ] && cp "$f" "$GC_KEEP_LOGS$(basename "$f")"
    done
  fi
  rm -rf "$GC_TMP"
}
