#!/usr/bin/env python3
"""zipcat.py ZIP MEMBER: writes one member of a zip to stdout; zipcat.py -l ZIP:
lists the member names, one a line.  The tests' stand-in for `unzip -p` and
`unzip -l`, which a GPU host may lack (python3 is there)."""
import signal
import sys
import zipfile

# A reader that stops early (grep -q) ends this as it ends unzip: by
# SIGPIPE, quietly, not with a BrokenPipeError traceback.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)

if len(sys.argv) == 3 and sys.argv[1] == "-l":
    for name in zipfile.ZipFile(sys.argv[2]).namelist():
        print(name)
elif len(sys.argv) == 3:
    sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))
else:
    sys.exit("usage: zipcat.py ZIP MEMBER | zipcat.py -l ZIP")
