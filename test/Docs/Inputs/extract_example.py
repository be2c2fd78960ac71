#!/usr/bin/env python3
"""Prints the fenced code block of a Markdown file whose first line is the
marker `example: NAME` (after a `#` or `//` comment leader).

    extract_example.py FILE.md NAME > OUT
"""

import re
import sys

path, name = sys.argv[1], sys.argv[2]
blocks = re.findall(r"^```\w*\n(.*?)^```", open(path).read(), re.M | re.S)
for block in blocks:
    first, _, rest = block.partition("\n")
    if re.fullmatch(r"\s*(#|//)\s*example:\s*" + re.escape(name) + r"\s*", first):
        sys.stdout.write(block)
        sys.exit(0)
sys.exit(f"no block marked 'example: {name}' in {path}")
