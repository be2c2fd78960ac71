"""Compares a sharded fp4-train run with the unsharded run of the same step.

Usage: compare-runs.py ONE TWO CURVE_BOUND

ONE and TWO are --out directories, each with losses.csv and the first step's
dump (--dump-first-step ONE/dump). Prints, per recipe, the largest relative
difference of the two loss curves, and per dumped file whether it is
bit-identical or how far it is from the unsharded one (the largest absolute
difference over the unsharded file's largest magnitude). Exits with 1 if a
curve differs by more than CURVE_BOUND relative, an argument differs at all
(every process draws the same data and initialization), or a result differs
by more than 2^-16 of its largest magnitude (docs/sharding.md, [SH5]).
"""

import csv
import os
import sys

import numpy as np


def curves(directory):
    with open(os.path.join(directory, "losses.csv")) as f:
        rows = list(csv.DictReader(f))
    return {
        name: np.array([float(r[name]) for r in rows if r[name]])
        for name in rows[0]
        if name != "step"
    }


def main():
    one, two, bound = sys.argv[1], sys.argv[2], float(sys.argv[3])
    failed = False
    a, b = curves(one), curves(two)
    for name in sorted(a):
        steps = min(len(a[name]), len(b[name]))
        worst = float(np.max(np.abs(a[name][:steps] - b[name][:steps]) /
                             np.abs(a[name][:steps])))
        within = worst <= bound
        failed |= not within
        print(f"curve {name}: {steps} steps, "
              f"{'within' if within else 'BEYOND'} the bound ({worst:.1e})")
    dump_one, dump_two = os.path.join(one, "dump"), os.path.join(two, "dump")
    for file in sorted(os.listdir(dump_one),
                       key=lambda f: (f[0], int("".join(filter(str.isdigit, f))))):
        x, y = np.load(os.path.join(dump_one, file)), np.load(
            os.path.join(dump_two, file))
        name = file[:-len(".npy")]
        if x.shape != y.shape:
            print(f"{name}: shape {y.shape}, expected {x.shape}")
            failed = True
        elif x.tobytes() == y.tobytes():
            print(f"{name}: identical")
        else:
            scale = float(np.max(np.abs(x)))
            relative = float(np.max(np.abs(x.astype(np.float64) - y))) / scale
            within = not name.startswith("arg") and relative <= 2.0**-16
            failed |= not within
            print(f"{name}: {'within' if within else 'BEYOND'} 2^-16 "
                  f"({relative:.1e})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
