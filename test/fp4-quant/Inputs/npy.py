"""Writes and dumps small .npy files for the fp4-quant tests (stdlib only).

  npy.py write OUT DESCR SHAPE VALUES [--fortran] [--truncate N]
      DESCR is a NumPy descriptor ('<f4', '<u2', '|u1', '<f8'); SHAPE is a
      comma-separated list ('' for a scalar); VALUES is a comma-separated
      list, or 'ramp' for 0, 1, 2, ... scaled by 1/8 and alternating in sign.
      --truncate drops the last N bytes of the file.
  npy.py dump FILE
      prints the descriptor, the shape and the values, one per line.
"""

import ast
import struct
import sys

FORMATS = {"<f4": "f", "<f8": "d", "<u2": "H", "|u1": "B"}


def write(argv):
    out, descr, shape_text, values_text = argv[:4]
    fortran = "--fortran" in argv
    truncate = int(argv[argv.index("--truncate") + 1]) if "--truncate" in argv else 0
    shape = tuple(int(d) for d in shape_text.split(",") if d)
    count = 1
    for d in shape:
        count *= d
    if values_text == "ramp":
        values = [(-1) ** i * i / 8 for i in range(count)]
    else:
        values = [float(v) if descr[1] == "f" else int(v, 0)
                  for v in values_text.split(",") if v]
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", repr(shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    data = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()
    data += struct.pack("<%d%s" % (len(values), FORMATS[descr]), *values)
    with open(out, "wb") as f:
        f.write(data[:len(data) - truncate])


def dump(argv):
    with open(argv[0], "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<H", data[8:10])
    header = ast.literal_eval(data[10:10 + length].decode())
    code = FORMATS[header["descr"]]
    body = data[10 + length:]
    count = len(body) // struct.calcsize(code)
    print("descr", header["descr"], "shape", header["shape"])
    for value in struct.unpack("<%d%s" % (count, code), body):
        print(repr(value) if code in "fd" else "0x%02x" % value)


if __name__ == "__main__":
    {"write": write, "dump": dump}[sys.argv[1]](sys.argv[2:])
