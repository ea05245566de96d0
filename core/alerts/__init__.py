"""Alerts: rules over a session's events that tell the operator when a run needs them, and may act on it.

- ``config``: the ``alerts`` config section (thresholds, on/off per rule, actions, bell and notification).
- ``rules``: the signals folded from events and each rule as a pure function of them.
- ``engine``: one session's alerts, fed incrementally, each cause raised once until it clears.
- ``actions``: the control requests a rule may send (``pause``, ``message``), by a host or a watcher.
- ``follow``: logs and sessions roots read or followed, every session's alerts in one stream.
- ``hook``: ``--exec``: a command per alert, the alert's JSON on stdin, under a time limit.
- ``rate``: the run rate and the cost projected to the end of the turn.
- ``terminal``: the bell and desktop-notification escape sequences (OSC 9, OSC 777), tmux pass-through.
"""
