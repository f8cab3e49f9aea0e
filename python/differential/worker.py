"""TensorFlow in a child process: a case a line in, its solved form a line out. TF crashes
on some inputs (a segmentation fault); the parent then records the crash and starts another
child."""

import json
import sys

from .oracle import solve

for line in sys.stdin:
    case = json.loads(line)
    solved = solve(case)
    sys.stdout.write(json.dumps(solved) + "\n")
    sys.stdout.flush()
