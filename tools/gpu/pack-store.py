#!/usr/bin/env python3
"""tools/gpu/pack-store.py DB OUT.xz: folds the store's write-ahead log into
it (a checkpoint; the store stays usable) and writes it xz-compressed to
OUT.xz, with Python's lzma, so that a GPU host without the xz program
does it too.  A device returns files of at most 16 MB: a 678-job store
of the flagship (two thirds of it) was 25.4 MB, 11.4 MB gzipped (so about
17 MB for the whole run), 1.3 MB here.  Prints the
store's sample and run-status counts and both sizes."""
import lzma
import os
import shutil
import sqlite3
import sys

if len(sys.argv) != 3:
    sys.exit("usage: tools/gpu/pack-store.py DB OUT.xz")
db, out = sys.argv[1], sys.argv[2]
if not os.path.isfile(db):
    # sqlite3.connect would create an empty store, which the next call's
    # run would then try to --resume
    sys.exit("tools/gpu/pack-store.py: no store %s (the run did not start: its log says why)" % db)
c = sqlite3.connect(db)
c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
n_samples = c.execute("select count(*) from samples").fetchone()[0]
n_status = c.execute("select count(*) from run_status").fetchone()[0]
c.close()
with open(db, "rb") as i, lzma.open(out, "wb", preset=6) as o:
    shutil.copyfileobj(i, o, 1 << 20)
print("store: %d samples; %d run status rows; %.1f MB, %.1f MB as %s" %
      (n_samples, n_status, os.path.getsize(db) / 1e6, os.path.getsize(out) / 1e6, os.path.basename(out)))
