"""case.py XO CASE | --list: one row of the bad-input table, as run.py runs it.

ctest starts this, not run.py: a script is compiled anew at every start and
an imported module need not be. Compiling run.py's table is ~0.06 CPU-s, a
third of a case's own Python time, in each of its 350 cases. The compiled
form is kept in the fixture cache's folder (XO_BADINPUT_CACHE, in the
build tree), so the source tree gets no __pycache__, and it is written even
where the environment asks Python not to write bytecode
(PYTHONDONTWRITEBYTECODE, set on some machines for all of Python): the
saving is this file's whole reason.
"""
import os
import sys

if os.environ.get("XO_BADINPUT_CACHE"):
    sys.dont_write_bytecode = False
    sys.pycache_prefix = os.path.join(os.environ["XO_BADINPUT_CACHE"], ".pycache")

import run  # noqa: E402  (after the bytecode settings above)

if __name__ == "__main__":
    sys.exit(run.main())
