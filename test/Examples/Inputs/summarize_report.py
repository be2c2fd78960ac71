"""Prints a role or quantization report one contraction per line.

    <role> param=<index|-> <op> m=<m> n=<n> k=<k> batch=<batch> [<quantization>]

followed by `end`, so that lit tests can check a whole training step's roles
with one CHECK line per contraction. Reads the JSON report on stdin.

With --blocks, prints one line per decoder block instead ([BLK1]), in block
order, the contractions of no block last:

    block=<b|-> quantized=<n> <kept reason>=<n> ...
"""
import collections
import json
import sys

if sys.argv[1:] == ["--blocks"]:
    counts = collections.defaultdict(collections.Counter)
    for entry in json.load(sys.stdin):
        if entry["role"] == "other":
            continue
        what = "quantized" if entry.get("quantized") else entry.get("kept") or "-"
        counts[entry["block"]][what] += 1
    for block in sorted(counts, key=lambda b: (b is None, b or 0)):
        cells = ["%s=%d" % item for item in sorted(counts[block].items())]
        print("block=%s %s" % ("-" if block is None else block, " ".join(cells)))
    sys.exit(0)


def operand(entry):
    block = "x".join(str(b) for b in entry["block"])
    text = "%s/%s/%s" % (entry["format"], block, entry["rounding"])
    if entry.get("global_scale") == "expert":
        text += "/per-expert"
    return text


for entry in json.load(sys.stdin):
    param = "-" if entry["param"] is None else entry["param"]
    line = "%s param=%s %s m=%s n=%s k=%s batch=%s" % (
        entry["role"], param, entry["op"], entry["m"], entry["n"], entry["k"],
        entry["batch"])
    if entry.get("quantized"):
        line += " " + " ".join(operand(o) for o in entry["operands"])
        hadamard = entry.get("hadamard")
        if hadamard:
            line += " hadamard=%s/%s" % (hadamard["size"], hadamard["signs"])
    elif "kept" in entry:
        line += " kept=%s" % entry["kept"]
    print(line)
print("end")
