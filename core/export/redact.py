"""Redaction for exports: secrets, environment values, e-mail addresses and home directories out of every string.

``Redactor.text`` rewrites one string; ``Redactor.walk`` rewrites every string value of a JSON-like value and
leaves its structure (keys, list lengths) and every number, boolean and null as they are. ``counts`` tallies what
was replaced, by kind. What is replaced:

- ``key``: API keys and tokens in the common formats (OpenAI/DeepSeek/Anthropic ``sk-…``, GitHub ``gh?_…`` and
  ``github_pat_…``, Slack ``xox?-…``, AWS ``AKIA…``, Google ``AIza…``, Stripe-style ``sk_live_…``, JWTs, PEM
  private-key blocks, ``Bearer …`` and ``Authorization:`` values, ``api_key=…``/``token: …``/``password=…`` pairs);
- ``env``: the value of every environment variable of the exporting process at least ``ENV_MIN`` characters long,
  except numbers (so no number changes), plain words and file paths (home paths are the next kind);
- ``email``: e-mail addresses;
- ``home``: home-directory paths (``/home/<user>``, ``/Users/<user>``, ``/root``, ``C:\\Users\\<user>`` and the
  exporting user's ``$HOME``), replaced by ``~``.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

ENV_MIN = 8
_KEYS = re.compile(
    r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----[\s\S]*?(?:-----END (?:[A-Z]+ )*PRIVATE KEY-----|\Z)"
    r"|(?:sk|pk|rk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{16,}"
    r"|(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}"
    r"|AIza[A-Za-z0-9_\-]{30,}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"
    r"|(?i:bearer|basic)\s+[A-Za-z0-9._~+/=\-]{12,}"
    r"|(?i:(?:api[_-]?key|access[_-]?token|auth[_-]?token|secret|password|passwd|token)"
    r"[\"']?\s*[:=]\s*[\"']?)[^\s\"',;]{6,}"
)
_EMAIL = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")
_HOME = re.compile(r"(?:/home/|/Users/)[^/\s\"'<>:;,]+|/root(?=/|\b)|[A-Za-z]:\\Users\\[^\\\s\"'<>:;,]+")
_PAIR_HEAD = re.compile(
    r"^(?i:(?:api[_-]?key|access[_-]?token|auth[_-]?token|secret|password|passwd|token)[\"']?\s*[:=]\s*[\"']?)"
)
_NUMBER = re.compile(r"[-+]?[0-9][0-9.,_eE+\-]*")
KINDS = ("key", "env", "email", "home")


def _is_path(value: str) -> bool:
    return all(part.startswith(("/", "~", ".")) or not part for part in value.split(os.pathsep))


def env_secrets(environ: Mapping[str, str] | None = None, minimum: int = ENV_MIN) -> list[str]:
    """The environment values redaction replaces, longest first (a value inside another is replaced with it):
    at least ``minimum`` characters, and neither a number, a word of letters alone nor a path (list)."""
    env = os.environ if environ is None else environ
    values = {
        v for v in env.values()
        if len(v.strip()) >= minimum and not _NUMBER.fullmatch(v) and not v.isalpha() and not _is_path(v)
    }  # fmt: skip
    return sorted(values, key=len, reverse=True)


class Redactor:
    """Replaces secrets in strings and counts the replacements by kind."""

    def __init__(self, environ: Mapping[str, str] | None = None, home: str | None = None) -> None:
        self.counts: Counter[str] = Counter({kind: 0 for kind in KINDS})
        secrets = env_secrets(environ)
        self._env = re.compile("|".join(map(re.escape, secrets))) if secrets else None
        home = os.path.expanduser("~") if home is None else home
        self._home = home.rstrip("/") if home and home.rstrip("/") not in ("", "/") else None

    def _sub(self, kind: str, pattern: re.Pattern[str], text: str, repl: Any) -> str:
        out, n = pattern.subn(repl, text)
        if n:
            self.counts[kind] += n
        return out

    def text(self, text: str) -> str:
        """``text`` with every secret replaced by ``[redacted <kind>]`` (home directories by ``~``)."""
        if self._env is not None:
            text = self._sub("env", self._env, text, "[redacted env]")
        text = self._sub("key", _KEYS, text, _key)
        text = self._sub("email", _EMAIL, text, "[redacted email]")
        if self._home is not None and self._home in text:
            self.counts["home"] += text.count(self._home)
            text = text.replace(self._home, "~")
        return self._sub("home", _HOME, text, "~")

    def walk(self, value: Any) -> Any:
        """A copy of ``value`` with every string value redacted; keys, numbers, booleans and nulls unchanged."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.walk(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.walk(v) for v in value]
        return value

    def summary(self) -> dict[str, int]:
        """Replacements so far by kind, every kind listed."""
        return {kind: self.counts[kind] for kind in KINDS}


def _key(match: re.Match[str]) -> str:
    head = _PAIR_HEAD.match(match.group(0))  # keep ``api_key=`` of a pair, replace only its value
    return (head.group(0) if head else "") + "[redacted key]"
