#!/usr/bin/env python3
"""make_seeds.py: writes the hand-made seed inputs of tests/fuzz/corpus/.

Run once from the repository root (python3 tests/fuzz/make_seeds.py); the
files are committed.  Inputs found by fuzzing are merged in beside them with
`make fuzz-merge`.  Seeds are small: a bundle-like archive, hostile archives
(one per rule of docs/zip-reading.md), JSON and CSV samples, good and bad.
"""
import io
import os
import struct
import zipfile
import zlib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def bundle(members, method=zipfile.ZIP_DEFLATED, mode=0o100644):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            info.external_attr = mode << 16
            info.create_system = 3
            z.writestr(info, data)
    return buf.getvalue()


SAMPLES = ("run_id,job_id,attempt,op,rows,cols,stride,dtype,default_rows,role,arm,phase,label,"
           "outcome,timing,sample_index,replays,ops_per_graph,elapsed_ms,per_op_us\n"
           "1,1,1,reduce_sum,4096,4096,4096,fp32,4,calibration,rows1,main,,completed,hot,0,"
           "1200,100,12.345678901234567,0.10288065750102806\n")
GOOD = [
    ("protocol.json", '{"name": "quick", "seed": 16, "cases": []}\n'),
    ("samples.csv", SAMPLES),
    ("validation.json", '{"run_status": "completed", "jobs": []}\n'),
    ("model.json", '{"a0": 0.9029, "aP": 0, "aD": 0.00011327}\n'),
    ("outputs/job-1.bin", b"\x00\x00\x80\x3f" * 8),
    ("sources/kernels/reduce.cu", "// reduce kernels\n"),
    ("receipts.json", '{"members": []}\n'),
]


def zip_seeds():
    good = bundle(GOOD)
    put("zipread", "bundle.zip", good)
    put("zipread", "stored.zip", bundle(GOOD[:3], zipfile.ZIP_STORED))
    put("zipread", "empty-archive.zip", b"PK\x05\x06" + b"\x00" * 18)
    put("zipread", "empty-file", b"")
    put("zipread", "not-a-zip.txt", "hello, this is not an archive at all\n")
    put("zipread", "truncated.zip", good[: len(good) // 2])
    put("zipread", "truncated-end.zip", good[:-5])
    put("zipread", "trailing.zip", good + b"junk")
    put("zipread", "prepended.zip", b"#!/bin/sh\n" + good)
    small = bundle([("a.json", "{}"), ("b.csv", "x\n")])
    put("zipread", "dup-names.zip", bundle([("a.json", "1"), ("a.json", "2")]))
    put("zipread", "dotdot.zip", bundle([("../a.json", "{}")]))
    put("zipread", "absolute.zip", bundle([("/etc/x", "{}")]))
    put("zipread", "backslash.zip", bundle([("a\\b.json", "{}")]))
    put("zipread", "control.zip", bundle([("a\nb", "{}")]))
    put("zipread", "symlink.zip", bundle([("link", "/etc/passwd")], mode=0o120777))
    put("zipread", "directory.zip", bundle([("dir/", "")], mode=0o040755))
    # flags and methods patched in both headers
    def patch(data, off_local, off_central, fmt, value):
        b = bytearray(data)
        i = b.find(b"PK\x03\x04")
        struct.pack_into(fmt, b, i + off_local, value)
        j = b.find(b"PK\x01\x02")
        struct.pack_into(fmt, b, j + off_central, value)
        return bytes(b)
    one = bundle([("a.json", '{"x": 1}')], zipfile.ZIP_STORED)
    put("zipread", "encrypted-flag.zip", patch(one, 6, 8, "<H", 1))
    put("zipread", "method-99.zip", patch(one, 8, 10, "<H", 99))
    put("zipread", "bad-crc.zip", patch(one, 14, 16, "<I", 0x12345678))
    put("zipread", "size-lies.zip", patch(one, 22, 24, "<I", 3))
    # data descriptor: zipfile uses one when writing to an unseekable stream
    class Unseekable(io.RawIOBase):
        def __init__(self):
            self.b = bytearray()
        def writable(self):
            return True
        def write(self, d):
            self.b += d
            return len(d)
    u = Unseekable()
    with zipfile.ZipFile(u, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.json", '{"x": 1}')
    put("zipread", "data-descriptor.zip", bytes(u.b))
    # a small deflate bomb: 1 MiB of zeros
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = comp.compress(b"\x00" * (1 << 20)) + comp.flush()
    crc = zlib.crc32(b"\x00" * (1 << 20))
    name = b"bomb.bin"
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, len(body), 1 << 20,
                        len(name), 0) + name
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x0314, 20, 0, 8, 0, 0x21, crc,
                          len(body), 1 << 20, len(name), 0, 0, 0, 0, 0o100644 << 16, 0) + name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local) + len(body), 0)
    put("zipread", "bomb-1mib.zip", local + body + central + end)
    put("zipread", "two-members.zip", small)


