"""tapedeck core: DSH session logs, policies as pure planners, and the reference agent host.

Nothing under ``core`` may import Textual; ``tests/test_boundaries.py`` enforces it.
"""

__version__ = "0.1.0"
