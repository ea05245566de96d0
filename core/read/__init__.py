"""The read side: the session projection (``session``), loading a log into it (``load``), streamed blocks,
event summaries and the projection at any moment (``timetravel``). It never imports the host."""
