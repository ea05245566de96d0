"""Screens of the tapedeck TUI, one module per screen."""