def json_seeds():
    put("json", "protocol.json", '{"name": "quick", "seed": 16, "backend": "cpu", '
        '"cases": [{"op": "reduce_sum", "rows": 4096, "cols": 4096, "dtype": "fp32", '
        '"default_rows": 4, "role": "calibration"}], "samples": 7, "warmup_ms": 500}\n')
    put("json", "doubles.json", '[0.1, 0.30000000000000004, 1e-05, -0, 2.2250738585072014e-308, '
        '4.9406564584124654e-324, 1.7976931348623157e+308, 9007199254740992, "9007199254740993"]')
    put("json", "nested.json", '{"a": {"b": [1, {"c": [true, false, null]}]}, "s": "\\u00e9\\n\\""}')
    put("json", "dup-key.json", '{"a": 1, "a": 2}')
    put("json", "trailing.json", '{"a": 1} x')
    put("json", "deep.json", "[" * 100 + "]" * 100)
    put("json", "nul-escape.json", '{"a": "x\\u0000y"}')
    put("json", "leading-zero.json", "[01]")
    put("json", "overflow.json", "[1e999]")
    put("json", "not-canonical.json", "[0.10, 1.0, 1E5]")
    put("json", "bad-utf8.json", b'["\xc3\x28"]')
    put("json", "surrogate.json", '["\\ud800", "\\ud83d\\ude00"]')
    put("json", "empty", "")


def csv_seeds():
    # first byte odd: the header is put in front by the harness
    rows = "reduce_sum,4096,4096,fp32,4,rows1,12.5\nreduce_max,1024,512,bf16,2,default,0.90290\n"
    put("csv", "rows", b"\x01" + rows.encode())
    put("csv", "with-header", b"\x00op,rows,cols,dtype,default_rows,schedule,median_us,role\n"
        + b"reduce_sum,1,2,fp16,1,rows2,1e-3,holdout\r\n")
    put("csv", "quoted", b'\x01"reduce,sum",1,2,"fp""32",4,"rows\n1",3.5\n')
    put("csv", "short-row", b"\x01reduce_sum,1,2\n")
    put("csv", "bad-utf8", b"\x01reduce_sum,1,2,fp32,4,rows1,\xff\n")
    put("csv", "nul", b"\x01reduce_sum,1,2,fp32,4,rows1,1\x00\n")
    put("csv", "numbers", b"\x01x,-9223372036854775808,9223372036854775808,y,0x10,z,nan\n")
    put("csv", "bad-header", b"\x00op,rows,cols\n1,2,3\n")


