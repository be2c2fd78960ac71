#!/usr/bin/python3
"""Corpora of the fuzzers in fuzz/.

  corpus.py seeds SRC OUT    seed corpora for every fuzzer from the tests and
                             examples under SRC, one directory per fuzzer
  corpus.py decode IN OUT    the regression corpus IN (fuzz/corpus/<fuzzer>/
                             *.esc) as raw inputs under OUT/<fuzzer>/
  corpus.py encode FILE      prints a raw input (a crash libFuzzer wrote) in
                             the .esc form of the regression corpus
  corpus.py thin DIR N       keeps at most N seeds in each DIR/<fuzzer>/, an
                             even spread over their sorted names (a smoke run
                             replays a sample instead of every test)

A .esc file holds one input as text: printable ASCII and newlines as they
are, every other byte and the backslash as \\xNN. Inputs stay readable and
diffable, and the tree holds no binary files.
"""

import hashlib
import os
import re
import struct
import sys

# Selector counts; they must match the tables in OptFuzzer.cpp and
# OptionFuzzer.cpp (the fuzzers take the selector modulo the count, so a
# mismatch only skews which pipeline a seed starts on).
OPT_PIPELINES = 25
OPTION_TARGETS = [
    "fp4train-quantize-matmuls", "fp4train-quantize-pipeline",
    "fp4train-annotate-roles", "fp4train-expand", "fp4train-to-runtime",
    "fp4train-cpu-pipeline", "fp4train-rocm-kernel-pipeline",
    "fp4train-cuda-kernel-pipeline", "fp4train-to-amdgpu", "fp4train-to-nvvm",
    "fp4train-interchange-contractions", "fp4train-vectorize-contractions",
    "fp4train-check-indices", "fp4train-gpu-device-memory",
    "fp4train-cuda-pipeline", "fp4train-rocm-pipeline",
]
# The option fuzzer's last selector: the text is a whole pipeline.
OPTION_WHOLE_PIPELINE = 2 + len(OPTION_TARGETS)


def encode(data):
    out = []
    for b in data:
        if b == 0x5C or not (0x20 <= b < 0x7F or b == 0x0A):
            out.append("\\x%02x" % b)
        else:
            out.append(chr(b))
    return "".join(out)


def decode(text):
    out = bytearray()
    i = 0
    while i < len(text):
        if text.startswith("\\x", i):
            out.append(int(text[i + 2:i + 4], 16))
            i += 4
        else:
            out += text[i].encode()
            i += 1
    return bytes(out)


