#!/bin/sh
# mk/receipt-store.sh DIR TMP: prints the path of receipts/<host>'s store
# for reading: DIR/evidence.db where it is committed as is, else
# DIR/evidence.db.xz decompressed into TMP (a store of a five-round run is
# tens of MB; xz keeps about an eighth).  Python's lzma does it, so that
# nothing beyond python3 is needed.  Exit 1, saying so, when DIR has
# neither; 2 on usage.
[ $# = 2 ] || { echo "usage: mk/receipt-store.sh DIR TMP" >&2; exit 2; }
if [ -f "$1/evidence.db" ]; then
    echo "$1/evidence.db"
elif [ -f "$1/evidence.db.xz" ]; then
    python3 -c 'import lzma, shutil, sys
with lzma.open(sys.argv[1]) as i, open(sys.argv[2], "wb") as o:
    shutil.copyfileobj(i, o)' "$1/evidence.db.xz" "$2" || exit 1
    echo "$2"
else
    echo "mk/receipt-store.sh: $1 holds no evidence.db or evidence.db.xz" >&2
    exit 1
fi
