"""The client a rewind report is written with when its route is not the agent's own.

``rewind.summarizationProvider``/``summarizationModel`` name the route; it is served on the agent's endpoint with
the agent's key, or on ``rewind.summarizationBaseUrl`` with the key in the environment variable
``rewind.summarizationApiKeyEnv`` names (read when a report is written, so the key is never in the config or log).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from core.policies.report import ModelFactory, ReportError
from core.policies.rewind_config import RewindConfig
from core.shared.chat import ChatModel


def report_client_factory(
    model: ChatModel | None, config: RewindConfig, environ: Mapping[str, str] | None = None
) -> ModelFactory | None:
    """``factory(provider, model)`` building the report's client from the agent's ``model``; None when the
    agent's model cannot build clients for other routes (the scripted model)."""
    for_route = model.for_route if model is not None else None
    if for_route is None:
        return None
    endpoint = config.summarization_endpoint()
    if endpoint is None:
        return for_route
    base_url, key_env = endpoint

    def build(provider: str, name: str) -> ChatModel:
        env = os.environ if environ is None else environ
        key = env.get(key_env, "").strip()
        if not key:
            raise ReportError(
                f"rewind summarization endpoint {base_url} has no key: {key_env} is not set "
                "(rewind.summarizationApiKeyEnv names it)"
            )
        return for_route(provider, name, base_url=base_url, api_key=key)

    return build
