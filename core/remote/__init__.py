"""Remote sessions over SSH's SFTP subsystem, nothing installed on the remote machine.

- ``target``: ``[user@]host:PATH`` as scp writes it.
- ``link``: one SSH connection per host (the user's ssh config, keys, agent and known_hosts, strictly), its
  SFTP calls made from any thread, reconnecting with backoff.
- ``tail``: a remote log followed by polling its size and reading the new byte range (raw or zstd).
- ``inbox``: a control request appended to a remote session's inbox.
"""
