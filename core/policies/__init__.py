"""Policies as pure planners over the session log: each module plans events, the host appends them."""
