"""``python -m core.cli``: the core command line without the TUI's commands."""

import gc
import sys

from core.cli import main

if __name__ == "__main__":
    code = main()
    gc.freeze()  # the process ends here: its final collection need not walk the heap
    sys.exit(code)
