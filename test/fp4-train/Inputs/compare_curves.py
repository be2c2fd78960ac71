"""Compares the training curves of two losses.csv files, one run each:
prints `same before S` for the first step S at which they differ (or `same`
when they never do) and `different after` when every later step differs."""
import csv
import sys


def curve(path):
    with open(path) as f:
        return [float(row[1]) for row in list(csv.reader(f))[1:] if row[1]]


a, b = curve(sys.argv[1]), curve(sys.argv[2])
first = next((s for s, (x, y) in enumerate(zip(a, b)) if x != y), None)
if first is None:
    print("same")
else:
    print("same before %d" % first)
    later = list(zip(a, b))[first:]
    print("different after" if all(x != y for x, y in later) else
          "partly equal after")
