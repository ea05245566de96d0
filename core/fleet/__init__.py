"""The fleet: one row per session over many sessions roots, kept up to date from each log's new bytes.

- ``row``: a session's row (the columns of the fleet table and of ``tapedeck sessions --json``) and its order.
- ``follow``: the per-log watch (the alert engine's, folding a little more) and the fleet of every log under
  the roots it was given.
"""
