"""The DSH bridge, tapedeck's side: installing the plugin into a DSH home and reading the files it writes.

The plugin itself is the ES module ``tapedeck-bridge.mjs`` beside this file (package data). The files it writes
beside a session log and their meaning are pinned in ``docs/contracts.md``, section "DSH bridge".
"""
