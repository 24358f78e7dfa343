#!/bin/sh
# A one-node Ceph cluster with Debian's radosgw (S3 on Ceph), to run edgeport's blob-store contract
# and edgeport itself against a real third-party S3 server. Not run by CI or `npm test` (it needs
# Debian's ceph packages and a few minutes); docs/operations.md records its last result.
#
#   sudo apt-get install ceph-mon ceph-osd radosgw ceph-common   # Debian 12: Ceph 16.2 (pacific)
#   bin/radosgw-one-node.sh [DIR]                                 # start, run the suite, stop
#   bin/radosgw-one-node.sh start DIR | url DIR | stop DIR        # or keep it running meanwhile
#
# Everything lives in DIR (default: a new directory under /tmp): one monitor and one OSD (BlueStore
# on a 4 GiB sparse file) on 127.0.0.1, authentication off, pools of size 1, and radosgw on its own
# port with one user and the bucket `edgeport-blobs`. `url` prints the `[blobs] url` for it. The
# daemons run as the user running this script (root, as Debian's packages expect).
set -eu

MON_PORT=${RADOSGW_MON_PORT:-16789}
RGW_PORT=${RADOSGW_PORT:-17480}
ACCESS_KEY=EDGEPORTRADOSGW00001
SECRET_KEY=edgeport-radosgw-secret-0123456789
BUCKET=edgeport-blobs
ROOT=$(cd "$(dirname "$0")/.." && pwd)

command=${1:-all}
case "$command" in
  start|stop|url) dir=${2:?"usage: $0 $command DIR"} ;;
  all) dir=${2:-$(mktemp -d /tmp/edgeport-radosgw-XXXXXX)} ;;
  *) dir=$command; command=all ;;
esac
conf="$dir/ceph.conf"

need() {
  command -v "$1" >/dev/null || { echo "radosgw-one-node: $1 is missing: sudo apt-get install ceph-mon ceph-osd radosgw ceph-common" >&2; exit 1; }
}

url() {
  echo "s3://$BUCKET/contract?endpoint=http://127.0.0.1:$RGW_PORT&region=us-east-1&access-key-id=$ACCESS_KEY&secret-access-key=$SECRET_KEY"
}

stop() {
  for name in radosgw osd mon; do
    [ -f "$dir/run/$name.pid" ] || continue
    pid=$(cat "$dir/run/$name.pid")
    kill "$pid" 2>/dev/null || true
    # An OSD takes a few seconds to shut down; a daemon still there after 30 s is killed.
    waited=0
    while kill -0 "$pid" 2>/dev/null && [ $waited -lt 30 ]; do sleep 1; waited=$((waited + 1)); done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/run/$name.pid"
  done
}

start() {
  for tool in monmaptool ceph-mon ceph-osd radosgw radosgw-admin ceph uuidgen curl node; do need "$tool"; done
  mkdir -p "$dir/run" "$dir/log" "$dir/mon/ceph-a" "$dir/osd/ceph-0" "$dir/rgw"
  fsid=$(uuidgen)
  cat > "$conf" <<EOF
[global]
fsid = $fsid
mon host = v1:127.0.0.1:$MON_PORT
ms bind msgr2 = false
auth cluster required = none
auth service required = none
auth client required = none
run dir = $dir/run
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
mon data = $dir/mon/\$cluster-\$id
osd data = $dir/osd/\$cluster-\$id
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
osd class update on start = false
osd crush update on start = false
osd objectstore = bluestore
bluestore block create = true
bluestore block size = 4294967296
bluestore cache size = 134217728
osd memory target = 939524096
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT
rgw data = $dir/rgw
EOF
  monmaptool --create --clobber --fsid "$fsid" --addv a "[v1:127.0.0.1:$MON_PORT]" "$dir/monmap" >/dev/null
  ceph-mon -c "$conf" -i a --mkfs --monmap "$dir/monmap"
  ceph-mon -c "$conf" -i a -f >/dev/null 2>&1 &
  echo $! > "$dir/run/mon.pid"
  timeout 60 sh -c "until ceph -c '$conf' mon stat >/dev/null 2>&1; do sleep 1; done"
  osd_uuid=$(uuidgen)
  ceph -c "$conf" osd new "$osd_uuid" >/dev/null
  ceph-osd -c "$conf" -i 0 --mkfs --osd-uuid "$osd_uuid" >/dev/null 2>&1
  # Placed by hand (updating the CRUSH map at OSD start fails without authentication: "wrong fsid").
  ceph -c "$conf" osd crush add osd.0 1.0 host=localhost root=default >/dev/null 2>&1
  ceph-osd -c "$conf" -i 0 -f >/dev/null 2>&1 &
  echo $! > "$dir/run/osd.pid"
  timeout 120 sh -c "until ceph -c '$conf' osd stat 2>/dev/null | grep -q '1 up'; do sleep 1; done"
  radosgw -c "$conf" -n client.rgw -f >/dev/null 2>&1 &
  echo $! > "$dir/run/radosgw.pid"
  timeout 120 sh -c "until curl -s -o /dev/null http://127.0.0.1:$RGW_PORT/; do sleep 1; done"
  radosgw-admin -c "$conf" user create --uid=edgeport --display-name=edgeport --access-key="$ACCESS_KEY" --secret="$SECRET_KEY" >/dev/null
  # The bucket, made with the AWS SDK edgeport itself uses (edgeport never creates its blob bucket).
  (cd "$ROOT" && node --input-type=module -e "
    import { S3Client, CreateBucketCommand } from '@aws-sdk/client-s3';
    const s3 = new S3Client({ endpoint: 'http://127.0.0.1:$RGW_PORT', region: 'us-east-1', forcePathStyle: true,
      credentials: { accessKeyId: '$ACCESS_KEY', secretAccessKey: '$SECRET_KEY' } });
    await s3.send(new CreateBucketCommand({ Bucket: '$BUCKET' }));")
  echo "radosgw-one-node: $(radosgw --version | head -1) on 127.0.0.1:$RGW_PORT, data in $dir" >&2
}

case "$command" in
  start) start; url ;;
  url) url ;;
  stop) stop ;;
  all)
    trap stop EXIT
    start
    cd "$ROOT"
    EDGEPORT_BLOBS_TEST_URL=$(url) node --import tsx --test --test-timeout=300000 test/store/blobs/any-s3-blob-store.run.ts
    ;;
esac
