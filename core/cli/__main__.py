"""``python -m core.cli``: the core command line without the TUI's commands."""

import sys

from core.cli import main

if __name__ == "__main__":
    sys.exit(main())
