#!/usr/bin/env bash
# Runs ceph/s3-tests (the public S3 conformance suite) against a fresh edgeport built from this
# checkout. Not run by CI or `npm test` (it needs the suite's checkout, Debian's python3-boto3 and
# about 12 minutes); docs/s3.md records its last result and why each remaining failure fails.
#
#   sudo apt-get install python3-boto3 python3-pytest python3-munch python3-isodate \
#     python3-requests python3-tz python3-httplib2 python3-lxml python3-gevent python3-pytest-timeout jq
#   git clone https://github.com/ceph/s3-tests /path/to/s3-tests
#   S3TESTS_DIR=/path/to/s3-tests bin/ceph-s3-tests.sh [extra pytest args, e.g. -k 'lifecycle']
#
# Environment:
#   S3TESTS_DIR     the s3-tests checkout (required)
#   S3TESTS_OUT     where results go (default ./s3tests-results): <stamp>.xml (junit), .log, .server.log
#   S3TESTS_FILES   which test files (default s3tests/functional/test_s3.py; test_headers.py is the other)
#   S3TESTS_PORT    the S3 port (default 18900); the API is on S3TESTS_PORT+1, the rest on free ports
#   S3TESTS_TIMEOUT per-test timeout in seconds with pytest-timeout (default 300)
#   S3TESTS_KEEP=1  keep the temporary data dir and server log
#   S3TESTS_PYTHONPATH  prepended to PYTHONPATH (a newer boto3/botocore than Debian's)
#   S3TESTS_SERVE=1 run no tests: start the server, print the s3tests.conf path, serve until stopped
#
# What it does: a temporary data dir (SQLite, the embedded default) and an edgeport.toml with the
# ports, the failed-signature limit raised (the suite sends many wrong signatures from one address),
# load shedding off and lifecycle sweeps every 2 s; the operator account "main" with a fixed S3 key,
# accounts alt@ and tenant@ made with `edgeport accounts create` and given S3 keys through the
# management API; an s3tests.conf; then pytest. The server is stopped on exit. Needs node 22.13+.
set -euo pipefail

TREE=$(cd "$(dirname "$0")/.." && pwd)
S3TESTS_DIR=${S3TESTS_DIR:?"set S3TESTS_DIR to a checkout of https://github.com/ceph/s3-tests"}
OUT=$(mkdir -p "${S3TESTS_OUT:-s3tests-results}" && cd "${S3TESTS_OUT:-s3tests-results}" && pwd)
S3_PORT=${S3TESTS_PORT:-18900}
API_PORT=$((S3_PORT + 1))
TIMEOUT=${S3TESTS_TIMEOUT:-300}
PY=/usr/bin/python3

if [[ ! -f "$S3TESTS_DIR/s3tests/functional/test_s3.py" ]]; then
  echo "ceph-s3-tests: no s3-tests in $S3TESTS_DIR: git clone https://github.com/ceph/s3-tests there" >&2
  exit 1
fi

mkdir -p "$OUT"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
TMP=$(mktemp -d /tmp/s3tests-edgeport-XXXXXX)
SERVER_PID=""