def write_seed(directory, data):
    os.makedirs(directory, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def sources(src, suffixes):
    for top in ("test", "examples"):
        for root, _, files in os.walk(os.path.join(src, top)):
            for name in sorted(files):
                if name.endswith(suffixes):
                    yield os.path.join(root, name)


def balanced(text, start, open_char, close_char):
    """The text from `start` (an open_char) to its matching close_char."""
    depth = 0
    for i in range(start, len(text)):
        depth += text[i] == open_char
        depth -= text[i] == close_char
        if depth == 0:
            return text[start:i + 1]
    return None


def opt_seeds(src, out):
    count = 0
    for path in sources(src, (".mlir",)):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for chunk in re.split(r"^// -----$", text, flags=re.M):
            body = chunk.encode()
            # Two pipelines per chunk, spread over the table.
            digest = hashlib.sha1(body).digest()
            for selector in {digest[0] % OPT_PIPELINES, count % OPT_PIPELINES}:
                write_seed(out, bytes([selector]) + body)
            count += 1


def option_seeds(src, out):
    for path in sources(src, (".mlir", ".test")):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for prefix, selector in (("#fp4train.", 0), ("!fp4train.", 1)):
            for match in re.finditer(re.escape(prefix) + r"\w+<", text):
                item = balanced(text, match.end() - 1, "<", ">")
                if item:
                    item = " ".join((text[match.start():match.end() - 1] +
                                     item).split())
                    write_seed(out, bytes([selector]) + item.encode())
        for match in re.finditer(
                r"--(fp4train-[\w-]+)=(?:\"([^\"\n]*)\"|'([^'\n]*)')", text):
            name = match.group(1)
            value = match.group(2) if match.group(2) is not None else match.group(3)
            if name in OPTION_TARGETS:
                selector = 2 + OPTION_TARGETS.index(name)
                write_seed(out, bytes([selector]) + value.encode())


# Pipelines nested under other anchors, for the option and C API fuzzers.
NESTED_PIPELINES = [
    "builtin.module(func.func(fp4train-quantize-pipeline{recipe=nvfp4}))",
    "builtin.module(func.func(fp4train-cpu-pipeline{recipe=none}))",
    "builtin.module(any(fp4train-cuda-kernel-pipeline))",
    "builtin.module(gpu.module(fp4train-rocm-kernel-pipeline))",
    "builtin.module(builtin.module(fp4train-quantize-pipeline))",
    "builtin.module(fp4train-cpu-pipeline{recipe=mxfp4 numerics=ir})",
    "func.func(fp4train-interchange-contractions)",
    "builtin.module(fp4train-check-indices,fp4train-quantize-pipeline{recipe=nvfp4})",
]


def nested_pipeline_seeds(out):
    for pipeline in NESTED_PIPELINES:
        write_seed(out, bytes([OPTION_WHOLE_PIPELINE]) + pipeline.encode())


def case_file_seeds(src, out):
    for path in sources(src, (".txt",)):
        if os.sep + "Inputs" + os.sep in path and "cases" in os.path.basename(path):
            with open(path, "rb") as f:
                write_seed(out, f.read())
    for text in ("a check k.mlir f\n../../x check k.mlir f\n",
                 "twice check k.mlir f\ntwice timing k.mlir g nvfp4\n",
                 "# only a comment\n\n", ".hidden check k.mlir f\n"):
        write_seed(out, text.encode())


def task_seeds(src, out):
    corpus = b""
    docs = os.path.join(src, "docs")
    for name in sorted(os.listdir(docs)):
        if name.endswith(".md"):
            with open(os.path.join(docs, name), "rb") as f:
                corpus += f.read()
    for batch, length, evals, seed in ((1, 64, 4, 1), (4, 16, 1, 7),
                                       (16, 1023, 999999, 3), (1, 1, 1, 0)):
        word = (batch - 1) | (length - 1) << 4 | (evals - 1) << 14
        params = struct.pack("<QQ", word, seed)
        write_seed(out, params + corpus[:max(20 * (length + 2), 4096)])


def sharding_seeds(out):
    # Bytes in ShardingFuzzer.cpp's order: grid rank - 1, its sizes (index
    # into 0, 1, 2, 3, 4, 2^32, 2^62), tensor rank - 1, its extents (index
    # into 0, 1, 2, 3, 16, 32, 48, 64), the number of split dimensions, per
    # dimension its axis count and axes, the body (add, reduce, mxfp4,
    # nvfp4, matmul) and the pipeline (fp4train-partition, upstream's).
    for seed in (
            b"\x00\x02\x01\x04\x07\x01\x01\x00\x00\x00",  # 2 | 16x64 [[0]]
            b"\x00\x03\x01\x04\x07\x01\x01\x00\x00\x00",  # 3 | 16x64 [[0]]
            b"\x00\x00\x01\x04\x07\x01\x01\x00\x00\x01",  # 0 | 16x64
            b"\x01\x05\x05\x01\x04\x07\x01\x02\x00\x01\x00\x00",
            b"\x00\x02\x01\x04\x07\x01\x01\x01\x00\x00",  # [[1]] on 1-D
            b"\x01\x02\x02\x01\x07\x07\x02\x01\x00\x01\x01\x02\x00",
            b"\x00\x02\x01\x05\x07\x02\x00\x01\x00\x03\x00",
            b"\x00\x02\x01\x07\x06\x02\x00\x01\x00\x04\x01",
            b"\x00\x02\x00\x01\x01\x01\x00\x00"):     # 1 over 2
        write_seed(out, seed)


def capi_seeds(src, out):
    count = 0
    for path in sources(src, (".mlir",)):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for chunk in re.split(r"^// -----$", text, flags=re.M):
            if count % 4 == 0:
                write_seed(out, b"\x00" + chunk.encode())
            count += 1
    for pipeline in NESTED_PIPELINES:
        write_seed(out, b"\x01" + pipeline.encode())
    for ids in ((0, 1, 2, 3), (4, 4, 4, 4), (0, 5, 1, 2), (-1, 0, 0, 0),
                (2**31 - 1, 0, 0, 0)):
        write_seed(out, b"\x02" + struct.pack("<4i", *ids))


def npy(descr, shape, payload):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape) if len(shape) != 1 else
        "%d," % shape[0])
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
            header.encode() + payload)


