"""The request rebuild: every model request of a session rebuilt from its log (``request``), what changed
between two of them (``request_diff``) and what they cost (``cost``)."""
