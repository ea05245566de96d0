"""The provider error type and the ``LlmFailure`` records providers report."""

from __future__ import annotations

from typing import Any

from core.shared.errors import TapedeckError

# Failure codes (DSH ``LlmFailure.code``). A failed request with one of RETRYABLE is tried again.
AUTH = "AUTH"
RATE_LIMIT = "RATE_LIMIT"
SERVER = "SERVER"
TIMEOUT = "TIMEOUT"
TRANSPORT = "TRANSPORT"
CONTEXT_WINDOW_EXCEEDED = "CONTEXT_WINDOW_EXCEEDED"
BAD_REQUEST = "BAD_REQUEST"
CONTENT_FILTER = "CONTENT_FILTER"
RETRYABLE = frozenset({RATE_LIMIT, SERVER, TIMEOUT, TRANSPORT})


class ProviderError(TapedeckError):
    """A provider cannot be set up: unknown spec, missing API key, unreadable or invalid script."""


def failure(
    message: str, code: str, status: int | None = None, retry_after_ms: int | None = None
) -> dict[str, Any]:
    """An ``LlmFailure``-shaped dict: ``{message, code, status?, providerRetryAfterMs?}``."""
    out: dict[str, Any] = {"message": message, "code": code}
    if status is not None:
        out["status"] = status
    if retry_after_ms is not None:
        out["providerRetryAfterMs"] = retry_after_ms
    return out