# samples.csv rows (no header) from the first H200 run: one job's attempt
# (cold then hot samples), then rows of another job.
SAMPLES_ROWS = (
    "1,1,1,reduce_sum,4096,512,512,bf16,8,holdout,default,main,initial,completed,cold,0,1,1,0.0062719997949898243,6.2719997949898243,main/25/default/initial,1,completed,\n"
    "1,1,1,reduce_sum,4096,512,512,bf16,8,holdout,default,main,initial,completed,cold,1,1,1,0.0057919998653233051,5.7919998653233051,main/25/default/initial,1,completed,\n"
    "1,1,1,reduce_sum,4096,512,512,bf16,8,holdout,default,main,initial,completed,cold,2,1,1,0.0059839999303221703,5.9839999303221703,main/25/default/initial,1,completed,\n"
    "1,1,1,reduce_sum,4096,512,512,bf16,8,holdout,default,main,initial,completed,hot,0,204,100,49.889537811279297,2.4455655789842794,main/25/default/initial,1,completed,1980\n"
    "1,1,1,reduce_sum,4096,512,512,bf16,8,holdout,default,main,initial,completed,hot,1,204,100,49.895488739013672,2.4458572911281213,main/25/default/initial,1,completed,1980\n"
    "1,1,1,reduce_sum,4096,512,512,bf16,8,holdout,default,main,initial,completed,hot,2,204,100,49.887550354003906,2.4454681546080348,main/25/default/initial,1,completed,1980\n"
    "1,1,1,reduce_sum,4096,512,512,bf16,8,holdout,default,main,initial,completed,hot,3,204,100,49.891777038574219,2.4456753450281479,main/25/default/initial,1,completed,1980\n"
    "1,1,1,reduce_sum,4096,512,512,bf16,8,holdout,default,main,initial,completed,hot,4,204,100,49.883457183837891,2.4452675090116611,main/25/default/initial,1,completed,1980\n"
    "1,1,1,reduce_sum,4096,512,512,bf16,8,holdout,default,main,initial,completed,hot,5,204,100,49.878688812255859,2.4450337653066598,main/25/default/initial,1,completed,1980\n"
    "1,1,1,reduce_sum,4096,512,512,bf16,8,holdout,default,main,initial,completed,hot,6,204,100,49.870784759521484,2.4446463117412494,main/25/default/initial,1,completed,1980\n"
    "1,2,1,reduce_max,37,257,257,fp32,4,calibration,rows1,main,initial,completed,cold,0,1,1,0.0051839998923242092,5.1839998923242092,main/11/rows1/initial,2,completed,\n"
    "1,2,1,reduce_max,37,257,257,fp32,4,calibration,rows1,main,initial,completed,cold,1,1,1,0.0048320000059902668,4.8320000059902668,main/11/rows1/initial,2,completed,\n"
    "1,70,1,reduce_sum,1024,512,512,fp16,4,calibration,cub,main,initial,completed,hot,5,180,100,50.025150299072266,2.7791750166151257,main/8/cub/initial,70,completed,1980\n"
    "1,70,1,reduce_sum,1024,512,512,fp16,4,calibration,cub,main,initial,completed,hot,6,180,100,50.043136596679688,2.7801742553710938,main/8/cub/initial,70,completed,1980\n"
    "1,71,1,reduce_max,128,2048,2048,bf16,8,calibration,default,main,initial,completed,cold,0,1,1,0.006111999973654747,6.111999973654747,main/5/default/initial,71,completed,\n"
    "1,71,1,reduce_max,128,2048,2048,bf16,8,calibration,default,main,initial,completed,cold,1,1,1,0.0057279998436570168,5.7279998436570168,main/5/default/initial,71,completed,\n"
    "1,71,1,reduce_max,128,2048,2048,bf16,8,calibration,default,main,initial,completed,cold,2,1,1,0.0058559998869895935,5.8559998869895935,main/5/default/initial,71,completed,\n"
    "1,71,1,reduce_max,128,2048,2048,bf16,8,calibration,default,main,initial,completed,hot,0,231,100,49.826942443847656,2.1570104954046605,main/5/default/initial,71,completed,1980\n"
)


def samples_seeds():
    """fuzz_samples: byte 0 picks the stream's piece size (0: whole), byte 1
    bit 0 puts the header in front."""
    rows = SAMPLES_ROWS
    short = "".join(rows.split("\n")[i] + "\n" for i in (0, 1, 3, 4, 12))
    put("samples", "short-whole", b"\x00\x01" + short.encode())
    put("samples", "short-pieces-5", b"\x05\x01" + short.encode())
    put("samples", "rows-whole", b"\x00\x01" + rows.encode())
    put("samples", "rows-pieces-7", b"\x07\x01" + rows.encode())
    put("samples", "rows-pieces-1", b"\x01\x01" + rows.encode())
    put("samples", "crlf", b"\x05\x01" + rows.replace("\n", "\r\n").encode())
    put("samples", "quoted", b"\x09\x01" + rows.replace(",main,", ',"main",', 1).encode())
    put("samples", "no-final-newline", b"\x03\x01" + rows[:-1].encode())
    lines = rows.split("\n")
    put("samples", "duplicate-row", b"\x0b\x01" + ("\n".join(lines[:5] + [lines[4]] + lines[5:])).encode())
    put("samples", "noncanonical", b"\x0d\x01" + rows.replace("0.0057919998653233051", "0.00579199986532330510", 1).encode())
    put("samples", "no-header", b"\x00\x00" + rows.encode())


if __name__ == "__main__":
    zip_seeds()
    json_seeds()
    csv_seeds()
    samples_seeds()
