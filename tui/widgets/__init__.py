"""Reusable widgets of the tapedeck TUI."""
