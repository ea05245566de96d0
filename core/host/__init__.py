"""The reference agent host: model providers (``core.host.providers``), workspace tools (``core.host.tools``)
and the agent loop that drives them while writing the session log."""
