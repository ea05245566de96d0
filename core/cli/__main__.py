"""``python -m core.cli``: the core command line without the TUI's commands."""

import gc
import sys

from core.cli import main
from core.cli.common import ends_after_command

if __name__ == "__main__":
    ends_after_command()
    code = main()
    gc.freeze()  # the process ends here: its final collection need not walk the heap
    sys.exit(code)
