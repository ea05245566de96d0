"""Retry policy and retry notices for model requests.

A provider retries a failed attempt whose failure code is retryable (rate limit, server error, timeout,
transport), waiting an exponential backoff with jitter or the server's ``Retry-After`` when it sent one.
Before each wait it tells its listener (a ``RetryNotice`` with ``started=False``), and again when the retried
request goes out (``started=True``). The host turns those into the DSH ``llm/retry`` and
``llm/retry-started`` events with ``RetryNotice.event(turn, step)``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

RETRY_EVENT = "llm/retry"
RETRY_STARTED_EVENT = "llm/retry-started"
RETRY_MODE = "normal"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait. Delays are in seconds; ``jitter`` is a ± fraction of the delay."""

    max_retries: int = 5
    base_delay: float = 0.5
    max_delay: float = 10.0
    jitter: float = 0.1
    max_retry_after: float = 120.0

    def delay(
        self, retry: int, retry_after: float | None, rand: Callable[[], float] = random.random
    ) -> float:
        """Seconds to wait before retry number ``retry`` (1-based); the server's ``retry_after`` wins."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        backoff = min(self.max_delay, self.base_delay * 2 ** (retry - 1))
        return max(0.0, backoff * (1 + self.jitter * (2 * rand() - 1)))


@dataclass(frozen=True)
class RetryNotice:
    """One retry of one model request, as the provider reports it."""

    retry_id: str
    provider: str
    policy_key: str
    retry: int
    max_retries: int
    delay_ms: int
    failure: dict[str, Any]
    started: bool = False

    def event(self, turn: int, step: int) -> dict[str, Any]:
        """The planned ``llm/retry`` (or, once started, ``llm/retry-started``) event for this notice."""
        if self.started:
            data: dict[str, Any] = {"retryId": self.retry_id, "turn": turn, "step": step, "retry": self.retry}
            return {"type": RETRY_STARTED_EVENT, "data": data}
        return {
            "type": RETRY_EVENT,
            "data": {
                "retryId": self.retry_id,
                "turn": turn,
                "step": step,
                "provider": self.provider,
                "mode": RETRY_MODE,
                "policyKey": self.policy_key,
                "retry": self.retry,
                "maxRetries": self.max_retries,
                "delayMs": self.delay_ms,
                "failure": {"message": self.failure["message"], "code": self.failure["code"]},
            },
        }


RetryListener = Callable[[RetryNotice], None]