cleanup() {
  local rc=$?
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [[ "${S3TESTS_KEEP:-0}" == 1 ]]; then
    echo "ceph-s3-tests: kept $TMP (server log: $TMP/server.log)"
  else
    cp "$TMP/server.log" "$OUT/$STAMP.server.log" 2>/dev/null || true
    rm -rf "$TMP"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for port in "$S3_PORT" "$API_PORT"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "ceph-s3-tests: port $port is in use; set S3TESTS_PORT" >&2
    exit 1
  fi
done

echo "ceph-s3-tests: building $TREE (if stale)"
(cd "$TREE" && node --import tsx bin/build.ts)

cat > "$TMP/edgeport.toml" <<EOF
data_dir = "$TMP/data"
host = "127.0.0.1"
log_level = "warn"

[ports]
edge = 0
api = $API_PORT
gateway = 0
s3 = $S3_PORT

[limits]
max_event_loop_delay_ms = 0

[auth]
max_failures_per_address = 1000000

[store]
lifecycle_interval_ms = 2000
EOF

export EDGEPORT_ADMIN_EMAIL=main@s3tests.local
export EDGEPORT_ADMIN_KEY=s3tests-operator-key-0123456789abcdef
MAIN_KEY=S3TESTSMAIN000000001
MAIN_SECRET=s3tests-main-secret-0123456789abcdefghij
export EDGEPORT_S3_ACCESS_KEY_ID=$MAIN_KEY EDGEPORT_S3_SECRET_ACCESS_KEY=$MAIN_SECRET

EP=(node "$TREE/bin/edgeport.js")
echo "ceph-s3-tests: starting edgeport (data dir $TMP/data, S3 :$S3_PORT, API :$API_PORT)"
"${EP[@]}" start --config "$TMP/edgeport.toml" > "$TMP/server.log" 2>&1 &
SERVER_PID=$!
for i in $(seq 1 600); do
  if curl -s -o /dev/null "http://127.0.0.1:$S3_PORT/" && curl -sf -o /dev/null "http://127.0.0.1:$API_PORT/readyz"; then break; fi
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then echo "ceph-s3-tests: the server exited:" >&2; cat "$TMP/server.log" >&2; exit 1; fi
  [[ $i == 600 ]] && { echo "ceph-s3-tests: the server did not become ready in 60 s" >&2; cat "$TMP/server.log" >&2; exit 1; }
  sleep 0.1
done

API=http://127.0.0.1:$API_PORT/client/v4
# make_account <email> -> prints "<access key id> <secret>"
make_account() {
  local email=$1 out key account keyjson
  out=$("${EP[@]}" accounts create "$email" --config "$TMP/edgeport.toml")
  key=$(printf '%s\n' "$out" | sed -n 's/^ *X-Auth-Key: *//p')
  [[ -n "$key" ]] || { echo "ceph-s3-tests: no API key in: $out" >&2; return 1; }
  local auth=(-H "X-Auth-Email: $email" -H "X-Auth-Key: $key" -H 'Content-Type: application/json')
  account=$(curl -sf "$API/accounts" "${auth[@]}" | jq -r '.result[0].id')
  keyjson=$(curl -sf "$API/accounts/$account/store/access-keys" "${auth[@]}" --data '{"permission": "admin_read_write"}')
  printf '%s %s\n' "$(jq -r .result.access_key_id <<<"$keyjson")" "$(jq -r .result.secret_access_key <<<"$keyjson")"
}
read -r ALT_KEY ALT_SECRET < <(make_account alt@s3tests.local)
read -r TENANT_KEY TENANT_SECRET < <(make_account tenant@s3tests.local)
[[ -n "$ALT_KEY" && -n "$TENANT_KEY" && "$ALT_KEY" != null && "$TENANT_KEY" != null ]] || { echo "ceph-s3-tests: could not make the S3 keys" >&2; exit 1; }

# Every edgeport account's buckets and objects have one owner, "edgeport" (docs/s3.md, Listings),
# so the three users' ids and display names are that.
cat > "$TMP/s3tests.conf" <<EOF
[DEFAULT]
host = 127.0.0.1
port = $S3_PORT
is_secure = False
ssl_verify = False

[fixtures]
bucket prefix = s3t-{random}-
iam name prefix = s3-tests-
iam path prefix = /s3-tests/

[s3 main]
display_name = edgeport
user_id = edgeport
email = main@s3tests.local
api_name = auto
storage_classes = ${S3TESTS_STORAGE_CLASSES:-}
access_key = $MAIN_KEY
secret_key = $MAIN_SECRET

[s3 alt]
display_name = edgeport
user_id = edgeport
email = alt@s3tests.local
access_key = $ALT_KEY
secret_key = $ALT_SECRET

[s3 tenant]
display_name = edgeport
user_id = edgeport
email = tenant@s3tests.local
access_key = $TENANT_KEY
secret_key = $TENANT_SECRET
tenant = testx

[iam]
email = main@s3tests.local
user_id = edgeport
access_key = $MAIN_KEY
secret_key = $MAIN_SECRET
display_name = edgeport

[iam root]
access_key = $MAIN_KEY
secret_key = $MAIN_SECRET
user_id = edgeport
email = main@s3tests.local

[iam alt root]
access_key = $ALT_KEY
secret_key = $ALT_SECRET
user_id = edgeport
email = alt@s3tests.local
EOF
cp "$TMP/s3tests.conf" "$OUT/$STAMP.s3tests.conf"

if [[ "${S3TESTS_SERVE:-0}" == 1 ]]; then
  echo "ceph-s3-tests: serving; S3TEST_CONF=$TMP/s3tests.conf (Ctrl-C or SIGTERM to stop)"
  wait "$SERVER_PID"
  exit 0
fi

TIMEOUT_ARGS=()
if "$PY" -c 'import pytest_timeout' 2>/dev/null; then TIMEOUT_ARGS=(--timeout "$TIMEOUT"); fi

echo "ceph-s3-tests: running s3-tests in $S3TESTS_DIR ($(git -C "$S3TESTS_DIR" rev-parse --short HEAD 2>/dev/null || cat "$S3TESTS_DIR/.s3tests-commit" 2>/dev/null || echo 'commit unknown')) against $TREE ($(git -C "$TREE" rev-parse --short HEAD))"
START=$(date +%s)
set +e
(cd "$S3TESTS_DIR" && export PYTHONPATH="${S3TESTS_PYTHONPATH:+$S3TESTS_PYTHONPATH:}${PYTHONPATH:-}" &&
  "$PY" -c 'import boto3, botocore; print("ceph-s3-tests: boto3", boto3.__version__, "botocore", botocore.__version__)' &&
  S3TEST_CONF="$TMP/s3tests.conf" "$PY" -m pytest -p no:cacheprovider \
  "${TIMEOUT_ARGS[@]}" -rfE --tb=short --junitxml "$OUT/$STAMP.xml" \
  ${S3TESTS_FILES:-s3tests/functional/test_s3.py} "$@") 2>&1 | tee "$OUT/$STAMP.log" | grep --line-buffered -E '^(FAILED|ERROR) |^=+ .*(passed|failed|error).* =+$|^ceph-s3-tests:'
RC=${PIPESTATUS[0]}
set -e
echo "ceph-s3-tests: pytest exit $RC in $(( $(date +%s) - START )) s; junit $OUT/$STAMP.xml, log $OUT/$STAMP.log"
# pytest: 0 all passed, 1 some failed (the expected outcome); anything else is a broken run.
[[ $RC -le 1 ]] || exit "$RC"
