"""Shared leaves: errors, diagnostics, text helpers, safe opening of paths, the chat-model interface, what is
known about models, and the chat-completions wire format. They import nothing from ``core`` but each other."""
