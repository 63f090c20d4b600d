#!/usr/bin/env python3
"""tamper-sample.py IN.zip OUT.zip: a copy of a bundle whose samples.csv
has its first sample's per_op_us doubled and every other member as it was
(receipts.json now disagrees with samples.csv, and so does every figure
drawn from it): the failing bundle of make test-browser."""
import sys
import zipfile


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as b:
        for info in a.infolist():
            data = a.read(info.filename)
            if info.filename == "samples.csv":
                lines = data.split(b"\n")
                header = lines[0].split(b",")
                col = header.index(b"per_op_us")
                fields = lines[1].split(b",")
                fields[col] = repr(float(fields[col]) * 2).encode()
                lines[1] = b",".join(fields)
                data = b"\n".join(lines)
            b.writestr(info.filename, data)


if __name__ == "__main__":
    main()
