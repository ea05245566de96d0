"""What an operator sets and sends: the policy configuration (``config``), the control inbox (``inbox``) and
whether a host runs a session right now (``host_state``)."""
