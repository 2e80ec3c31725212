#!/usr/bin/env bash
# Every example, in the README's order, against a running Verdict:
#   VERDICT_URL (default http://127.0.0.1:8080) and VERDICT_KEY (a key with the decide role).
# The cluster comes from the fake kubectl beside this script (examples/kubectl), which serves
# recorded answers as a real cluster would; point PATH at a real kubectl to capture yours.
# The test suite runs this very script against a real `verdict serve` (tests/test_examples.py).
set -euo pipefail
URL="${VERDICT_URL:-http://127.0.0.1:8080}"
VERDICT="${VERDICT:-verdict}"
# Files written on the way (the capture, the eviction answer) go to VERDICT_EXAMPLES_OUT.
OUT="${VERDICT_EXAMPLES_OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
# Paths given relative to where the script was started (VERDICT=.venv/bin/verdict) are made
# absolute before it moves to its own folder.
case "$VERDICT" in */*) VERDICT="$(cd "$(dirname "$VERDICT")" && pwd)/$(basename "$VERDICT")" ;; esac
OUT="$(cd "$OUT" && pwd)"
cd "$(dirname "$0")"
call() {  # call METHOD PATH [curl options...]: print the answer; fail on any HTTP error
    local method="$1" path="$2"
    shift 2
    echo "== $method $path" >&2
    curl -sS --fail-with-body -X "$method" -H "Authorization: Bearer $VERDICT_KEY" "$@" "$URL$path"
    echo
}
field() {  # field NAME: one top-level field of the JSON on stdin
    python3 -c "import json, sys; print(json.load(sys.stdin)['$1'])"
}

# 1. Capture: objects, kubelet stats and configuration of every node (node-2 does not answer).
PATH="$PWD/kubectl:$PATH" FAKE_KUBECTL_DIR="$PWD/kubectl/answers" \
    "$VERDICT" capture --output "$OUT/cluster.json.gz" --name "example capture"

# 2. Ingest: the capture (gzipped JSON), and the same cluster written by hand (YAML).
SNAP=$(call POST /v1/snapshots -H 'Content-Type: application/json' -H 'Content-Encoding: gzip' \
    --data-binary @"$OUT/cluster.json.gz" | tee /dev/stderr | field id)
call POST /v1/snapshots -H 'Content-Type: application/yaml' --data-binary @cluster.yaml
call GET "/v1/snapshots/$SNAP/pods?nodeName=node-1"

# 3. One decision of each kind (YAML requests; the eviction answer in YAML).
for kind in admission placement preemption node-eviction-rate drain; do
    sed "s/SNAPSHOT_ID/$SNAP/" "$kind.yaml" |
        call POST "/v1/decisions/$kind" -H 'Content-Type: application/yaml' --data-binary @-
done
sed "s/SNAPSHOT_ID/$SNAP/" eviction.yaml |
    call POST /v1/decisions/eviction -H 'Content-Type: application/yaml' \
        -H 'Accept: application/yaml' --data-binary @- | tee "$OUT/eviction.yaml"
DECISION=$(call GET "/v1/decisions?kind=eviction&snapshotId=$SNAP&limit=1" |
    python3 -c "import json, sys; print(json.load(sys.stdin)['items'][0]['id'])")

# 4. History: list, one record, replay (as stored and under 1.35), the impact of 1.35 on
# this snapshot's decisions, the chain's verification, export.
call GET "/v1/decisions?snapshotId=$SNAP&since=2026-01-01"
call GET "/v1/decisions/$DECISION"
call GET "/v1/decisions/$DECISION" -H 'Accept: application/yaml'
call POST "/v1/decisions/$DECISION/replay"
call POST "/v1/decisions/$DECISION/replay" -H 'Content-Type: application/json' \
    -d '{"kubernetesVersion": "1.35"}'
call POST /v1/impact -H 'Content-Type: application/json' \
    -d "{\"kubernetesVersion\": \"1.35\", \"filter\": {\"snapshotId\": \"$SNAP\"}, \"limit\": 100}"
call GET /v1/audit/verify
call GET "/v1/decisions/export?since=2026-01-01"
