"""case.py XO CASE | --list: one row of the bad-input table, as run.py runs it.

ctest starts this, not run.py: a script is compiled anew at every start and
an imported module is not (Python keeps its compiled form in __pycache__).
Compiling run.py's table was 0.1-0.2 CPU-s of each of its 300 cases.
"""
import sys

import run

if __name__ == "__main__":
    sys.exit(run.main())
