"""Exports of a session: HTML, Markdown and JSON, with redaction and notes."""