def quant_seeds(src, out):
    def floats(n, scale=1.0):
        return struct.pack("<%df" % n, *[
            scale * ((i * 37 % 101) - 50) / 7.0 for i in range(n)])

    arrays = [
        npy("<f4", (2, 32), floats(64)),
        npy("<f4", (4, 64), floats(256, 1e3)),
        npy("<f4", (32, 16), floats(512, 1e-3)),
        npy("<f4", (16, 16, 2), floats(512)),
        npy("<u2", (2, 32), struct.pack("<64H", *[0x3F80 + i for i in range(64)])),
        npy("|u1", (4,), b"\x01\x02\x03\x04"),
        npy("<f4", (0, 32), b""),
    ]
    lines = set()
    for path in sources(src, (".test",)):
        with open(path, encoding="utf-8") as f:
            for match in re.finditer(r"fp4-quant (quantize|stats)((?: --?[\w=.-]+(?: [\w.]+)?)*)",
                                     f.read()):
                args = [w for w in match.group(2).split() if not w.startswith("%")]
                lines.add(" ".join([match.group(1)] + args))
    for i, line in enumerate(sorted(lines)):
        write_seed(out, line.encode() + b"\n" + arrays[i % len(arrays)])
    for array in arrays:
        write_seed(out, b"quantize --format mxfp4\n" + array)
        write_seed(out, b"stats\n" + array)


def thin(directory, limit):
    for fuzzer in sorted(os.listdir(directory)):
        path = os.path.join(directory, fuzzer)
        names = sorted(os.listdir(path)) if os.path.isdir(path) else []
        if len(names) <= limit:
            continue
        keep = {names[i * len(names) // limit] for i in range(limit)}
        for name in names:
            if name not in keep:
                os.remove(os.path.join(path, name))


def main(argv):
    if len(argv) == 4 and argv[1] == "seeds":
        src, out = argv[2], argv[3]
        opt_seeds(src, os.path.join(out, "fp4-opt-fuzzer"))
        option_seeds(src, os.path.join(out, "fp4-option-fuzzer"))
        quant_seeds(src, os.path.join(out, "fp4-quant-fuzzer"))
        nested_pipeline_seeds(os.path.join(out, "fp4-option-fuzzer"))
        case_file_seeds(src, os.path.join(out, "fp4-case-file-fuzzer"))
        task_seeds(src, os.path.join(out, "fp4-task-fuzzer"))
        capi_seeds(src, os.path.join(out, "fp4-capi-fuzzer"))
        sharding_seeds(os.path.join(out, "fp4-sharding-fuzzer"))
        return 0
    if len(argv) == 4 and argv[1] == "decode":
        for fuzzer in sorted(os.listdir(argv[2])):
            directory = os.path.join(argv[2], fuzzer)
            if not os.path.isdir(directory):
                continue
            target = os.path.join(argv[3], fuzzer)
            os.makedirs(target, exist_ok=True)
            for name in sorted(os.listdir(directory)):
                if name.endswith(".esc"):
                    with open(os.path.join(directory, name), encoding="ascii") as f:
                        data = decode(f.read())
                    with open(os.path.join(target, name[:-4]), "wb") as f:
                        f.write(data)
        return 0
    if len(argv) == 3 and argv[1] == "encode":
        with open(argv[2], "rb") as f:
            sys.stdout.write(encode(f.read()))
        return 0
    if len(argv) == 4 and argv[1] == "thin" and argv[3].isdigit():
        thin(argv[2], int(argv[3]))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
