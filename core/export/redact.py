"""Redaction for exports: secrets and personal data out of every string a shared session holds.

``Redactor.text`` rewrites one string. ``Redactor.walk`` rewrites every string and key of a JSON-like value and
keeps the rest as it is: its structure, its numbers, booleans and nulls (but a secret of digits under a key named
for one), and the words an event's structure is written in (``WORDS``). ``counts`` tallies the replacements by
kind (``KINDS``).

A string goes through three steps:

1. The screen: one RE2 scan of a value's JSON text (``_SCREEN``) tells whether any of its strings may hold
   something to replace. Most events hold nothing and are given back untouched, without a walk.
2. The patterns: one ``re2.Set`` scan of the string tells which of them (``Redactor._patterns``) may match, and
   only those run. Each marks a group of its match; most have a judge that keeps a match that only names a secret
   (code, a reference, a placeholder, a setting, prose, a search tool's pattern), and some find the value's end
   past the match (``_ENDS``: a quote's close, a password's line, a YAML block, a here-document).
3. The replacement: spans that overlap are merged and replaced once, by ``[redacted <kind>]`` (a home directory
   by ``~``; a URL keeps its scheme, user and host, and in its user part the replacement is percent-encoded, so
   that it still parses), counted by the first of their kinds.

What is looked for, by kind. ``key``: token formats; the credentials of a URL or a header, a signed URL's signature; a value after a key
word (``password: …``, ``DB_PASS=…``, ``--api-key …``); the password a known command takes on its line or on its
standard input (``mysql -p…``, ``echo … | docker login --password-stdin``, ``chpasswd <<EOF``); the lines of
netrc, pgpass, htpasswd and shadow files; a password SQL or code assigns; a string under a JSON key named for a
secret. ``env``: the values of the exporting process's environment that are secrets (``env_secrets``). ``email``:
e-mail addresses. ``home``: home directories. README's *Redaction* section lists the shapes one by one.

What it promises: each shape is also found as JSON text writes it inside a string (quotes and backslashes
escaped, ``\\n`` for a line break), as a tool call's arguments hold it, and as JSON text of JSON text writes it
(``\\\\\\"``, ``\\\\n``: a tool's JSON output quoting them); after a key named for a password it would
rather hide the rest of the line than let a passphrase out; its patterns are RE2's, and what a judge reads beyond
a match is bounded or kept for the next match, so that its time grows with the text's length, not as its square.
What it does not: a secret in no shape it knows stays (a password in prose, ``it is hunter2``, unless the
environment holds it), and so does one cut across two strings (a model stream's deltas are joined first:
``pieces``) or one encoded (in base64, say).
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from functools import lru_cache
from itertools import accumulate
from typing import Any

import orjson
import re2

from core.log.vocabulary import KNOWN_TYPES, PACKED_ROW_TYPES, TAPEDECK_TYPES

ENV_MIN = 8
LIST_SLICE = 32  # a long list is screened this many items at a time
# key formats with no character JSON escapes: a string holds one as its JSON does (``_KEYS`` and ``_SCREEN``)
_KEY_FORMATS = (  # ``sk-`` keys have a run of 16 without a hyphen: ``network-interface-controller`` is none
    rb"|(?:sk|pk|rk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_]{16,}[A-Za-z0-9_\-]*"
    rb"|(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"
    rb"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    rb"|xox[abposr]-[A-Za-z0-9-]{10,}"
    rb"|(?:AKIA|ASIA)[A-Z0-9]{16}"
    rb"|AIza[A-Za-z0-9_\-]{30,}"
    rb"|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"
    rb"|gl(?:pat|rt|dt|ptt)-[A-Za-z0-9_\-]{20,}|npm_[A-Za-z0-9]{30,}|hf_[A-Za-z0-9]{30,}"
    rb"|ya29\.[A-Za-z0-9_\-]{30,}|hv[sb]\.[A-Za-z0-9_\-]{24,}"  # a Google OAuth access token, a Vault token
    rb"|do[opr]_v1_[a-f0-9]{64}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|pypi-AgE[A-Za-z0-9_\-]{30,}"  # DigitalOcean, Shopify, PyPI
    rb"|SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}|whsec_[A-Za-z0-9+/=]{20,}"  # SendGrid, a webhook's secret
    rb"|[0-9]{8,10}:AA[A-Za-z0-9_\-]{30,}"  # a Telegram bot's token
    rb"|hooks\.slack\.com/services/[A-Za-z0-9/]{20,}"  # a Slack webhook (the URL is the credential)
    # a URL's password (``_URL_HEAD`` stays; a user part holding an ``@``, ``ann@x.io:pw@h``, goes with it), to the last ``@`` before the path, query or fragment as URL readers take
    # it (``p@ss@db``), else, with a ``?`` or ``#`` in it, to the first; or of words a space parts, as URL readers
    # take it too (``guest:gu est@h``), its first with a letter (no port: ``http://h:8080 or ann@x.io``) and none
    # with a bracket (no Markdown link's ``(http://h:port) by @ann``); a single quote inside it is the password's
    # (``pa'ss``), one that a blank or punctuation follows closes a quote around the URL (``'http://h:80', 'a@b'``);
    # its ``//`` also as JSON text may write it (``https:\/\/u:pw@h``, PHP's)
    rb"|[A-Za-z][A-Za-z0-9+.\-]*:(?:\\*/){2}[^/\s:\"']*:(?:(?:[^/?#\s\"']|'[^/?#\s\",;)\]}>])+|[^/\s@\"']+"
    rb"|[^/\s@\"'<>()\[\]`]*[A-Za-z][^/\s@\"'<>()\[\]`]*(?: +[^/\s@\"'<>()\[\]`]+)+)@"
)
# a password hash in crypt's ``$id$…`` form (``$6$``, ``$2y$``, ``$apr1$``, yescrypt's ``$y$``, ``$argon2id$``) or an
# LDAP-style ``{SHA}…``: anywhere when its last field is a hash's length (``_CRYPT``; a shell's ``$1$2`` is none), and
# whatever its length as the second field of an htpasswd or shadow line (``_HASH_LINE``, group 1; a ``!`` locks it)
_CRYPT_HEAD = rb"\$(?:1|2[abxy]?|5|6|7|y|gy|md5|apr1|sha1|argon2(?:id|i|d)|scrypt)\$"
_LDAP_HEAD = rb"\{(?i:s?sha(?:256|384|512)?|s?md5|crypt|pbkdf2[a-z0-9-]*)\}"
_CRYPT = re2.compile(
    _CRYPT_HEAD + rb"(?:[^\s$:\"'\\]{1,64}\$){1,4}[./A-Za-z0-9+=]{16,}|" + _LDAP_HEAD + rb"[A-Za-z0-9+/]{16,}={0,2}"
)
_KEYS = re2.compile(
    rb"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z]+ )*PRIVATE KEY(?: BLOCK)?-----|\z)"
    + _KEY_FORMATS
)
# the signature of a signed URL (group 1): a presigned S3 or GCS URL's, an Azure SAS's ``sig``, a CloudFront one's;
# anyone holding the URL may use it until it expires. After ``?`` or ``&`` (also as Go's JSON writes it, ``\u0026``)
_SIGNATURE_NAME = rb"(?:[?&]|\\u0026)(?:X-(?:Amz|Goog)-Signature|sig|Signature)="
_SIGNED_URL = re2.compile(_SIGNATURE_NAME + rb"([A-Za-z0-9%+/=~_.\-]{16,})")
# a credential after ``Bearer``/``Basic`` (group 1), unless it is a word of prose (``_credential``), also glued
# after a reference or a placeholder (a template literal's ``${x}``, ``{{token}}``, ``<token>``), which stays
_GLUED_AFTER = rb"(?:\$?\{\{?[^{}\s]*\}\}?|<[^<>\s]*>)?"
_CREDENTIAL = re2.compile(rb"(?i:bearer|basic)\s+" + _GLUED_AFTER + rb"([A-Za-z0-9._~+/=\-]{12,})")
# a character a value's JSON text writes escaped (``\\``, ``\/``), in the values below, also JSON text of JSON text
# (``\\\\\\\\``): not a quote, nor the escape of a line break or a tab, however many backslashes come before it
# (``\\\"``, ``\\n``), which ends the value as the character itself does; and a blank a shell's backslash escapes
# (``Abc\ 123``: one word)
_ESCAPED = rb"\\+(?:[^\s\"'\\nrt]|[ \t])"
_QUOTE = rb"\\*[\"']"  # a quote, as JSON text (of JSON text …) writes it: ``"``, ``\"``, ``\\\"``
_MAYBE_QUOTE = rb"(?:" + _QUOTE + rb")?"
# a character of a shell's unquoted word: no blank, quote or backslash (``_ESCAPED`` takes one), nor one that ends
# the word, ``|;&()<>`` and the backquote (``$(mysql -pPW)``, ``(echo PW)``: the bracket closes what the password is in)
_SHELL_CHAR = rb"[^\s\"'\\|;&()<>`]"
_CLI_WORD = rb"(?:" + _SHELL_CHAR + rb"|" + _ESCAPED + rb")+"  # such a word, as JSON text may write it
# the key words a secret's value follows: any case, or as the last word of an environment variable's name, a
# snake_case one or a camelCase one (the short ones: ``DB_PASS``, ``MYSQL_PWD``, ``REDIS_AUTH``, ``db_pass``,
# ``ansible_ssh_pass``, ``dbPass``, ``SmtpPw``; ``bypass``, ``auth: basic`` are none, and the judges take
# ``first_pass`` for none: ``_no_password``), and a name ending in
# ``_KEY_BASE`` (Rails' ``SECRET_KEY_BASE``, ``secretKeyBase``), and a personal access token named for its host
# in any case (``GITHUB_PAT``, ``gh_pat``, ``GitLab-Pat``, ``githubPat``, ``AZURE_DEVOPS_PAT``; ``FILE_PAT`` may be
# a pattern, and ``gh`` only starts a word or follows ``_``: ``high_pat`` is none)
_KEY_WORDS = (
    rb"(?i:(?:api|secret|private|access|account)[_-]?key|client[_-]key[_-]data|access[_-]?token|auth[_-]?token|secret|password|passwd"
    rb"|passphrase|token|psk|[a-z0-9][_-]key[_-]base)|[A-Z0-9]_(?:PASS|PW|PWD|AUTH|CREDENTIALS?)|[a-z0-9]_(?:pass|pwd?)|SSHPASS"
    rb"|(?i:(?:github|gitlab|azure[_-]?devops|(?:\b|_)gh)[_-]?pat)"
    rb"|[a-z0-9](?:Pass|Pw|Pwd|Auth|Credentials?|KeyBase)"
)
SETTING_MAX = 256  # bytes from which a value is no setting word, number or path (``_secret_value``)
# characters from which a value known only by its shape, with no key word naming it (the password a login call
# takes after its user), may be a secret: a shorter one would be found in ordinary text. A value a key word names
# (``password = "ab"``, ``PASSWORD=ab``, ``{"secret": "Q"}``) goes whatever its length: the key's name makes it one
SHORTEST = 3
# where a line starts, also as JSON text writes its line break (``\n``, also escaped again) or the string it starts
# (``"``), and the blanks before its first word (``_NETRC_BLANK``)
_LINE_START = rb"(?:(?m:^)|[\"\r\n]|(?:\\\\)*\\[nr])(?:[ \t]|(?:\\\\)*\\t)*"
_NEWLINE = rb"(?:\r?\n|\\+n)"  # a line break, itself or as JSON text escapes it (``\\\\n`` in JSON text of JSON text)
_INDENT = rb"(?:[ \t]|\\+t)*"  # the blanks before a line's text, a tab also as JSON text escapes it
# an npm config line's credential: ``_auth``, ``_authToken``, ``_password``, alone or after a registry's ``//host/:``
_NPM_KEYS = (b"_auth", b"_authToken", b"_password")
# a value after a key word (group 1, also a quoted ``"auth"``: a registry's credentials in Docker's config.json, a
# quoted ``"pass"`` or ``"pw"``, and an npm config line's key) on its line (group 3, its first word; group 2 the quote before it), unless it is code
# or a short name (``_secret_value``: a quoted value is all of it up to its closing quote, ``_quoted_end``, also
# Python's triple quote, ``password = '''…'''``, and bash's ``$'…'`` and ``$"…"``); a backquote, a Markdown code span's, ends it (``Set
# `DB_PASSWORD=…` in .env``, ``password: `…` ``). Its sign is ``:``, ``=``, Go's ``:=`` or ``=>`` (after a quoted
# key or a Ruby symbol, ``:password => "…"``: a bare name's is an arrow function's). After a quote that ends its
# line the value is on a line after it (``password: "`` then ``  two words"``, blank lines between too)
_EMPHASIS = rb"(?:\*\*?|__?)?"  # Markdown's around a label, before or after its colon (``**Password:**``)
# after the colon, only when a blank follows: a value may start with ``_`` (``_auth=_0000000``)
_EMPHASIS_AFTER = rb"(?:(?:\*\*?|__?)[ \t])?"
_CONNECTION_PWD = rb";[ \t]*(?i:pwd)"  # a connection string's ``;Pwd=…`` (``pwd`` alone is a command's name)
_PHP_PASS = rb"\$(?:\w*_)?(?i:pass|pwd?)\b"  # a PHP variable named for a password (``$db_pass``, ``$pw``)
# an unquoted value's characters: no blank, quote, backquote or ``,;)]}`` (``_JOINED`` goes on past those), and a
# quote or backquote inside it that more of the value follows (``Abcdef12"xyz``, ``pa'ss``, ``Abc`def``, ``\"`` in
# JSON text), not one that a blank or punctuation follows, which closes a quote or a code span the value is in
# (``"token: abc123",``, ``'password=pw'.``)
_VALUE_CHAR = rb"(?:[^\s\"',;\\)\]}`]|" + _ESCAPED + rb")"
_AFTER_INNER_QUOTE = rb"[^\s\"'`,;\\)\]}.:!?<>/&|]"
_VALUE = rb"(?:" + _VALUE_CHAR + rb"|(?:" + _QUOTE + rb"|`)" + _AFTER_INNER_QUOTE + rb")+"
# Python's ``"""``, each quote as JSON text may escape it, or ``'''``, which it never does (a shell's ``\\'\\''a'`` is none)
_TRIPLE_QUOTE = rb"(?:\\*\"){3}|'{3}"
# what a quoted value may start with before its first character of a value: blanks and quotes (``" my pw"``,
# ``"' pw'"``); one of them that closes the quote is the end of an empty value (``_quoted_end_of``)
_LEAD = rb"(?:[ \t]|" + _QUOTE + rb")*"
# a quoted value of no value's character, blanks, quotes and backslashes alone (``"'"``, ``"\\\\"``, ``'\\'``):
# ``_quoted_end_of`` finds where its quote closes, if it does
_BARE = rb"[ \t\\\"']+"
_PAIR = re2.compile(
    rb"(" + _KEY_WORDS + rb"|" + _CONNECTION_PWD + rb"|" + _PHP_PASS + rb"|\b(?:auth|(?i:pass|pw))" + _QUOTE + rb"|(?:" + _LINE_START + rb"|:)_(?:auth|authToken|password))"
    + rb"(?:" + _MAYBE_QUOTE + rb"[ \t]*=>|" + _MAYBE_QUOTE + _EMPHASIS + rb"[ \t]*(?::=|[:=]))" + _EMPHASIS_AFTER
    + rb"[ \t]*(?:(" + _TRIPLE_QUOTE + rb"|\$?" + _QUOTE + rb")(?:[ \t]*" + _NEWLINE + _INDENT + rb")*)?`*(" + _LEAD
    + _VALUE + rb"|" + _BARE + rb")"
)
# a key that starts its line, of one word or of several, camelCase or joined by ``_`` or ``-`` (``  apiKey``,
# ``- DbPassword``, ``password``, ``client_secret``, ``aws_secret_access_key``) and what ends a line (``_config_line``)
_CONFIG_KEY = re.compile(rb"[ \t]*(?:-[ \t]+)?[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)*")
_LINE_END = re.compile(rb"[ \t]*(?:\Z|[\r\n\"]|\\[nr\"])")
_HASH_LINE = re2.compile(
    _LINE_START + rb"[A-Za-z0-9_][A-Za-z0-9_.@\-]*:!?((?:" + _CRYPT_HEAD + rb"|" + _LDAP_HEAD + rb")[^\s:\"'\\]+)"
)
# a ``.pgpass`` line, ``host:port:database:user:password``, its password (group 1): a port (or ``*``), and a
# database and a user with a letter (or ``*``), so that times, addresses and a linter's ``file:line:col`` are none
_PG_FIELD = rb"[^\x00-\x20:\\\"]"
_PG_NAME = _PG_FIELD + rb"*[A-Za-z*]" + _PG_FIELD + rb"*"
_PGPASS = re2.compile(
    _LINE_START + _PG_FIELD + rb"+:(?:[0-9]{1,5}|\*):" + _PG_NAME + rb":" + _PG_NAME + rb":((?:" + _PG_FIELD
    + rb"|\\[:\\])+)"
)
# a Dockerfile's ``ENV NAME value`` for a name ending in a key word: the rest of its line (group 3; group 2 a quote
# before it), unless it is a reference, a path or a setting (``_docker_value``); ``ENV NAME=value`` is a pair
_DOCKER_ENV = re2.compile(
    _LINE_START + rb"ENV[ \t]+([A-Za-z0-9_]*?(?:" + _KEY_WORDS + rb"))[ \t]+(" + _QUOTE + rb")?"
    rb"((?:[^\s\"'\\]|" + _ESCAPED + rb")+(?:[ \t]+(?:[^\s\"'\\]|" + _ESCAPED + rb")+)*)"
)
# a JSON object's key named for a secret, as a quoted key before a value (``_PAIR``): its string value goes whole
_PASSWORD_KEY = re.compile(rb"(?i:pass(?:word|wd|phrase)?|pwd?|psk)\Z")  # a key word named for a password
# an Authorization header's name as a key's last word (``Proxy-Authorization``, ``proxyAuthorization``,
# ``HTTP_AUTHORIZATION``), not the end of another word (``unauthorization``)
_AUTHORIZATION_KEY = r"(?:(?:^|[_\-.])(?i:authorization)|(?<=[a-z])Authorization)"
_AUTHORIZATION_NAME = re.compile(_AUTHORIZATION_KEY + r"\Z")
_SECRET_KEY = re.compile(
    "(?:" + _KEY_WORDS.decode() + r"|\bauth|(?:^|[_\-.])(?i:pass|pw)|" + _AUTHORIZATION_KEY + r")\Z"
)
# the words of a key's name (``max_token``, ``maxToken``, ``MAX_TOKEN``) and those that say it holds a count
_NAME_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z0-9]+(?![a-z])")
_COUNT_WORDS = frozenset({"max", "min", "num", "total", "count", "limit", "budget", "input", "output", "prompt",
                          "completion", "context", "reasoning", "cached"})
# the value after a command-line option named for a secret (group 3; group 1 its name, group 2 a quote before the
# value), unless it is code (``_option_value``): ``--password …``, ``--with-token …``, ``--api-key …``, and of one
# dash in any case, as PowerShell's cmdlets, nuget and Java tools write them (``-Password …``, ``-ApiKey …``,
# ``-token …``), where a word starts (``reset-your-password`` is none; two dashes anywhere: group 1 is then the name
# after the first), also in a Markdown code span (`` `-ApiKey …` ``, ``--token `…` ``: a backquote ends the value, as
# a redirection does, ``--with-token 2>/dev/null``); a comma, ``]`` or ``}`` inside the value is the shell's word's
# (``--password hunter2,xyzzy``), one at its end is not (``--password hunter2, then``, ``[--token TOKEN]``)
_OPTION_CHAR = rb"(?:[^\s\"',;\\)\]}`<>]|" + _ESCAPED + rb")"
_OPTION_TAIL = rb"(?:[A-Za-z0-9]+-)*(?i:password|passwd|passphrase|token|secret|(?:api|secret|private|access)-?key)"
_OPTION_NAME = rb"--?" + _OPTION_TAIL
_OPTION = re2.compile(
    rb"(?:^|[\s\"'(`\-]|\\[nrt])(-" + _OPTION_TAIL + rb")[ \t]+(" + _QUOTE + rb")?`*(" + _LEAD + _OPTION_CHAR + rb"+(?:[,\]}]+"
    + _OPTION_CHAR + rb"+)*)"
)
_PASS_SOURCES = (b"pass:", b"env:", b"file:", b"fd:", b"stdin")  # where openssl's ``-password`` reads it from
_OPTION_WORDS = frozenset(b"option options argument arguments parameter parameters switch".split())  # prose about one
# a password a command takes on its command line (group 1), unless it is a reference (``_cli_value``): ``sshpass
# -p …``, ``mysql -p…`` and MariaDB's (glued to it: ``-p`` alone asks for it), ``redis-cli -a …``/``--pass …``,
# ``curl -u user:…`` (``-su``; the proxy's ``-U``, ``--proxy-user``), ``docker login -p …`` (and podman's, and
# Azure's ``az login -p …``), ``aws configure set aws_secret_access_key …``, openssl's ``enc -k …``, Oracle's
# ``sqlplus user/…`` (rman, expdp, impdp, sqlldr, dgmgrl), nmcli's ``password …`` and ``wifi-sec.psk …``, ``wpa_passphrase SSID …``,
# RAR's ``-p…``, ``lftp -u user,…``, the ``-p …`` of twine, ``cf login``, snowsql, rabbitmqadmin, ncftp, cqlsh,
# psexec and rdesktop, FreeRDP's ``/p:…``, cmdkey's ``/pass:…``, doctl's ``-t …``, an old Vault token's ``vault login
# s.…`` (``b.…``; the ``s.`` stays: ``hvs.…`` is a token format), the
# ``-P …`` of mosquitto_pub/sub, bcp and isql, httpie's ``http -a user:…`` (``--auth``, ``https``), influx's
# ``-password …``, the ``-p …`` of useradd and usermod, the credential ``npm config set`` gives an npm config key
# (``//registry/:_authToken …``, ``_auth``, ``_password``; ``npm set``, pnpm's, yarn's ``npmAuthToken``), ``neo4j-admin set-initial-password …``, the secret key of
# ``mc alias set NAME URL KEY …`` (``mc config host add``, ``mcli``; ``mc admin user add ALIAS USER …``), the value
# a secret store keeps (``gh secret set NAME --body …``, ``az keyvault secret set --value …``, ``aws ssm put-parameter
# --value …``, ``aws secretsmanager create-secret --secret-string …``, ``kubectl create secret --from-literal=KEY=…``),
# mongosh's ``-p``, sqlcmd's ``-P``, ldapsearch's ``-w``, zip's ``-P``, 7-Zip's ``-p…``, smbclient's ``-U user%…``,
# keytool's ``-storepass``/``-keypass``, openssl's ``-pass``/``-password pass:…``, the argument after the user's of ``htpasswd
# -b FILE user …`` (``-nb user …``: no file; ``_HTPASSWD``) and of ``rabbitmqctl add_user user …``
# (``change_password``, ``authenticate_user``)
_CLI_ARGUMENT = _MAYBE_QUOTE + rb"[^\s\"'\\|;&-][^\s\"'\\|;&]*" + _MAYBE_QUOTE + rb"[ \t]+"  # an argument before the password, not an option
# htpasswd's options, before its arguments: flags alone or run together in any order (``-b -n``, ``-nbB``), a ``C``
# or ``r`` taking the rest of its word or the next word as its value (``-C 12``, ``-bC12``). With ``b`` the password
# is on the line, after the file and the user, or after the user alone with ``n`` (no file)
_HT_VALUE = rb"(?:[Cr][ \t]*" + _MAYBE_QUOTE + rb"[^\s\"'\\|;&]+" + _MAYBE_QUOTE + rb")?"


def _ht_option(flags: bytes, among: bytes = b"") -> bytes:
    """One option word of htpasswd's whose flags are of the class ``flags``, ``among`` (when given) among them."""
    return rb"[ \t]+-" + flags + rb"*" + (among + flags + rb"*" if among else b"") + _HT_VALUE


_HT_NO_N, _HT_ANY = rb"[a-mo-qs-zABD-Z0-9]", rb"[a-qs-zABD-Z0-9]"  # flags but n (and C, r), and any but C, r
_HTPASSWD = (
    rb"htpasswd(?:\.exe)?(?:" + _ht_option(_HT_NO_N) + rb")*" + _ht_option(_HT_NO_N, b"b")
    + rb"(?:" + _ht_option(_HT_NO_N) + rb")*[ \t]+" + _CLI_ARGUMENT + _CLI_ARGUMENT
    + rb"|htpasswd(?:\.exe)?(?:" + _ht_option(_HT_ANY) + rb")*(?:" + _ht_option(_HT_ANY, rb"(?:n" + _HT_ANY + rb"*b|b"
    + _HT_ANY + rb"*n)") + rb"|" + _ht_option(_HT_ANY, b"n") + rb"(?:" + _ht_option(_HT_ANY) + rb")*"
    + _ht_option(_HT_ANY, b"b") + rb"|" + _ht_option(_HT_ANY, b"b") + rb"(?:" + _ht_option(_HT_ANY) + rb")*"
    + _ht_option(_HT_ANY, b"n") + rb")(?:" + _ht_option(_HT_ANY) + rb")*[ \t]+" + _CLI_ARGUMENT
)
# ``net use [X: | *] SHARE [password] [/switch …]``: the share a UNC path (``\\srv\share``, ``//srv/share``), a
# variable (``%SHARE%``) or quoted; the switches may come before the password too
_NET_SHARE = rb"(?:" + _QUOTE + rb"(?:\\\\|//|%)[^\"'\n]*?" + _QUOTE + rb"|(?:\\\\|//|%)[^\s\"'|;&]+)"
_NET_USE = (
    rb"(?i:net[ \t]+use)[ \t]+(?:(?:[A-Za-z]:|\*)[ \t]+)?" + _NET_SHARE + rb"(?:[ \t]+/[^\s|;&]+)*[ \t]+"
)
# what, in the place of a password after a share or a user, is none: by the command's first two letters
_POSITIONAL = {b"ne": (b"/",), b"sm": (b"-", b"<", b">", b"1>", b"2>"), b"bw": (b"-",), b"ca": (b"-", b"<")}


def _option(valued: bytes) -> bytes:
    """One option of a command's, before or between its arguments: a flag (``--raw``, ``-v``, ``--api=S3v4``), or
    one of the options named ``valued`` with its value after it (``--code 123456``), a quoted one whole
    (``--passwordfile "pw file.txt"``)."""
    return (
        rb"(?:--(?:" + valued + rb")(?:=|[ \t]+)(?:" + _QUOTE + rb"[^\"'\n]*?" + _QUOTE + rb"|[^\s|;&\"'\\][^\s|;&]*)"
        rb"|--?[A-Za-z][A-Za-z0-9-]*(?:=[^\s|;&]*)?)"
    )


_MC_OPTIONS = rb"(?:[ \t]+" + _option(rb"api|path|config-dir") + rb")*"  # MinIO client's
_BW_VALUED = rb"session|method|code|passwordenv|passwordfile"  # Bitwarden's options that take a value
_BW_OPTION = _option(_BW_VALUED)
# such an option just before a value (``bw unlock --passwordenv BW_PW``): its value, which ``_BW_OPTION``, taken for a
# flag, leaves to ``_CLI_VALUE`` when no other value follows
_BW_VALUE = re.compile(rb"--(?:" + _BW_VALUED + rb")[ \t]+" + _MAYBE_QUOTE + rb"\Z")
_BW_OPTIONS = rb"(?:[ \t]+" + _BW_OPTION + rb")*"
_CLI_VALUE = _MAYBE_QUOTE + rb"(" + _CLI_WORD + rb")"  # a command's argument, quoted or not
# curl's one-letter options that take no value, run together before ``u`` (``U``: the proxy's user)
_CURL_FLAGS = rb"[0-9#aBfgGIijJklLMnNOpqRsSvZ]"
_HTTPIE_AUTH = rb"https?[ \t](?:[^\n|;&]*?[ \t])?(?:-a[ \t]*|--auth(?:[ \t]+|=))" + _MAYBE_QUOTE  # httpie's credentials
# each its own pattern, so that one command's match, from its name to its password, never hides another's password
# that comes between them on the line (``nmcli … mc alias set … KEY … password PW``)
_CLI_PASSWORDS = tuple(re2.compile(rb"(?:" + command + rb")" + _CLI_VALUE) for command in (
    rb"sshpass[ \t]+-p[ \t]*",
    rb"(?:mysql|mariadb)(?:-?(?:dump|admin|import|check|show|slap|pump|binlog|sh))?\b[^\n|;&]*?[ \t]-p",
    rb"redis-cli\b[^\n|;&]*?[ \t](?:-a|--pass)[ \t]+", rb"(?:docker|podman|az)[ \t]+login\b[^\n|;&]*?[ \t]-p[ \t]*",
    rb"aws[ \t]+configure[ \t]+set\b[^\n|;&]*?[ \t](?:[A-Za-z0-9_-]+\.)?aws_(?:secret_access_key|session_token)[ \t]+",
    rb"mongo(?:sh|dump|restore|import|export)?\b[^\n|;&]*?[ \t]-p[ \t]*", rb"sqlcmd\b[^\n|;&]*?[ \t]-P[ \t]*",
    rb"ldap[a-z]+\b[^\n|;&]*?[ \t]-w[ \t]*", rb"(?:\b|\\[nrt])(?:un)?zip\b[^\n|;&]*?[ \t]-P[ \t]+",
    rb"7za?\b[^\n|;&]*?[ \t]-p", rb"rar\b[^\n|;&]*?[ \t]-p",
    rb"lftp\b[^\n|;&]*?[ \t]-u[ \t]*" + _MAYBE_QUOTE + rb"[^\s,\"'\\$]*,",
    rb"(?:twine|cf[ \t]+login|snowsql|rabbitmqadmin|ncftp[a-z]*|cqlsh|psexec(?:64)?|rdesktop)\b[^\n|;&]*?[ \t]-p[ \t]+",
    rb"(?:[a-z]*freerdp[0-9]?)\b[^\n|;&]*?[ \t][/+]p:", rb"cmdkey\b[^\n|;&]*?[ \t]/pass:",
    rb"doctl\b[^\n|;&]*?[ \t]-t(?:=|[ \t]*)", rb"vault[ \t]+login\b[^\n|;&]*?[ \t]" + _MAYBE_QUOTE + rb"[sb]\.",
    rb"(?:mosquitto_(?:pub|sub|rr)|bcp|isql|tsql|(?:\b|\\[nrt])p4)\b[^\n|;&]*?[ \t]-P[ \t]+",
    rb"ipmitool\b[^\n|;&]*?[ \t]-P[ \t]*", rb"(?:plink|pscp|psftp)(?:\.exe)?\b[^\n|;&]*?[ \t]-pw[ \t]+",
    rb"jenkins-cli(?:\.jar)?\b[^\n|;&]*?[ \t]-auth[ \t]+" + _MAYBE_QUOTE + rb"[^\s:\"'\\$@]*:",
    *(rb"snmp(?:walk|bulkwalk|get|getnext|bulkget|set|table|trap|inform)\b[^\n|;&]*?[ \t]-" + letter + rb"[ \t]*"
      for letter in (b"A", b"X")),  # SNMPv3's passphrases: authentication's, privacy's (one pattern each)
    rb"nuget[ \t]+push\b[^\n|;&]*?[ \t]-k[ \t]+",
    rb"smbclient\b[^\n|;&]*?[ \t](?:-U[ \t]*|--user(?:[ \t]+|=))" + _MAYBE_QUOTE + rb"[^\s%\"'\\$]*%",
    rb"[ \t]-(?:(?:src|dest)?storepass|(?:src|dest)?keypass)[ \t]+",
    rb"[ \t]-pass(?:in|out|word)?[ \t]+" + _MAYBE_QUOTE + rb"pass:", rb"openssl\b[^\n|;&]*?[ \t]-k[ \t]+",
    rb"nmcli\b[^\n|;&]*?[ \t](?:password|(?:802-11-)?wifi-sec(?:urity)?\.psk)[ \t]+",
    rb"(?:sqlplus|rman|expdp|impdp|sqlldr|dgmgrl)\b(?:[ \t]+-[A-Za-z]+)*[ \t]+"
    rb"(?:(?:target|catalog|auxiliary|userid)[ \t]*=?[ \t]*)?" + _MAYBE_QUOTE + rb"[A-Za-z0-9_$#]+/",
    rb"wpa_passphrase[ \t]+" + _CLI_ARGUMENT, _HTPASSWD,
    rb"rabbitmqctl\b[^\n|;&]*?[ \t](?:add_user|change_password|authenticate_user)[ \t]+" + _CLI_ARGUMENT,
    rb"curl\b[^\n|;&]*?[ \t](?:-" + _CURL_FLAGS + rb"*[uU][ \t]*|--(?:proxy-)?user(?:[ \t]+|=))" + _MAYBE_QUOTE
    + rb"[^\s:\"'\\$]*:",
    _HTTPIE_AUTH + rb"[^\s:\"'\\$]*:",
    rb"influx\b[^\n|;&]*?[ \t]-password(?:[ \t]+|=)", rb"(?:useradd|usermod)\b[^\n|;&]*?[ \t]-p[ \t]*",
    rb"\b(?:p?npm|yarn)[ \t]+(?:config[ \t]+)?set\b[^\n|;&]*?[ \t]" + _MAYBE_QUOTE + rb"(?:[^\s=\"'|;&]*:)?"
    rb"(?:_auth(?:Token)?|_password|npmAuth(?:Token|Ident))" + _MAYBE_QUOTE + rb"[ \t]+",  # the key quoted or not
    rb"neo4j-admin(?:[ \t]+dbms)?[ \t]+set-initial-password[ \t]+",
    rb"mc(?:li)?" + _MC_OPTIONS + rb"[ \t]+(?:(?:alias[ \t]+set|config[ \t]+host[ \t]+add)" + _MC_OPTIONS + rb"[ \t]+"
    + _CLI_ARGUMENT + rb"|admin[ \t]+user[ \t]+add" + _MC_OPTIONS + rb"[ \t]+)" + _CLI_ARGUMENT + _CLI_ARGUMENT,
    rb"gh[ \t]+secret[ \t]+set\b[^\n|;&]*?[ \t](?:--body(?:[ \t]+|=)|-b[ \t]*)",
    rb"az[ \t]+keyvault[ \t]+secret[ \t]+set\b[^\n|;&]*?[ \t]--value(?:[ \t]+|=)",
    rb"aws[ \t]+ssm[ \t]+put-parameter\b[^\n|;&]*?[ \t]--value(?:[ \t]+|=)",
    rb"aws[ \t]+secretsmanager[ \t]+(?:create-secret|put-secret-value|update-secret)\b[^\n|;&]*?[ \t]--secret-string(?:[ \t]+|=)",
    rb"[ \t]--from-literal=" + _MAYBE_QUOTE + rb"[^\s=\"'\\|;&]+=",
))
# the password a command takes as a bare argument in a place of its own (group 1), unless it is a reference, or
# none is there (``_positional_value``): Windows' ``net user bob …``, the first argument of ``net use`` after its
# share that is no switch (``net use \\srv\share … /user:bob``, ``net use Z: \\srv\share /user:bob …``:
# ``_NET_USE``), the first of smbclient's after its service (``smbclient //h/s … -U bob``), and Bitwarden's master
# password (``bw unlock …``, ``bw login EMAIL …``, options before and after: ``bw unlock --raw …``); each its own
# pattern, as ``_CLI_PASSWORDS`` are
_POSITIONAL_PASSWORDS = tuple(re2.compile(rb"(?:" + command + rb")" + _CLI_VALUE) for command in (
    rb"(?i:net[ \t]+user)[ \t]+" + _CLI_ARGUMENT, _NET_USE, rb"smbclient\b[^\n|;&]*?[ \t]" + _NET_SHARE + rb"[ \t]+",
    rb"\bbw" + _BW_OPTIONS + rb"[ \t]+(?:unlock" + _BW_OPTIONS + rb"[ \t]+|login" + _BW_OPTIONS + rb"[ \t]+"
    + _CLI_ARGUMENT + rb"(?:" + _BW_OPTION + rb"[ \t]+)*)",
    rb"cargo[ \t]+login(?:[ \t]+--registry(?:=|[ \t]+)[^\s|;&]+)?[ \t]+",
))
# what follows an unquoted password in such a place: the command's end (a line break, a quote or either as JSON
# text escapes it, a pipe, ``;``, ``&``, a bracket or a backquote that closes a substitution), a switch or an
# option, or a redirection
_AFTER_POSITIONAL = re.compile(rb"[ \t]*(?:\Z|[\r\n\"'|;&)`]|\\+[nr\"'])|[ \t]+(?:[-/<>]|[0-9]>)")
# the password a hash is made of (group 1), the argument after the options (``_hashed_value``: none is an option):
# ``openssl passwd -6 [-salt S] …`` and ``mkpasswd [-m TYPE] [-S SALT] [-R N] … [SALT]``; the options that take a
# value are named, so that a value is never taken for the password (``mkpasswd -m sha-512`` asks for it). Unquoted,
# it ends at a bracket too, as every command's argument here does (``_CLI_WORD``), which closes the substitution it
# is made in (``useradd -p "$(openssl passwd -6 …)"``)
_HASHED = re2.compile(
    rb"(?:openssl[ \t]+passwd(?:[ \t]+(?:-(?:salt|in)[ \t]+[^\s|;&]+|-(?:1|5|6|apr1|aixmd5|crypt|noverify|quiet|table"
    rb"|reverse)\b))*|mkpasswd(?:[ \t]+(?:-[mSRP][ \t]*[^\s|;&]+|--(?:method|salt|rounds|password-fd)(?:=|[ \t]+)"
    rb"[^\s|;&]+|-5\b))*)[ \t]+" + _MAYBE_QUOTE + rb"(" + _CLI_WORD + rb")"
)
# ``printf``'s format (after ``-v NAME`` and the ``--`` that ends its options, where given; group 1 in single quotes,
# group 2 in double quotes: the other quote may be inside it) and its arguments (group 3, each a word or quoted:
# ``_PRINTF_ARGUMENT``), where a pair of the format is named for a secret and its value is a conversion that an
# argument fills (``printf "password=%s\\n" PW > .env``: ``_printf_arguments``)
_PRINTF = re2.compile(
    rb"\bprintf(?:[ \t]+-v[ \t]+[A-Za-z_][A-Za-z0-9_]*)?(?:[ \t]+--)?[ \t]+(?:\\*'([^'\n]*?%[^'\n]*?)\\*'|\\*\"([^\"\n]*?%[^\"\n]*?)\\*\")"
    rb"((?:[ \t]+(?:" + _QUOTE + rb"[^\"'\n]*?" + _QUOTE + rb"|" + _CLI_WORD + rb"))+)"
)
_PRINTF_ARGUMENT = re.compile(rb"[ \t]+(?:(\\*[\"'])([^\"'\n]*?)\1|(" + _CLI_WORD + rb"))")
_FORMAT_SIGN = re.compile(rb"[ \t]*[:=][ \t]*(?:\\*[\"'])?")  # between a key's conversion and its value's
_CONVERSION = re.compile(rb"%(?:%|[-+ #0]*[0-9*]*(?:\.[0-9*]*)?[A-Za-z])")  # a format's, or its ``%%``
# the token httpie's ``-a`` gives (group 1) with the bearer scheme, ``-A bearer`` on the same command
# (``_bearer_value``): without a scheme, or with another, ``-a user`` asks for a password
_BEARER = re2.compile(_HTTPIE_AUTH + rb"(" + _CLI_WORD + rb")")
_BEARER_SCHEME = re.compile(rb"[ \t](?:-A[ \t]*|--auth-type(?:[ \t]+|=))" + _MAYBE_QUOTE + rb"bearer\b")
# the secret an option of one letter gives (group 1) when the command it is given to takes it so and it is no
# reference (``_keygen_value``): a key's new (``-N``) or old (``-P``) passphrase to ``ssh-keygen``, both where
# ``ssh-keygen -p -P old -N new`` changes it, and the new (``-s``) or old (``-a``) password to ``ldappasswd``
_LETTER_SECRETS = {re.compile(rb"ssh-keygen"): b"NP", re.compile(rb"ldappasswd"): b"as"}
_KEYGEN = re2.compile(rb"[ \t]-[NPas][ \t]*" + _MAYBE_QUOTE + rb"(" + _CLI_WORD + rb")")
# the new password ``mysqladmin … password …`` sets (group 1), when that command is the one the word is given to
# (``_admin_value``: after its ``-p…``, which ``_CLI_PASSWORDS`` takes, as in ``mysqladmin -pOld password New``)
_ADMIN_PASSWORD = re2.compile(rb"[ \t]password[ \t]+" + _MAYBE_QUOTE + rb"(" + _CLI_WORD + rb")")
_ADMIN = re.compile(rb"(?:mysql|mariadb)-?admin\b")
ADMIN_MAX = 14  # the longest of its matches (``_in_command``)
# the password ``echo`` (or ``printf``) pipes into a command that reads it from stdin (group 1, unless it is a
# reference: ``_cli_value``): a registry login (``echo PW | docker login -u bob --password-stdin``, ``printf '%s' PW |
# …``: podman, nerdctl, helm, oras …), ``gh auth login --with-token``, ``sudo -S`` (its own option, before the
# command it runs), ``passwd`` (``--stdin``, or given no option but a user), ``smbpasswd -s``, ``docker secret create N -`` (podman's),
# ``gh secret set NAME`` and ``vercel env add NAME``;
# gpg's ``--passphrase-fd 0``, cryptsetup's ``open`` and ``luksFormat`` (``luksAddKey``), openssl's ``-pass stdin``
# and ``vault login -``; and the password after the user ``chpasswd`` reads so (``echo 'bob:PW' | chpasswd``). The
# echoed value is all its words, ``printf``'s arguments too, with the shell's ``\n`` (``echo -e "PW\nPW" | passwd``,
# ``printf '%s\n' PW PW | passwd --stdin``: both copies go), and the ``echo`` may be the first of a group
# piped whole (``(echo PW; echo PW) | smbpasswd -s``; ``_STDIN_AGAIN`` takes each other, ``_CHPASSWD_AGAIN`` chpasswd's)
_ANSI_QUOTE = rb"(?:\$?" + _QUOTE + rb")?"  # a value's quote, also bash's ANSI-C ``$'…'`` (a ``$`` alone is a reference's)
_REDIRECTION = rb"[0-9]*(?:[<>]{1,2}&?|&>)[ \t]*[^\s|;&<>]+"  # its descriptor, operator and file (``2>/dev/null``)
_ECHOED = (  # its options and redirections before the value (``echo -n 2>/dev/null …``)
    rb"(?:echo|printf|yes)(?:[ \t]+(?:-[neE]+|" + _REDIRECTION + rb"))*(?:[ \t]+" + _QUOTE + rb"%s(?:[^\s\"'\\]|\\+n)*" + _QUOTE + rb")?[ \t]+" + _ANSI_QUOTE
)
_ECHOED_VALUE = (  # its words, all of them (the shell's ``\n`` between them too, and quotes inside a word:
    # ``a 'b c'd e``): a redirection ends them (and its file descriptor, ``2>``, is none of them: ``_echoed_end``)
    rb"(" + _CLI_WORD + rb"(?:(?:\\+n|(?:" + _QUOTE + rb")*[ \t]+(?:" + _QUOTE + rb")*|(?:" + _QUOTE + rb")+)"
    + _CLI_WORD + rb")*)"
)
_INTO = rb"\|[ \t]*(?:sudo[ \t]+)?"  # a pipe into a command, run by sudo or not
# an ampersand that redirects (``2>&1``, ``&>``), or that joins a group's commands (``&&``), not one that sends a
# command to the background
_REDIRECT_AMP = rb"[<>]&|&>"
_TO_PIPE = rb"(?:[^\n|;&]|" + _REDIRECT_AMP + rb")*"  # a command's rest up to its pipe: its words, its redirections
_GROUP_END = rb"[)}]" + _TO_PIPE  # a group's closing bracket and its redirections (``) 2>/dev/null``) up to its pipe
# a group's commands from an ``echo``'s value to its closing bracket, over its lines too: first the rest of a quoted
# value (``"Pa)ss"``), then words, quoted ones whole (a bracket in them closes nothing), redirections, ``&&`` and ``||``
_GROUP_REST_OF = (
    rb"(?:[^\n\"'|;&]*[\"'])?(?:" + _QUOTE + rb"[^\"'\n]*" + _QUOTE + rb"|[^|&(){}]|&&|\|\||" + _REDIRECT_AMP + rb")*"
)
_PIPED = _ECHOED_VALUE + rb"(?:" + _TO_PIPE + rb"|" + _GROUP_REST_OF + _GROUP_END + rb")" + _INTO
# plain ``passwd``, given a user or nothing, where its command ends or a redirection follows (``passwd -S`` reads none)
_PASSWD_USER = rb"\bpasswd(?:[ \t]+[^\s\-|;&<>][^\s|;&<>]*)?[ \t]*"
_STDIN_READER = (
    rb"(?:(?:docker|podman|nerdctl|helm|oras|skopeo|crane)\b[^\n|;&]*?[ \t]login\b[^\n|;&]*?[ \t]--password-stdin"
    rb"|gh[ \t]+auth[ \t]+login\b[^\n|;&]*?[ \t]--with-token|passwd\b[^\n|;&]*?[ \t]--?stdin\b"
    rb"|" + _PASSWD_USER + rb"(?:\z|[\r\n|;&)\"'`<>]|\\+[nr\"']|[0-9]>)|smbpasswd\b[^\n|;&]*?[ \t]-[A-Za-z]*s\b"
    rb"|(?:docker|podman)[ \t]+secret[ \t]+create\b|gpg2?\b[^\n|;&]*?[ \t]--passphrase-fd(?:[ \t]+|=)0\b"
    rb"|cryptsetup\b[^\n|;&]*?[ \t](?:luksOpen|open|luksFormat|luksAddKey)\b"
    rb"|openssl\b[^\n|;&]*?[ \t]-pass(?:in|out)?[ \t]+stdin\b"
    rb"|vault[ \t]+login\b[^\n|;&]*?[ \t]-(?:\z|[\s\"'|;&)`]|\\+[nr\"'])"
    rb"|mkpasswd\b[^\n|;&]*?[ \t](?:-s|--stdin)\b|gh[ \t]+secret[ \t]+set\b|vercel[ \t]+env[ \t]+add\b"
    rb"|sudo(?:[ \t]+-[A-Za-z]+(?:[ \t]+[^\s\-|;&][^\s|;&]*)?)*?[ \t]+-[A-Za-z]*S)"
)
_STDIN_PASSWORD = re2.compile(_ECHOED + _PIPED + _STDIN_READER)
# a key word and its sign, a quote before the value or not (``password=``, ``"token": "``, ``API_KEY: ``)
_KEY_SIGN = rb"(?:" + _KEY_WORDS + rb")" + _MAYBE_QUOTE + rb"[ \t]*(?::=|[:=])[ \t]*" + _MAYBE_QUOTE
# … that a command substitution gives what an ``echo``, a ``printf`` or a here-string of ``cat`` writes (group 1,
# unless it is a reference: ``_cli_value``): ``password=$(echo …)``, ``TOKEN="$(printf '%s' … | base64)"``,
# ``api_key=`echo …` ``, ``password=$(cat <<< …)``; what substitutes it stays
_SUBSTITUTED = re2.compile(
    _KEY_SIGN + rb"(?:\$\(|`)[ \t]*(?:" + _ECHOED + rb"|cat[ \t]+<<<[ \t]*" + _ANSI_QUOTE + rb")" + _ECHOED_VALUE
)
# the default a parameter's expansion gives (group 1, to its closing brace or its quote's close; unless it is a
# setting or a path: ``_default_value``), after a key word (``password=${PW:-…}``, Compose's ``POSTGRES_PASSWORD:
# ${POSTGRES_PASSWORD:-…}``) or for a variable named for a secret (``${DB_PASSWORD-…}``, ``:=``, ``=``)
_DEFAULT_AFTER = rb":?[-=]"
_DEFAULTED = re2.compile(
    rb"(?:" + _KEY_SIGN + rb"\$\{[A-Za-z_][A-Za-z0-9_]*|\$\{[A-Za-z0-9_]*?(?:" + _KEY_WORDS + rb"))" + _DEFAULT_AFTER
    + _MAYBE_QUOTE + rb"((?:[^\s\"'\\$}]|" + _ESCAPED + rb")+)"
)
_CHPASSWD_USER = rb"[^\s:\"'\\|;&]+:"  # the user before the password chpasswd reads
_CHPASSWD = re2.compile(_ECHOED + _CHPASSWD_USER + _PIPED + rb"chpasswd\b")
# each ``echo`` of a group after its first (group 1), after a ``;``, ``&&`` or line break: every line the group gives its reader is a password, when the
# group is piped whole into one (``_grouped``: the group's end and its pipe are looked for past the match)
# what ends the command before: ``;``, ``&&``, ``||`` or a line break (as JSON writes it too)
_AGAIN = rb"(?:;|&&|\|\||\n|\\+n)[ \t]*"
_STDIN_AGAIN = re2.compile(_AGAIN + _ECHOED + _ECHOED_VALUE)
_CHPASSWD_AGAIN = re2.compile(_AGAIN + _ECHOED + _CHPASSWD_USER + _ECHOED_VALUE)
_GROUP_REST = re.compile(_GROUP_REST_OF)
# what follows a group's closing bracket when it is piped whole into the reader of ``_STDIN_AGAIN``'s password, or
# of ``_CHPASSWD_AGAIN``'s
_GROUP_INTO = {
    _STDIN_AGAIN: re2.compile(_GROUP_END + _INTO + _STDIN_READER),
    _CHPASSWD_AGAIN: re2.compile(_GROUP_END + _INTO + rb"chpasswd\b"),
}
# … or that a here-string gives it (``docker login --password-stdin <<< PW``, ``passwd bob <<< PW``, ``chpasswd <<<
# 'bob:PW'``, group 1) …
_HERE_STRING = re2.compile(
    rb"(?:" + _STDIN_READER + rb"[^\n|;&<]*<<<[ \t]*" + _MAYBE_QUOTE + rb"|" + _PASSWD_USER + rb"<<<[ \t]*" + _ANSI_QUOTE + rb"|chpasswd\b[^\n|;&<]*<<<[ \t]*" + _MAYBE_QUOTE + _CHPASSWD_USER + rb")"
    rb"(" + _CLI_WORD + rb"(?:\\+n" + _CLI_WORD + rb")*)"
)
# … or the first line of a here-document it reads (group 4; ``_heredoc_end`` takes the document's other lines):
# ``chpasswd <<EOF``, or ``cat <<EOF`` piped into it (group 2, the rest of the line, says so: ``_heredoc_value``);
# group 1 the delimiter, group 3 the line break as written (itself, or as JSON text escapes it)
_HEREDOC = re2.compile(
    rb"(?:chpasswd\b[^\n|;&<]*|\bcat[ \t]+)<<-?[ \t]*" + _MAYBE_QUOTE + rb"([A-Za-z_][A-Za-z0-9_]*)" + _MAYBE_QUOTE
    + rb"([^\r\n\\]*)"
    rb"(" + _NEWLINE + rb")(?:[ \t]*" + _NEWLINE + rb")*" + _INDENT + _CHPASSWD_USER
    + rb"((?:[^\s\"'\\|;&]|" + _ESCAPED + rb")+)"
)
# … and the password of an ``ftp`` here-document's ``user NAME …`` (or ``quote PASS …``) line (group 1), among its
# first eight lines
# (``ftp -n host <<EOF``, an ``open host`` before it; lftp's too)
_FTP_USER = re2.compile(
    rb"ftp\b[^\n|;&<]*<<-?[ \t]*" + _MAYBE_QUOTE + rb"[A-Za-z_][A-Za-z0-9_]*" + _MAYBE_QUOTE
    + rb"[^\r\n\\]*(?:" + _NEWLINE + rb"[^\r\n\\]*?){0,7}?" + _NEWLINE + _INDENT + rb"(?:user[ \t]+[^\s\"'\\]+|(?i:quote[ \t]+pass))[ \t]+"
    + _MAYBE_QUOTE + rb"((?:[^\s\"'\\|;&]|\\+[^\s\"'\\nrt|;&])+)"  # a token ends at a line break however escaped
)
_INTO_CHPASSWD = re.compile(rb"[ \t]*\|[ \t]*(?:sudo[ \t]+)?chpasswd\b")
_INDENTED = re.compile(_INDENT)
# a quoted password after the word, with no sign between, as SQL gives one (group 2; group 1 the quote): ``ALTER USER
# bob WITH PASSWORD 'hunter2pw'``, MySQL's ``IDENTIFIED BY '…'``, prose's ``the password 'hunter2pw'`` (a command's
# ``--password '…'`` is an option's value, which a shell ends at its next single quote: ``_OPTION``)
_SQL_PASSWORD = re2.compile(
    rb"(?i:(?:^|[^\w-])password|\bidentified[ \t]+by)[ \t]+(" + _QUOTE + rb")((?:[^\s\"'\\]|" + _ESCAPED + rb")+)"
)
# a quoted value given to a quoted name for a secret (group 5; group 2 the name, group 3 what joins them, groups 1
# and 4 their quotes): assigned to it as a subscript (``os.environ['DB_PASSWORD'] = '…'``, ``settings["api_key"] =
# "…"``) or after it as an argument (WordPress's ``define( 'DB_PASSWORD', '…' )``, ``setdefault("API_KEY", "…")``:
# ``_named_value``)
_NAMED = rb"(?:" + _KEY_WORDS + rb"|(?:AUTH|SECURE_AUTH|LOGGED_IN|NONCE)_(?:KEY|SALT))"  # and WordPress's keys and salts
_NAMED_VALUE = re2.compile(
    rb"(" + _QUOTE + rb")(#?[A-Za-z0-9_.-]*?" + _NAMED + rb")" + _QUOTE + rb"([ \t]*\][ \t]*=|[ \t]*,)[ \t]*(" + _QUOTE + rb")"
    rb"((?:[^\s\"'\\]|" + _ESCAPED + rb")+)"
)
# … or the value a .NET config's ``<add key="Password" value="…"/>`` gives a name for a secret, its groups as those
_ADD_KEY = re2.compile(
    rb"<add(?:[ \t\r\n]|\\+[nrt])+key=(" + _QUOTE + rb")([A-Za-z0-9_.:-]*?" + _NAMED + rb")" + _QUOTE
    + rb"((?:[ \t\r\n]|\\+[nrt])+value=)(" + _QUOTE + rb")((?:[^\s\"'\\]|" + _ESCAPED + rb")+)"
)
# a quoted value Go's ``var`` or ``const`` gives a name for a secret with its type between (group 3; group 1 the
# name, group 2 the quote, a raw string's backquote too): ``var password string = "…"``, ``const apiKey string =
# `…` `` (``_go_value``, to the close: ``_go_end``)
_GO_VAR = re2.compile(
    rb"\b(?:var|const)[ \t]+([A-Za-z0-9_]*?(?:" + _KEY_WORDS + rb"))[ \t]+[\[\]*.A-Za-z0-9_]+[ \t]*=[ \t]*("
    + _QUOTE + rb"|`)((?:[^\s\"'\\`]|" + _ESCAPED + rb")+)"
)
# the value fish's ``set`` gives a variable named for a secret (group 4; group 1 its options, group 2 the name,
# group 3 a quote before the value), where a command starts (``gh secret set NAME`` is none): ``set -x PASSWORD …``,
# ``set -gx DB_PASSWORD '…'``, ``and set …``; and Windows' ``setx [/M] NAME …``, csh's and launchctl's ``setenv NAME
# …`` (no group 1: an environment variable's) (``_fish_value``: an
# exported variable's or an upper-case name's, not one erased or queried, ``set -e PASSWORD``)
_FISH_SET = re2.compile(
    rb"(?:^|[\r\n;&|(\"'`]|\\[nrt])[ \t]*(?:(?:and|or|not|begin)[ \t]+)?(?:set((?:[ \t]+--?[A-Za-z]+)*)"
    rb"|setx(?:[ \t]+/[A-Za-z]+)*|(?:launchctl[ \t]+)?setenv)[ \t]+([A-Za-z0-9_]*?(?:" + _KEY_WORDS + rb"))[ \t]+("
    + _QUOTE + rb")?(" + _CLI_WORD + rb")"
)
# the password a login call takes after its user (group 2; group 1 its quote): smtplib's, ftplib's and imaplib's
# ``server.login("bob", "…")``, requests' ``auth=("bob", "…")`` and ``HTTPBasicAuth("bob", "…")`` (``_login_value``)
_LOGIN_CALL = re2.compile(
    rb"(?:\.login|\bHTTP(?:Basic|Digest)Auth|\bauth[ \t]*=[ \t]*)[ \t]*\([ \t]*" + _QUOTE + rb"[^\"'\\\n]*" + _QUOTE
    + rb"[ \t]*,[ \t]*(" + _QUOTE + rb")((?:[^\s\"'\\]|" + _ESCAPED + rb")+)"
)
# the text of an XML element named for a secret (group 2; group 1 the element's name, which the closing tag must
# repeat: ``_xml_text``), without the blanks around it: Maven's ``<password>hunter2pw</password>``, ``<apiKey>``,
# ``<db:password type="plain">``; ``pass`` and ``pwd`` only as a whole word of the name (``<bypass>`` is none)
_XML_NAME = rb"[A-Za-z0-9_.:-]*?(?:" + _KEY_WORDS + rb")|(?:[A-Za-z0-9_.:-]*[_.:-])?(?i:pass|pwd?)"
_XML_BLANK = rb"(?:\s|\\[nrt])*"
_XML_OPEN = rb"<(" + _XML_NAME + rb")(?:[ \t\r\n][^<>]*)?>" + _XML_BLANK
_XML_TEXT = re2.compile(_XML_OPEN + rb"([^<>\s](?:[^<>]*[^<>\s])?)" + _XML_BLANK + rb"</")
# … or written as a CDATA section, its content (group 2) to the section's end (``<![CDATA[hunter2pw]]>``)
_XML_CDATA = re2.compile(_XML_OPEN + rb"<!\[CDATA\[([\s\S]*?)\]\]>" + _XML_BLANK + rb"</")
# a YAML block scalar under a key named for a secret (``password: |``, ``token: >-``, a comment after): group 1 the
# key's indent (with a list item's ``- ``), group 2 the line break ending the header as written (itself, or as JSON
# text escapes it), group 3 the indent of its first line that is not blank and group 4 that line's first character;
# the block goes on while its lines are deeper than the key (``_block_end``)
_YAML_BLOCK = re2.compile(
    rb"(?:(?m:^)|[\r\n\"]|(?:\\\\)*\\[nr])([ \t]*(?:-[ \t]+)?)[A-Za-z0-9_.-]*?(?:" + _KEY_WORDS + rb")[ \t]*:[ \t]+"
    rb"[|>][1-9+-]{0,2}(?:[ \t]+#[^\r\n\"\\]*)?[ \t]*(" + _NEWLINE + rb")(?:[ \t]*" + _NEWLINE + rb")*"
    rb"([ \t]*)([^\s\"\\]|\\[^\s\"nrt])"
)
CONFIG_KEY_MAX = 256  # how far back from a key word the start of its config line is looked for (``_config_line``)
_COMMAND_END = (b"\n", b"\\n", b"|", b";", b"&")  # where the command a ``_KEYGEN`` option belongs to starts
_COMMAND_ENDS = re.compile(rb"\n|\\n|[|;&]")  # the same, as one pattern (``_command_start``)
COMMAND_REACH = 1024  # how far back from such an option its command's start is looked for (``_keygen_value``)
# a search tool's name where a word starts in a command, or where the command does (after a ``_COMMAND_END``, or
# the text's start): ``_search_argument``; its matches are ``SEARCH_TOOL_MAX`` bytes long at most (``_in_command``)
_SEARCH_TOOL = re.compile(
    rb"(?:^|(?<=[\n|;&])|(?<=\\n)|[\s/\"(])(?:[efz]?grep|rg|ag|ack|git[ \t]{1,16}grep)[ \t]"
)
SEARCH_TOOL_MAX = 32
# the value of a ``Cookie`` or ``Set-Cookie`` header, all its pairs (group 2; group 1 a quote before it): a
# session's cookie is its login
_COOKIE = re2.compile(
    rb"(?i:cookie)" + _MAYBE_QUOTE + rb"[ \t]*:[ \t]*(" + _QUOTE + rb")?([^\s=;,\"'\\]+=[^\r\n\"'\\]*)"
)
# a netrc file's password (group 2), also where JSON text writes its line breaks as escapes (their backslash may be
# escaped again, JSON text of JSON text: a token ends before any such escape, ``pw\\nnext`` is ``pw``): after the
# ``machine`` (or ``default``) its entry starts with and the other pairs of the entry (group 1, ``login bob``;
# without them the password is judged as on a line of its own: ``_netrc_entry``) …
_NETRC_SPACE = rb"(?:[ \t\r\n]|\\+[tnr])+"
_NETRC_BLANK = rb"(?:[ \t]|\\+t)"
_NETRC_TOKEN = rb"(?:[^\s\\\"]|\\+[^tnr\s\"\\])+"
_NETRC = re2.compile(
    rb"\b(?:machine" + _NETRC_SPACE + _NETRC_TOKEN + rb"|default)((?:" + _NETRC_SPACE + rb"(?:login|account|port)"
    + _NETRC_SPACE + _NETRC_TOKEN + rb")*)" + _NETRC_SPACE + rb"password" + _NETRC_BLANK + rb"+(" + _NETRC_TOKEN + rb")"
)
# … or on a line of its own (``grep password ~/.netrc``), unless it is prose (``_netrc_password``); the screen takes
# the line up to the blank after its password (``_NETRC_LINE_HEAD``)
_NETRC_LINE_START = rb"(?:^|[\r\n\"]|\\[nr])"
_NETRC_LINE_HEAD = _NETRC_LINE_START + rb"(?:[ \t]|\\+t)*password(?:[ \t]|\\+t)"
_NETRC_LINE = re2.compile(
    _NETRC_LINE_START + _NETRC_BLANK + rb"*password" + _NETRC_BLANK + rb"+(" + _NETRC_TOKEN + rb")"
)
# where such a line ends, after its password: looked at after the match (``_netrc_password``), which must not take
# the line break that the next line's match starts with
_NETRC_LINE_END = re.compile(_NETRC_BLANK + rb"*(?:\Z|[\r\n\"]|\\+[nr\"])")
_PARSER_TOKEN = re.compile(rb"(?i)\b(?:un)?expected[ \t]+token\Z")  # a parser's error: ``Unexpected token: Identifier``
_PROSE_WORD = re.compile(rb"[a-z]+\.?")  # ``password expired.``: an error message's words
_SENTENCE_WORD = re.compile(rb"[A-Za-z][a-z]*[.,:!?]?")  # a word of a sentence, capitalised or not (``When``, ``to``)
_PROSE_LINE = re.compile(rb"(?:[ \t]+[a-z]+)+[.!]?[ \t]*(?:\Z|[\r\n\"]|\\[nr\"])")  # words to the end of a line
_PROSE_START = re.compile(rb"[A-Za-z][a-z]+")  # a sentence's first word
# words of a sentence that no password is made of: ``Please enter your password``, ``Never share it``
_FUNCTION_WORDS = frozenset(
    b"a an the your you yours my our their his her its it this that these those to of in on at for with by from is are "
    b"was were be been not no again please".split()
)
_NETRC_NAME = re.compile(rb"(?i)netrc")
# blanks and a line break (also as JSON text writes it) or the text's end, after a value after a key word
# (``_PAIR``): the value of every later key word that starts before it ends there too, in the span already found
# (no value goes past a line break: its quote closes, its rest of the line, its words end before it), so the
# search for more goes on past it, not judging each of them (``password: a b password: a b …``, a line of a
# megabyte, was judged 75,000 times, each looking for the same end of its line)
_LINE_BREAK_AT = re.compile(rb"[ \t]*(?=\n|\\+n|\Z)")
# a password's value of several words (``_line_end``): blanks and another word after its first, the rest of its
# line (a backslash, or a run of them, ends it before an ``n``, ``r`` or quote: JSON text's escapes; a backquote
# ends it too, closing the code span it is in), and code
# in that rest: a bracket, an operator, a comment; after `` = ``, a condition (``pwd or default``)
_MORE_WORDS = re.compile(rb"[ \t]+(?:[^\s\"'\\]|\\+(?![\\nrt\"]))")
_LINE_REST = re.compile(  # a quote inside a word goes on with it, as in a value (``_VALUE``)
    rb"(?:[^\r\n\"\\`]|\\+(?![\\nr\"\r\n])|(?<![\s\\])\\*\"(?=" + _AFTER_INNER_QUOTE + rb"))*"
)
_CODE_AFTER = re.compile(rb"[(){}\[\]=<>|&;]|[ \t]#")
_CODE_WORDS = re.compile(rb"\b(?:if|else|or|and|not)\b")
# the scheme words an Authorization header's credentials follow (RFC 7235's registry and the common others): each
# stays readable before what it names (``_authorization_value``)
_AUTH_SCHEME = (
    rb"basic|bearer|digest|token|negotiate|ntlm|kerberos|hoba|mutual|oauth|dpop|gnap|privatetoken|concealed"
    rb"|scram-sha-(?:1|256)|vapid|aws4-hmac-sha256|sharedkey(?:lite)?|ssws|api-?key|jwt|hawk|bot|googlelogin|splunk"
)
# an Authorization (``Proxy-Authorization``) header's value, after its scheme and a quote after that if any, of any
# length (group 3; group 1 the header's name, group 2 a quote or a backquote before the value): ``Authorization:
# token …``, ``Bearer "…"`` or a raw key
_AUTHORIZATION = re2.compile(
    rb"(?i:(authorization)(?:" + _MAYBE_QUOTE + rb"[ \t]*[:=]|" + _QUOTE + rb"(?:\][ \t]*=|[ \t]*,))[ \t]*(" + _QUOTE
    + rb"|`)?(?:(?:" + _AUTH_SCHEME + rb")[ \t]+" + _MAYBE_QUOTE + rb")?)"
    rb"((?:[^\s\"',;\\)\]}]|" + _ESCAPED + rb")+)"
)
_EMAIL = re2.compile(rb"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")
# a slash may be escaped and a backslash doubled, as JSON text in a string has them (a tool call's arguments)
_HOME = re2.compile(
    rb"(?:\\?/home\\?/|\\?/Users\\?/)[^/\s\"'<>:;,]+|[A-Za-z]:\\{1,2}Users\\{1,2}[^\\\s\"'<>:;,]+"
)
# where a path starts (group 1 follows no name's character: ``/srv/app/root`` holds a directory named root, no home;
# but a line break or a tab JSON text writes as an escape: ``\n/root``)
_PATH_START = rb"(?:^|[^\w.~\\\-]|\\[nrt])("
_ROOT = re2.compile(_PATH_START + rb"\\?/root)\b")  # root's home
# what stays of a URL's credentials: its scheme, and its user but one holding an ``@`` (an e-mail address)
_URL_HEAD = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*:(?:\\*/){2})([^/\s:\"']*):")
_URL_HEAD_BYTES = re.compile(_URL_HEAD.pattern.encode())
# a URL's user part before a replacement (its scheme's ``://`` and what follows it there, ``_userinfo``) and after it
# (the rest of the user part, up to its ``@``)
_SCHEME_END = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*\Z")
_NOT_USERINFO = re.compile(r"[/?#@\s\"'<>\[\]]")
_USERINFO_REST = re.compile(r"[^/?#@\s\"'<>\[\]]*@")
USERINFO_REACH = 256  # how far back from a replacement a URL's ``://`` is looked for (``_userinfo``)
# A word as names and prose write it (``utf``, ``Server``, ``getUserName``, ``HTTPServer``, ``x64``, ``256color``),
# where a random token mixes cases and digits at random (``k3yV4lue``)
_WORD = re.compile(r"(?:[A-Z]+|[A-Z]?[a-z]+)(?:[A-Z][a-z]+)*[0-9]*|[0-9]+(?:[A-Za-z][a-z]*)?")
_WORD_SPLIT = re.compile(r"[^A-Za-z0-9]+")
# code: a name, its attributes (group 1: ``args.api_key``) and a bracket after them (group 2: ``next_token()``)
_CODE = re.compile(rb"[A-Za-z_$][\w$]*((?:\??\.[A-Za-z_$][\w$]*)*)([(\[{<]?)")
_KEY_WORD = re.compile(rb"(?i)key|token|secret|pass")
# the whole name a key word ends (group 1: ``client_secret``, ``apiKey``), not the letter of a line break or a tab
# JSON text escapes before it (``\npassword``)
_KEY_NAME = re.compile(rb"(?:(?<=\\)[nrt])?([A-Za-z0-9_-]+)\Z")
_NAME_PARTS = re.compile(rb"_|[a-z][A-Z]")  # a name of several words: ``api_key``, ``TokenType``
# a class of several words or a constant: ``token: MessageType``, ``Token: FG_DEFAULT`` (one word is as likely a
# password: ``password: Welcome``)
_CLASS_NAME = re.compile(rb"[A-Z][a-z]+(?:[A-Z][a-z]+)+")
# a class named for the type it is, as a field's annotation on a line of its own gives it (``api_key: SecretStr``,
# ``DB_PASSWORD: PostgresDsn``, ``token: TokenType``, a dataclass's ``token: AccessToken``): no password there
TYPE_NAME = re.compile(
    rb"[A-Z][A-Za-z]*(?:Str|String|Bytes|Type|Dsn|Url|Field|Handler|Provider|Factory|Config|Settings|Model|Schema"
    rb"|Enum|Dict|List|Props|Options|Params|Error|Manager|Service|Client|Token)"
)
_CONSTANT = re.compile(rb"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_COLOR = re.compile(rb"#(?:[0-9A-Fa-f]{3}){1,2}")  # a syntax theme's ``Token: "#d8dee9"``
# literals and type names (``token: string``, ``password: str``, ``api_key: bytes``) a key word's value is in code
_LITERALS = frozenset(
    b"none null nil true false undefined self this string number boolean bigint object symbol unknown never void str "
    b"bytes bool int float dict list required optional".split()
)  # in any case: ``None``, ``String``, a form's ``Token: Optional``
# an environment variable named for a secret (``DB_PASSWORD``, ``GITHUB_TOKEN``, ``API_KEY``): any value of it goes
# (``PGPASSWORD`` and ``MYSQL_PWD`` too: the last words may be glued on; ``TOKENIZERS_…`` is none)
_SECRET_NAME = re.compile(
    r"(?i)(?:(?:^|_)(?:API_?KEY|KEY|PASS|PW|PASSPHRASE|AUTH|CREDENTIALS?|PRIVATE|COOKIE|DSN|JWT|SALT)"
    r"|PASSWORD|PASSWD|PWD|TOKEN|SECRET|SSHPASS)(?:_|$)"
)
ENV_MIN_NAMED = 6  # characters from which the value of a variable named for a secret is redacted
_SETTINGS = frozenset({"true", "false", "yes", "no", "on", "off", "enabled", "disabled", "none", "null"})
# A screen for the JSON text of a whole value: it matches wherever a string of the value holds something the
# patterns above match (and sometimes where none does: a key, a word before a colon). Each part is one of those
# patterns as JSON writes what it matches: most are unchanged (none of their characters is escaped), ``\s`` is a
# space or a ``\t``-style escape, a quote may come with its backslash, a backslash is doubled, and the parts
# that only follow a key word are left out. So a value whose JSON it does not match holds nothing to redact.
# Keep it in step with ``_KEYS``, ``_EMAIL`` and ``_HOME`` (tests/export/test_redact.py checks it on made-up text).
_JSON_SPACE = rb"(?: |\\[tnfr])"
_SCREEN = (
    rb"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY(?: BLOCK)?-----"
    + _KEY_FORMATS
    + rb"|(?i:bearer|basic)" + _JSON_SPACE + rb"+" + _GLUED_AFTER + rb"[A-Za-z0-9._~+/=\-]{12,}|" + _SIGNATURE_NAME
    + rb"|(?:" + _KEY_WORDS + rb"|;" + _JSON_SPACE + rb"*(?i:pwd)|" + _PHP_PASS + rb"|\bauth" + _MAYBE_QUOTE + rb"|\b(?i:pass|pw)" + _QUOTE + rb"|_auth|(?i:authorization|cookie))" + _MAYBE_QUOTE
    + _EMPHASIS + _JSON_SPACE + rb"*[:=]|(?:" + _NAMED + rb"|(?i:authorization))" + _QUOTE + _JSON_SPACE + rb"*[\],]"
    rb"|" + _PGPASS.pattern + rb"|ENV" + _JSON_SPACE
    + rb"|" + _NETRC.pattern + rb"|" + _NETRC_LINE_HEAD + rb"|" + _OPTION_NAME + _JSON_SPACE
    + rb"|\$\{[A-Za-z0-9_]*?(?:" + _KEY_WORDS + rb")" + _DEFAULT_AFTER
    + rb"|(?i:password|identified" + _JSON_SPACE + rb"+by)" + _JSON_SPACE + rb"+" + _QUOTE
    + rb"|<(?:" + _XML_NAME + rb")(?:[ >]|\\[tnr])|<add" + _JSON_SPACE + rb"|\.login" + _JSON_SPACE + rb"*\(|HTTP(?:Basic|Digest)Auth"
    + rb"|\b(?:var|const|setenv|set(?:" + _JSON_SPACE + rb"+--?[A-Za-z]+)*|setx(?:" + _JSON_SPACE + rb"+/[A-Za-z]+)*)"
    + _JSON_SPACE + rb"+[A-Za-z0-9_]*?(?:" + _KEY_WORDS
    + rb")" + _JSON_SPACE
    + rb"|sshpass|ssh-keygen|htpasswd|rabbitmqctl|mysql|mariadb|redis-cli|curl|mongo|sqlcmd|ldap|zip|7z|smbclient|storepass|keypass|pass:"
    + rb"|openssl|nmcli|sqlplus|rman|expdp|impdp|sqlldr|dgmgrl|wpa_passphrase|(?i:net" + _JSON_SPACE + rb"+user)"
    + rb"|(?:rar|bcp|https?|mc(?:li)?|p4)" + _JSON_SPACE + rb"|ftp|twine|snowsql|rabbitmqadmin|mosquitto|isql|influx|neo4j|useradd|usermod|passwd"
    + rb"|cqlsh|psexec|rdesktop|freerdp|cmdkey|doctl|gpg|cryptsetup|ipmitool|plink|pscp|psftp|tsql|jenkins-cli"
    + rb"|cargo|snmp|nuget|bw" + _JSON_SPACE + rb"|secret" + _JSON_SPACE + rb"+(?:create|set)|keyvault|secretsmanager|put-parameter|--from-literal|vercel"
    + rb"|(?:login|configure)" + _JSON_SPACE + rb"|-stdin|printf|sudo" + _JSON_SPACE + rb"+-|mkpasswd" + rb"|(?i:net" + _JSON_SPACE + rb"+use)" + rb"|" + _CRYPT_HEAD + rb"|" + _LDAP_HEAD
    + rb"|[A-Za-z0-9._%+\-]@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}"
    rb"|(?:/home|/Users)(?:\\\\)?/[^/\s\"'<>:;,]|/root\b|[A-Za-z]:(?:\\\\){1,2}Users"
)
# what an export puts in a secret's place, and in a URL's user part, percent-encoded as a URL writes it there
_REDACTED = re.compile(rb"\[redacted(?: (?:key|env|email))?\]|%5Bredacted%20(?:key|env|email)%5D")
_NUMBER = re.compile(r"[-+]?[0-9][0-9.,_eE+\-]*")
KINDS = ("key", "env", "email", "home")
SCALARS = frozenset({int, float, bool, type(None)})
# strings a walk redacted, by id: the string (which keeps its id taken), what it became and what that replaced
Seen = dict[int, tuple[str, str, tuple[int, ...] | None]]
Counts = tuple[int, ...]  # replacements by kind, in ``KINDS`` order
# what a walk's ``Seen`` holds when no copy may be taken from its notes (``_from_seen``; no string's id is 0): it
# redacted a dict's key, or one string object came out two ways (under a key named for a secret, and elsewhere)
NO_COPY = 0
# the words an event's structure is written in (an event's or a block's type, a role, a kind, a surface op): none
# holds anything to redact, so a string that is one is given back without a scan or a note wherever it is; any other
# string is text, whatever key holds it (an unknown type may hold anything a damaged or hostile log put there)
WORDS = frozenset({
    *KNOWN_TYPES, *PACKED_ROW_TYPES, *TAPEDECK_TYPES,
    "session", "user", "assistant", "system", "tool", "text", "reasoning", "tool-call", "tool-result", "text-delta",
    "reasoning-delta", "tool-call-delta", "block-start", "block-end", "finish", "usage", "append", "replace",
    "plugin", "model", "tapedeck", "error", "aborted", "interrupted", "completed", "stop", "tool-calls", "fallback",
})  # fmt: skip


def _replaced_already(data: bytes, start: int, end: int, marks: list[tuple[int, int]]) -> bool:
    """True when ``data[start:end]`` holds nothing but what an export replaced already (``marks``): it lies inside
    one, or it is a URL's user part that is one, with what a pattern took around it: the URL's scheme and user
    before it (``postgres://app:%5Bredacted%20key%5D@``), or the ``@`` and host after it, which read as an e-mail
    address (``%5Bredacted%20key%5D@github.com``)."""
    return any(
        a <= start and end <= b
        or data[b : b + 1] == b"@" and (a == start or b == end - 1 and _URL_HEAD_BYTES.fullmatch(data, start, a))
        for a, b in marks
    )


def _userinfo(text: str, start: int, end: int) -> int | None:
    """Where the host starts in ``text[start:end]`` (its length: past it) when that starts in a URL's user part,
    after its ``://`` (``https://TOKEN@h``, ``postgres://app:PW@db``), and ends at its ``@`` or takes the ``@`` and
    the host with it (an e-mail address read there: ``https://TOKEN@github.com``); None elsewhere. A URL reader
    takes a ``[`` there for an IPv6 host's: a replacement there is percent-encoded, the host kept
    (``_replacement``)."""
    scheme = text.rfind("://", max(0, start - USERINFO_REACH), start)
    if (scheme < 0 or _NOT_USERINFO.search(text, scheme + 3, start) is not None
            or _SCHEME_END.search(text, max(0, scheme - 32), scheme) is None):  # fmt: skip
        return None
    if _USERINFO_REST.match(text, end, end + USERINFO_REACH) is not None:
        return end - start
    at = text.rfind("@", start, end)
    return None if at < 0 or _NOT_USERINFO.search(text, start, at) is not None else at - start


def _code_points(data: bytes, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``spans`` of byte offsets into the UTF-8 ``data`` as offsets into the text it encodes."""
    at, chars, last = {0: 0}, 0, 0
    for offset in sorted({offset for start, end, _ in spans for offset in (start, end)}):
        chars += len(data[last:offset].decode())
        at[offset], last = chars, offset
    return [(at[start], at[end], kind) for start, end, kind in spans]


def _is_path(value: str) -> bool:
    return all(part.startswith(("/", "~", ".")) or not part for part in value.split(os.pathsep))


def _setting(value: str) -> bool:
    """True when a variable's value is a number, a path or a setting word (``true``, ``off``): no secret, whatever
    the variable is named for."""
    return bool(_NUMBER.fullmatch(value)) or _is_path(value) or value.strip().lower() in _SETTINGS


def readable(value: str) -> bool:
    """True when ``value`` is made of words as names and prose write them (``C.UTF-8``, ``xterm-256color``,
    ``--max-old-space-size=4096``, ``getUserName``), not of a random token's run (``k3y-v4lue``, ``a1B2c3``)."""
    return all(_WORD.fullmatch(part) for part in _WORD_SPLIT.split(value) if part)


def env_secrets(environ: Mapping[str, str] | None = None, minimum: int = ENV_MIN) -> list[str]:
    """The environment values redaction replaces, longest first (a value inside another is replaced with it),
    never a number or a path (list): a variable's named for a secret (``_SECRET_NAME``) from ``ENV_MIN_NAMED``
    characters unless it is a setting word (``true``, ``off``), any other's from ``minimum`` characters when it
    is no ``readable`` text (a locale, a terminal's name, options, a word list: ``LANG=C.UTF-8`` is no secret)."""
    env = os.environ if environ is None else environ
    values = set()
    for name, v in env.items():
        if _setting(v):
            continue
        if _SECRET_NAME.search(name):
            if len(v.strip()) >= ENV_MIN_NAMED:
                values.add(v)
        elif len(v.strip()) >= minimum and not readable(v):
            values.add(v)
    return sorted(values, key=len, reverse=True)


def _credential(data: bytes, m: Any) -> bool:
    """True when what follows ``Bearer``/``Basic`` is a credential: after ``Authorization``, or no word of prose."""
    if b"authorization" in data[max(0, m.start() - 24) : m.start()].lower():
        return True
    return not readable(m.group(1).decode()) or any(c in m.group(1) for c in b"._~+/=-")


def _secret_value(data: bytes, m: Any) -> bool:
    """True when the value after a key word (``password=…``, ``"token": "…"``) is a secret, not code or text that
    names one: a reference (``$DB_PASSWORD``, ``${{ secrets.TOKEN }}``), a placeholder (``<token>``, ``…``,
    ``***``), a colour (``"#d8dee9"``), or, unquoted (code quotes what it means literally), a call or an index
    (``token = next_token()``), an attribute (``args.api_key``), a literal, a type or a constant (``None``,
    ``string``, ``MessageType``, ``FG_DEFAULT``), a name holding the key word assigned (``api_key=api_key``,
    ``self.password = password``), each also in Markdown's backticks; but any value of an env file's line
    (``DB_PASSWORD=…``) or an npm config's (``_authToken=…``) is one but a number (not a secret's digits,
    ``_digit_secret``), a path or a setting word, a password's words to its line's end are one (``_line_end``), and a constant or a variable of a config
    (``DB_PASSWORD = MyPassword``) and a key of several words on a config file's line of its own (``apiKey:
    MyApiKey``, ``client_secret: SuperSecret``, ``_config_line``) are assigned a value that reads like a class's
    name, not the class (but for a type's: ``api_key: SecretStr``). Under six characters only a quoted value, an
    env file's, a constant's or such a config line's is one (``PASSWORD=abc12``, ``ROOT_PASSWORD: root``,
    ``db_password: root``): elsewhere such a value is as likely a short name in code (``password=pwd``, ``{ token:
    tok }``)."""
    value, quoted = m.group(3), m.group(2) is not None
    if not quoted and data[m.start(3) - 1] in b" \t" and _search_argument(data, m.start(1)):
        return False  # ``grep -rn password: config/``: a search tool's pattern, and a file
    name = _key_name(data, m)
    if _no_password(name.decode(errors="replace")):
        return False  # ``first_pass: parse tokens``
    if _compared(data, m):
        return False  # ``password==x``, ``if authorization == x``: a comparison's operand
    if data[m.end(1) - len(name) - 2 : m.end(1) - len(name)] == b"${":
        return False  # a parameter's expansion, ``${TOKEN:-…}``: its default is ``_DEFAULTED``'s, ``:?`` an error's
    if data[m.end(1) : m.end(1) + 1] not in (b'"', b"'", b"\\") and b"=>" in data[m.end(1) : m.start(3)] and data[
        m.end(1) - len(name) - 1 : m.end(1) - len(name)
    ] != b":":
        return False  # a bare name's ``=>`` is an arrow function's (``token => 'Bearer ' + token``), not a Ruby symbol's
    if not quoted and b":" in data[m.end(1) : m.start(3)] and _CONDITION.search(
        data, max(0, m.end(1) - len(name) - 32), m.end(1) - len(name)
    ):
        return False  # ``if user_pass: return``: a condition's statement
    if value.isalpha() and _PARSER_TOKEN.search(data, max(0, m.start(1) - 16), m.end(1)):  # a parser's word for
        return False  # what it found (``Identifier``), not a test's ``expected token: abc123``
    if quoted:  # all of it, to the closing quote: ``psk="my home wifi"`` is more than ``my``
        value = data[m.start(3) : _quoted_end(data, m, 3)]
        return bool(value) and _literal_secret(value) and not _lexer_word(name, value)
    if _STRING_PREFIX.match(data, m.start(3)) and _expression_start(data, m) is not None:  # code's string with
        return False  # its prefix (``token = f"{a}{b}"``, ``rb"\\d+"``: ``_literals`` judge it); elsewhere (``PASSWORD=
        # B'0'``, ``password: r'ab'``) one word, the letter's and the quote's, which ``_glued`` takes whole
    if value[:1] == b"&" and _RUST_REFERENCE.match(data, m.end(1)):
        return False  # a Rust reference's type, ``TOKEN: &'static str = …`` (``_literals`` judge what is assigned)
    if (query := _query_end(data, m)) is not None:  # a URL query's parameter, to the next one's ``&``
        value = data[m.start(3) : query]
    elif (glued := _glued(data, m.start(3))) is not None:  # a quoted piece glued in (``ab'c d'``): no code's name,
        value = data[m.start(3) : glued]  # judged whole as a quoted value is
        return _literal_secret(value) and not _lexer_word(name, value)
    elif _line_end(data, m) is not None:  # a password's words to the end of its line, whatever they are
        return not _placeholder(value)
    elif (words := _code_span_words(data, m)) is not None:  # backquoted words (``TOKEN=`Abc def` ``)
        return words
    elif (joined := _joined_end(data, m)) > m.end(3):  # an env or config file's value with punctuation inside it
        # (judged by its first ``SETTING_MAX`` bytes: no setting, number or path is longer, and each key word of a
        # long value judging all of it, ``DB_PASSWORD=a,1DB_PASSWORD=a,…``, took time growing as its square)
        value = data[m.start(3) : min(joined, m.start(3) + SETTING_MAX + 1)]
        return not _placeholder(value) and (len(value) > SETTING_MAX or not _setting(value.decode(errors="replace")))
    if _placeholder(value) or _lexer_word(name, value) or _MARKUP.fullmatch(value):  # (one character is enough:
        return False  # ``PASSWORD=x``)
    sep = data[m.end(1) : m.start(3)]
    upper = m.group(1).isupper()
    # an env file's ``DB_PASSWORD=…``, an npm config's ``_auth=…`` or a connection string's ``;Pwd=…``: data,
    # whatever it looks like
    if sep == b"=" and upper or m.group(1).endswith(_NPM_KEYS) or m.group(1).startswith(b";"):
        return _digit_secret(_key_name(data, m), value) or not _setting(value.decode(errors="replace"))
    config = _config_line(data, m)
    if config and _setting(value.decode(errors="replace")) and not _digit_secret(_key_name(data, m), value):
        return False  # ``db_password: none``, ``DB_PASSWORD: 123``, ``max_token: 4096``
    if len(value) < ENV_MIN_NAMED and not upper and not config:
        return False
    if _prose_after(data, m):
        return False
    value = value.rstrip(b".:!?`").lstrip(b"`")
    code = _CODE.match(value)
    if code is None:  # it starts with no name (``9f8e…``)
        return True
    whole = code.end() == len(value)
    if code.group(2) and _closed(data, m.start(3), code.group(2)) or whole and (
        value.lower() in _LITERALS or _CONSTANT.fullmatch(value)
    ):
        return False
    if whole and _CLASS_NAME.fullmatch(value):  # a class, but what a constant or a config's variable is given is data
        return upper and b"=" in sep or config and not TYPE_NAME.fullmatch(value)
    if code.group(1) and _code_name(value[: code.end()]):  # names, not a dotted token's parts (``Abc1.Def2``)
        return False
    # the key's own name, in its case or another, is code after any key (``{ api_key: apiKey }``: a field passed on);
    # another name holding the key word is code where a value is assigned (``api_key=api_key``) or a quoted key's
    # (``"password": password_hash``), data after a bare key (YAML's ``password: super_secret_pw``); a name is
    # words without a digit (``_code_name``), which a password made to look like one has (``Sup3rSecret``)
    if whole and _bare_name(value) == _bare_name(_key_name(data, m)):
        return False
    named = value.lower() == m.group(1).lower() or _KEY_WORD.search(value) and _NAME_PARTS.search(value) and _code_name(value)
    return not (whole and named and (b"=" in sep or b'"' in sep or b"'" in sep))


# a token of a value's expression in code (``_literals``): a string literal (group 1 its prefix, group 2 its quote,
# as JSON text writes it), a bracket, what ends the expression (``,;``, a comment, a line break, also as JSON text
# writes it), or a comparison (the literal after it is compared, not assigned: ``x if mode == 'strict' else y``)
_EXPRESSION = re.compile(
    rb"(?:\b([bBrRuUfF]{1,2}))?(\\*[\"'])|([(\[{])|([)\]}])|([,;#\r\n]|//|\\+[nr])|[=!<>]=|[<>]|\b(?:in|is)\b"
)
# an assignment's sign in code, blanks around it, or a quoted key's colon (``{'password': …}``): not ``x=y`` in a
# string (``"password={password}"``)
_CODE_SIGN = re.compile(rb"[ \t]+=[ \t]+|\\*[\"'][ \t]*:[ \t]+")
# … or a call's keyword argument's ``=`` (no blanks: ``f(password=x or 'y')``) or an object literal's bare key's ``:``
# (``{password: c ? 'a' : 'b'}``), where the key follows a ``(``, ``{`` or ``,`` (blanks and line breaks between,
# also as JSON text writes them: a key of its own line in a multi-line object)
_ARGUMENT_SIGN = re.compile(rb"=|[ \t]*:[ \t]*")
_NAME_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"  # a key's name's (``_KEY_NAME``)
# … or past a typed name's annotation and its ``=`` (``password: str = …``, ``apiKey: string | undefined = …``,
# ``token: Optional[str]=…``), where the expression starts
# (a type's brackets hold no ``|`` and nest once at most: each way to read a text is its only one, which the search
# takes in time linear in it, not trying one bracket's close after another: ``a[]|a[]|…`` took exponential time)
_TYPE_ARGS = rb"[\w., ]{0,64}"
_TYPE = (  # also a Rust reference's (``&str``, ``&'static str``, ``&mut String``)
    rb"(?:&(?:'[A-Za-z_]\w*[ \t]+)?(?:mut[ \t]+)?)?"
    rb"[A-Za-z_][\w.]{0,64}(?:\[" + _TYPE_ARGS + rb"(?:\[" + _TYPE_ARGS + rb"\]" + _TYPE_ARGS + rb")?\])?"
)
_ANNOTATION = re.compile(rb"[ \t]*:[ \t]*" + _TYPE + rb"(?:[ \t]*\|[ \t]*" + _TYPE + rb")*[ \t]*=(?!=)[ \t]*")
ANNOTATION_MAX = 256  # bytes past a key word its annotation and ``=`` are looked for in (``_expression_start``)
# a Rust reference's type annotated, blanks around its ``=`` (``: &'static str = ``; ``password: &abc=def1`` is data)
_RUST_REFERENCE = re.compile(rb"[ \t]*:[ \t]*&(?:'[A-Za-z_]\w*[ \t]+)?(?:mut[ \t]+)?[A-Za-z_][\w:]{0,64}[ \t]+=[ \t]")
# a call that looks a value up and gives its other arguments as the default (``os.getenv('P', 'Sup3r')``,
# ``environ.get``, Ruby's ``ENV.fetch``, Java's ``getProperty``, ``getOrDefault``, ``setdefault``): its name, just
# before its ``(`` (``_literals``)
_DEFAULT_CALL = re.compile(rb"(?:^|[^\w$])(?:getenv|Getenv|get|fetch|getProperty|getOrDefault|setdefault)\Z")
_PATTERN_CHARS = re.compile(rb"[\\^$*+?|\[\](){}]")  # a raw or bytes literal holding one is a pattern or escapes


def _literals(data: bytes, m: Any) -> list[tuple[int, int]]:
    """The secrets among the string literals of a value's expression after a key word (``_PAIR``), but its first,
    quoted with no prefix (``_secret_value`` judges that one): each other literal the expression may take
    (``password = 'abc' if x else 'Sup3rSecret'``, ``token = x or "Sup3r"``, ``f(password=x or 'Sup3r')``,
    ``{token: c ? 'a' : 'Sup3r'}``, ``password: str = x or 'Sup3r'``: ``_expression_start``), and one with a ``b``/``r``/``u``
    prefix (``token = b'abc12345xyz'``) unless it holds a pattern's or an escape's character (``rb"\\d+"``), and
    a default a lookup gives past its first argument (``os.getenv('P', 'Sup3r')``: ``_DEFAULT_CALL``). Other
    literals inside brackets (a call's argument, an index: ``get("API_TOKEN")``), after a comparison, and
    f-strings with a replacement field stay code (one without, ``f"Sup3r"``, is a literal)."""
    start = _expression_start(data, m)
    if start is None or _no_password(_key_name(data, m).decode(errors="replace")):
        return []
    at, end, depth, compared = start, min(len(data), start + SETTING_MAX), 0, False
    found: list[tuple[int, int]] = []
    # the value opens with a plain literal: ``_secret_value``'s (not past an annotation: that judged the type)
    first = start == m.start(2)
    lookup, argument = False, 0  # the bracket open at depth 1 is a lookup's call, and which argument is at
    while (t := _EXPRESSION.search(data, at, end)) is not None:
        at = t.end()
        if t.group(2) is None:
            if t.group(3) and depth == 0:
                lookup = t.group(3) == b"(" and _DEFAULT_CALL.search(data, max(0, t.start() - 32), t.start()) is not None
                argument = 0
            depth += 1 if t.group(3) else -1 if t.group(4) else 0
            if depth < 0 or t.group(5) and depth == 0:  # the expression ends
                break
            argument += depth == 1 and t.group(5) == b","
            compared = not (t.group(3) or t.group(4) or t.group(5))
            continue
        close = data.find(t.group(2), at, end)
        if close < 0:
            break
        default = depth == 1 and lookup and argument > 0  # (``getenv('P', 'Sup3r')``)
        value, prefix = data[at:close], (t.group(1) or b"").lower()
        judged = not (first or compared or depth and not default)
        at, first, compared = close + len(t.group(2)), False, False
        if not judged or not value or not _literal_secret(value):
            continue
        if b"f" in prefix and b"{" in value:  # an f-string's replacement field: code
            continue
        if _lexer_word(_key_name(data, m), value):
            continue
        if prefix and _PATTERN_CHARS.search(value):
            continue
        found.append((t.end(), close))
    return found


def _expression_start(data: bytes, m: Any) -> int | None:
    """Where the expression code assigns to the key word of ``m`` (``_PAIR``) starts: its value, after `` = `` or a
    quoted key's ``:`` (``_CODE_SIGN``), or a keyword argument's ``=`` or an object literal's bare key's ``:`` that
    a ``(``, ``{`` or ``,`` comes before (``_ARGUMENT_SIGN``); or past a typed name's annotation (``password: str =
    …``, ``_ANNOTATION``). None where the key word is no code's name assigned (``"password={password}"``)."""
    start = m.start(2) if m.start(2) >= 0 else m.start(3)
    sign = _CODE_SIGN.match(data, m.end(1), start)
    if sign is not None and sign.end() == start:
        return start
    typed = _ANNOTATION.match(data, m.end(1), min(len(data), m.end(1) + ANNOTATION_MAX))
    if typed is not None:
        return typed.end()
    if _ARGUMENT_SIGN.fullmatch(data, m.end(1), start) is None or data[start : start + 1] == b"=":  # (``==``)
        return None
    # what the key's whole name follows, blanks and line breaks aside (a backslash left: the escape of one, as JSON
    # text writes it, whose letter went with the name or is next)
    before = data[max(0, m.start(1) - 64) : m.start(1)].rstrip(_NAME_CHARS)
    while True:
        before = before.rstrip(b" \t\r\n")
        if before[-2:-1] == b"\\" and before[-1:] in (b"n", b"r", b"t"):
            before = before[:-1]
        elif before[-1:] != b"\\":
            break
        before = before.rstrip(b"\\")
    return start if before[-1:] in (b"(", b"{", b",") else None


def _compared(data: bytes, m: Any) -> bool:
    """True when the key word of ``m`` (``_PAIR``, ``_AUTHORIZATION``: group 3 its value) is compared, not assigned:
    ``==`` (``===``) follows it, blanks around it or none (``password==x``, ``if authorization == x``), the sign code
    compares with (``_expression_start``, ``_line_end``); but for an environment variable's upper-case name with
    ``=`` right after it, which a shell and an env file assign what follows, ``=`` and all (``DB_PASSWORD==x``)."""
    start = m.start(3)
    if data[start - 1 : start + 1] != b"==":
        return False
    return not (data[m.end(1) : start] == b"=" and _key_name(data, m).isupper())


_CLOSING = {b"(": b")", b"[": b"]", b"{": b"}", b"<": b">"}
_OWN_CLOSE = {b")": b"(", b"]": b"[", b"}": b"{"}  # a closing bracket and the one it closes (``_joined_end``)
_STRING_PREFIX = re.compile(rb"[fFrRbBuU]{1,2}\\*[\"']")  # a string's prefix in code: ``f"``, ``rb'``
# an unquoted value that is markup, no secret: a YAML block scalar's header (``password: |``, ``>-``: the block is
# ``_YAML_BLOCK``'s), or one or two characters of punctuation (YAML's null ``~``, a table's ``-``)
_MARKUP = re.compile(rb"[|>][1-9+-]{0,2}|[!-/:-@\[-`{-~]{1,2}")


# a quote no backslash escapes (after an even run of them: ``\\\\"``): in JSON text, the end of the string; and one
# that one does (after an odd run: ``\\"``, ``\\\\\\"``), a character of the string (``_bare_quotes``)
_BARE_QUOTE = re.compile(rb'(?<!\\)(?:\\\\)*"')
_ESCAPED_QUOTE = re.compile(rb'(?<!\\)(?:\\\\)*\\"')


def _closed(data: bytes, at: int, bracket: bytes) -> bool:
    """True when ``bracket``, opened in a value that starts at ``at``, closes later on its line (looked for at most
    ``COMMAND_REACH`` bytes on either side): a call's, an index's or a type's (``getpass()``, ``Optional[str]``), not
    a password's own character (``password: ab(cd1234``), nor one a letter or digit follows at its close, which
    no code writes after a call, an index or a type (``Ab{}00xy``, ``Ab(x)9``). In a JSON string (``_in_json_string``)
    the string's closing quote, no backslash escapes, ends the line: a ``}`` after it is the object's (``{"c":
    "password: ab{cd1234"}``)."""
    hi = min(len(data), at + COMMAND_REACH)
    stop = min((i for end in (b"\n", b"\\n") if (i := data.find(end, at, hi)) >= 0), default=hi)
    if _in_json_string(data, at):
        quote = _BARE_QUOTE.search(data, at, stop)
        stop = stop if quote is None else quote.end() - 1
    close = data.find(_CLOSING[bracket], at, stop)
    return close >= 0 and not data[close + 1 : close + 2].isalnum()  # ``Ab{}00``: no code goes on so


def _in_json_string(data: bytes, at: int) -> bool:
    """True when ``at`` is in a JSON string's text, as a JSON parser reads its line (looked for at most
    ``COMMAND_REACH`` bytes back): after a ``\\n`` escape (inside a string) an even number of quotes no backslash
    escapes before ``at`` (``_bare_quotes``), else an odd number on the line; a ``\\"`` is the string's character."""
    lo = max(0, at - COMMAND_REACH)
    real, escaped = data.rfind(b"\n", lo, at), data.rfind(b"\\n", lo, at)
    if escaped > real:
        return _bare_quotes(data, escaped + 2, at) % 2 == 0
    quotes = _bare_quotes(data, real + 1, at) if real >= 0 else _quotes_before(data, at)  # a line begun further back
    return quotes % 2 == 1


def _bare_quotes(data: bytes, lo: int, at: int) -> int:
    """How many ``"`` ``data`` holds from ``lo`` to ``at`` that no backslash escapes (``_BARE_QUOTE``), the backslashes
    just before ``lo`` too."""
    while lo > 0 and data[lo - 1] == 0x5C:  # (a run that ``lo`` cuts: its start tells how it ends)
        lo -= 1
    quotes = data.count(b'"', lo, at)
    if quotes and data.find(b'\\"', lo, at) >= 0:
        quotes -= len(_ESCAPED_QUOTE.findall(data, lo, at))
    return quotes


class _Kept(threading.local):
    """The answers the judges keep for the next question about the same text (each asked in order, so that a line
    of many values is searched once, not again for each: ``bench/redact.py``), the text with them. Each thread keeps
    its own, and a text's redaction forgets them as it ends (``_forget``): they would keep the text, a secret, alive
    until the next redaction."""

    def __init__(self) -> None:
        self.forget()

    def forget(self) -> None:
        """Forget every answer and the text it was for."""
        # ``_quotes_before``'s: the text, where it counted to and how many ``"`` it found before there
        self.quotes: tuple[bytes, int, int] = (b"", 0, 0)
        # ``_joined``'s: the text, the pattern, where it was asked from and where the token it followed ends
        self.joined: tuple[bytes, Any, int, int] = (b"", None, 0, -1)
        # ``_closing_quote``'s: the text, where it was asked, and what it found (None: nothing to the text's end)
        self.closing: tuple[bytes, int, Any] = (b"", 0, None)
        # ``_rest_of_line``'s: the text, where it was asked from, the line's end and marks, and where it was to stop
        self.line: tuple[bytes, int, int, tuple[int, ...], int | None] = (b"", 0, -1, (), None)
        # ``_piped_group``'s: the text, the reader's pattern, where the group's rest was read from and to
        self.group: tuple[bytes, Any, int, int, bool] = (b"", None, 0, -1, False)
        # ``_last_before``'s for each pattern: the text, where it was asked, the last match's span before there
        self.before: dict[Any, tuple[bytes, int, int, int]] = {}
        # ``_in_command``'s for each pattern: the text, how far it searched, and the first match it found
        self.in_command: dict[Any, tuple[bytes, int, Any]] = {}
        # ``_search_argument``'s count: the text, where its tool's name ended, how far ``"`` and ``'`` were counted
        # from there, and how many
        self.quotes_after: tuple[bytes, int, int, int, int] = (b"", -1, 0, 0, 0)
        # ``_about_netrc``'s: the text and its answer
        self.netrc: tuple[bytes, bool] = (b"", False)


_kept = _Kept()


def _quotes_before(data: bytes, at: int) -> int:
    """How many ``"`` no backslash escapes ``data`` holds before ``at`` (``_bare_quotes``), counted on from the last answer's place when it is in the same text
    and not past ``at`` (the values of a text are judged in order): a line of many values is counted once, not from
    its start for each of them."""
    text, counted, found = _kept.quotes
    if text is not data or counted > at:
        counted, found = 0, 0
    found += _bare_quotes(data, counted, at)
    _kept.quotes = (data, at, found)
    return found


_DIGIT = re.compile(rb"[0-9]")


def _code_name(name: bytes) -> bool:
    """True when ``name`` (a name, or names joined by dots) is made of words as code names them: ``readable``, and
    without a digit, which a password made to look like a name has (``Sup3rSecret``, ``MySecret123``, ``Abc1.Def2``)."""
    return _DIGIT.search(name) is None and readable(name.decode(errors="replace"))


def _key_name(data: bytes, m: Any) -> bytes:
    """The whole name the key word of ``m`` (group 1) ends, up to 64 bytes of it (``client_secret``, ``apiKey``; none
    for a quoted key)."""
    name = _KEY_NAME.search(data, max(0, m.start(1) - 64), m.end(1))
    return name.group(1) if name is not None else b""


def _bare_name(name: bytes) -> bytes:
    """A name as its words, whatever case joins them: ``apiKey``, ``api_key`` and ``API-KEY`` are ``apikey``."""
    return name.lower().replace(b"_", b"").replace(b"-", b"")


def _placeholder(value: bytes) -> bool:
    """True when a secret's value only stands for one: a reference (``$DB_PASSWORD``, ``${{ secrets.TOKEN }}``,
    ``%s``, a format string's or an f-string's ``{token}``) or a placeholder (``<token>``, ``…``, ``***``), also in
    Markdown's backticks (```<your password>```)."""
    value = value.lstrip(b"`")
    return value[:1] in (b"$", b"%", b"<", b"*", b"{") or value.startswith("…".encode())


def _literal_secret(value: bytes) -> bool:
    """True when a quoted value after a key word is a secret: no placeholder, no colour (``"#d8dee9"``) and no
    setting word (``"none"``, ``"disabled"``)."""
    return not _placeholder(value) and not _COLOR.fullmatch(value) and value.decode(errors="replace").lower() not in _SETTINGS


def _lexer_word(name: bytes, value: bytes) -> bool:
    """True when ``value``, under a key whose whole name is ``token`` (``name``: ``token``, ``self.token``,
    ``"token"``), is a word of a language, no credential: a lexer's or a parser's token (``token = "EOF"``,
    ``{"token": "IDENT"}``, ``token: STRING_LITERAL``, ``token = "return"``), letters of one case (a constant's name
    or a keyword), ``_`` and blanks between. A credential is random: a digit (``token = "abc12"``) or letters of
    both cases (``token = "xKqTzP"``, and a password's shape, ``token: MyPassword``) make one, and so does any
    value of a token a word names (``api_token``, ``GITHUB_TOKEN``: no lexer's), or of another key (a person may
    choose a short word for a password: ``password: root``)."""
    letters = value.replace(b" ", b"").replace(b"_", b"")
    return name.lower() == b"token" and letters.isalpha() and (letters.isupper() or letters.islower())


NAMES_MAX = 4096  # names each judge of names remembers at most (``_remembered``): a log's objects have few keys


class _Pending(threading.local):
    """The answers the judges of names gave one thread since its last ``_settle``, by judge and name: kept for the
    call being made alone, until it says whether what they were asked about held anything to replace."""

    def __init__(self) -> None:
        self.answers: dict[tuple[Callable[[Any], bool], Any], bool] = {}


_pending = _Pending()
_KNOWN: dict[Callable[[Any], bool], dict[Any, bool]] = {}  # each judge's answers remembered for every thread


def _remembered(judge: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """``judge``, a judge of names (a log's keys, asked again and again), remembering its answers for every thread,
    but only about names that held nothing redaction replaced: a new answer stays the asking thread's
    (``_pending``) until ``_settle`` remembers it (the key or the text it was read from held nothing to replace)
    or forgets it. So no name that is or holds a secret outlives the call that read it, no thread is answered
    from a name another thread is still judging, and the names of a clean object stay remembered across events
    that hold secrets."""
    known = _KNOWN[judge] = {}

    def ask(name: Any) -> bool:
        answer = known.get(name)
        if answer is None:
            pending = _pending.answers
            answer = pending.get((judge, name))
            if answer is None:
                answer = pending[judge, name] = judge(name)
        return answer

    ask.__doc__ = judge.__doc__
    return ask


def _settle(held: bool) -> None:
    """End the answers this thread's judges of names gave since it last settled: remembered for every thread when
    what they were asked about held nothing to replace (``held`` false), else forgotten."""
    pending = _pending.answers
    if pending:
        if not held:
            for (judge, name), answer in pending.items():
                known = _KNOWN[judge]
                if len(known) >= NAMES_MAX:
                    known.clear()
                known[name] = answer
        pending.clear()


def _digit_secret(name: bytes, value: bytes) -> bool:
    """True when ``value`` is four digits or more after a key named for a secret (``password: 12345678``,
    ``PGPASSWORD=4711``, ``api_key: 20240607``): the secret itself, but under a key that counts (``_counting``)."""
    return len(value) >= 4 and value.isdigit() and _number_key(name.decode(errors="replace"))


@_remembered
def _number_key(name: str) -> bool:
    """True when a number of four digits or more under the key ``name`` (the whole of it: ``max_token``) is a
    secret: the key is named for a password, or for another secret (``api_key``, ``secret``, ``token``, ``auth``)
    unless a word of it says it counts (``max_token: 4096``, ``prompt_token``; a plural, ``tokens``, names no
    secret)."""
    if _no_password(name):
        return False
    if _PASSWORD_KEY.search(name.encode()) is not None:
        return True
    return _secret_key(name) and _COUNT_WORDS.isdisjoint(w.lower() for w in _NAME_WORDS.findall(name))


# the word before a name's last, ``pass`` (``pw``, ``pwd``), that makes it name no password: a compiler's or a
# renderer's pass, a filter, a ticket, a mountain's (``first_pass``, ``renderPass``, ``high_pass``, ``boarding_pass``),
# a test's outcome (``tests_pass``), a directory (``old_pwd``, ``cur_pwd``); ``db_pass``, ``user_pass``,
# ``smtp_pass`` and ``mysql_pwd`` are passwords' names
_NOT_PASSWORDS = frozenset({
    "first", "second", "third", "fourth", "fifth", "last", "next", "prev", "previous", "final", "initial", "single",
    "multi", "one", "two", "three", "double", "triple", "extra", "render", "compile", "compiler", "lint", "linter",
    "parse", "parser", "optimization", "optimize", "opt", "codegen", "lowering", "forward", "backward", "fwd", "bwd",
    "high", "low", "band", "notch", "all", "tests", "should", "must", "will", "boarding", "bus", "day", "season",
    "hall", "mountain", "skip", "dry", "old", "cur", "current", "orig", "original", "saved", "start", "work",
})  # fmt: skip
# what a key named for a secret follows when it is a condition's, no pair's: ``if user_pass: return``, ``while
# not self.token:`` (``_secret_value``)
_CONDITION = re.compile(rb"(?:^|[\s(])(?:if|elif|while|and|or|not)[ \t]+(?:not[ \t]+)?(?:[A-Za-z_]\w*\.)*\Z")


@_remembered
def _no_password(name: str) -> bool:
    """True when ``name``'s last word is ``pass``, ``pw`` or ``pwd`` and the word before it makes the name no
    password's (``_NOT_PASSWORDS``: ``first_pass``, ``renderPass``, ``OLD_PWD``)."""
    words = _NAME_WORDS.findall(name)
    return len(words) >= 2 and words[-1].lower() in ("pass", "pw", "pwd") and words[-2].lower() in _NOT_PASSWORDS


def _config_line(data: bytes, m: Any, end: int | None = None) -> bool:
    """True when the key word of ``m`` ends an unquoted key (one word, camelCase, snake_case or kebab-case) that
    starts its line and its value (group 3) ends that line: a YAML, INI or properties file's ``password:
    ChangeMe``, ``apiKey: MyApiKey``, ``aws_secret_access_key = abc12``, not an annotation (``{ apiKey: ApiKey;
    }``) nor a JSON object's quoted key (``"token": tok``). A line starts after a line break, its escape in JSON
    text, or the quote that opens JSON text's string (``"content": "password: pass1\\n…"``). ``end``: where the value
    ends, if not at group 3's end."""
    at = m.start(1)
    lo = max(0, at - CONFIG_KEY_MAX)  # not back to the text's start at each key word: the text may hold thousands
    escaped = data.rfind(b"\\n", lo, at)
    start = max(data.rfind(b"\n", lo, at) + 1, escaped + 2 if escaped >= 0 else 0, data.rfind(b'"', lo, at) + 1)
    if start == 0 and lo > 0:  # no line starts in reach: no config line's indent and key are that long
        return False
    return (data[m.end(1) : m.end(1) + 1] not in (b'"', b"'", b"\\")
            and _CONFIG_KEY.fullmatch(data, start, m.end(1)) is not None
            and _LINE_END.match(data, m.end(3) if end is None else end) is not None)  # fmt: skip


# punctuation inside an unquoted value after a key word and the rest of its token (``_joined_end``), and the same
# punctuation before a next key (``;PORT=``, a mount's ``,uid=``, ``{password:e,user:t}``)
_JOINED = re.compile(rb"[,;)\]}]+" + _VALUE)
_NEXT_KEY = re.compile(rb"[,;)\]}]+[A-Za-z_][\w.-]*[ \t]*[=:]")
# … and in a command's option's value (``--password=a,b``), a shell's word, which ``;`` and ``)`` end (``_OPTION``'s)
_OPTION_JOINED = re.compile(rb"[,\]}]+" + _OPTION_CHAR + rb"+")


def _joined(data: bytes, at: int, joined: Any = _JOINED) -> int:
    """Where the token at ``at`` ends past ``,;)]}`` inside it and the characters after each (``joined``: an
    option's word goes on past ``,]}`` only), but before one a next key follows (``_NEXT_KEY``), however far on;
    ``at`` when none is there. The last answer is kept, with where it was asked from: a value's end inside a token
    followed already ends the same token (each step starts where a value's characters end), so a token of many
    key words (``token=a,1token=a,…``) is followed once, not from each of them."""
    last = _kept.joined
    if last[0] is data and last[1] is joined and last[2] <= at <= last[3]:
        return last[3]
    end = at
    while (part := joined.match(data, end)) is not None and _NEXT_KEY.match(data, end) is None:
        end = part.end()
    _kept.joined = (data, joined, at, end)
    return end


def _joined_end(data: bytes, m: Any) -> int:
    """Where the unquoted value of ``m`` (group 3) ends on an env file's line (``DB_PASSWORD=aB3)dE5``), a config
    file's (``password: aB3;dE5``) or in a command's option (``--password=aB3,dE5``, past ``,]}`` only): past
    ``,;)]}`` inside it, the value's own characters there, where in code they
    close or part what holds it, but not past one a next key follows (``DB_PASSWORD=pw;PORT=5432``), nor after a
    call or an index (``token = response.json()["token"]``), however long the value (``_joined``). Elsewhere at the
    group's end."""
    option = data[m.end(1) : m.start(3)] == b"=" and _key_name(data, m)[:1] == b"-"  # ``--password=a,b``
    end, stop = _joined(data, m.end(3), _OPTION_JOINED if option else _JOINED), m.end(3)
    if end == stop or (code := _CODE.match(m.group(3))) is not None and code.group(2) and _closed(
        data, m.start(3), code.group(2)
    ):
        return stop
    env = data[m.end(1) : m.start(3)] == b"=" and m.group(1).isupper()
    if env or option or _config_line(data, m, end):
        return end
    own = _OWN_CLOSE.get(data[stop : stop + 1])  # a bracket that closes one the value opened (``Ab{}00xy``): its
    return _JOINED.match(data, stop).end() if own and own in m.group(3) else stop  # type: ignore[union-attr]  # part


def _pair_start(data: bytes, m: Any, group: int) -> int:
    """Where the value after a key word starts (``_PAIR``): right after a triple quote that opens it, a line break
    there too (``password = '''`` then ``ab'''``: all between the quotes goes), else where its ``group`` does."""
    quote = m.group(2)
    return m.end(2) if quote is not None and quote.count(quote[-1:]) == 3 else m.start(group)


def _pair_end(data: bytes, m: Any, group: int) -> int:
    """Where the value after a key word ends (``_PAIR``): in a URL's query, before the next parameter
    (``_query_end``); else at its closing quote or the end of a password's line (``_quoted_end``), else past
    punctuation inside it on an env or config file's line (``_joined_end``)."""
    if (query := _query_end(data, m)) is not None:
        return query
    end = _quoted_end(data, m, group)
    end = _joined_end(data, m) if end == m.end(group) else end
    if m.group(2) is None and (glued := _glued(data, m.start(group))) is not None:  # (``ab'c d'``)
        end = max(end, glued)
    span = _code_span_end(data, m)  # a Markdown code span's, or a shell's backquotes, to their close
    return end if span is None else max(end, span)


def _code_span_words(data: bytes, m: Any) -> bool | None:
    """Whether the words backquotes open and close after a key word or an option are a secret (``TOKEN=`Abc def` ``,
    ``--password `Abc def` ``): all of them are, but prose (a word no secret is made of: ``the``) or code (a
    bracket, an operator); None when they are no such words (one word is judged as any value is)."""
    span = _code_span_end(data, m)
    words = b"" if span is None else data[m.start(3) : span]
    if b" " not in words and b"\t" not in words:
        return None
    return (not _placeholder(words) and _CODE_AFTER.search(words) is None
            and _FUNCTION_WORDS.isdisjoint(words.lower().split()))  # fmt: skip


def _code_span_end(data: bytes, m: Any) -> int | None:
    """Where the value of ``m`` (group 3) ends when backquotes open it (``TOKEN=`Abc def`` ``, ``` ``…`` ```): at the
    run of as many that closes them on its line; None when none opens it or nothing closes it there."""
    start = m.start(3)
    opens = start
    while opens > m.start() and data[opens - 1] == 0x60:  # the backquote
        opens -= 1
    if opens == start:
        return None
    return _close(data, data[opens:start], m.end(3), literal=True)


# a URL query's parameter, or a form's: its name after ``?`` or ``&`` (also as Go's JSON writes it, ``\u0026``), and
# what ends its value, the next parameter's ``&``, the fragment's ``#``, or a ``<`` or ``>``, which a URL holds only
# encoded (``<https://h/?token=…>``: a Markdown autolink's end) (``_query_end``)
_QUERY_NAME = re.compile(rb"(?:[?&]|\\u0026)[\w.-]*\Z")
_QUERY_END = re.compile(rb"&|\\+u0026|[#<>]")


def _query_end(data: bytes, m: Any) -> int | None:
    """Where the unquoted value of ``m`` (group 3) ends when its key is a URL query's parameter or a form's
    (``?token=…&x=1``, ``user=bob&password=…&remember=1``): at the ``&`` before the next one, the ``#`` of the
    fragment, or a ``<`` or ``>``, which a URL's value holds only encoded (``<https://h/?token=…>``). None for any
    other key."""
    if m.group(2) is not None or data[m.end(1) : m.start(3)] != b"=":
        return None
    if _QUERY_NAME.search(data, max(0, m.start(1) - 64), m.start(1)) is None:
        return None
    end = _QUERY_END.search(data, m.start(3), m.end(3))
    return m.end(3) if end is None else end.start()


def _line_end(data: bytes, m: Any) -> int | None:
    """Where the value of ``m`` (group 3) ends when it is the rest of its line: after a key named for a password
    and its ``:`` or ``=`` (``password: Eat the red apple``, ``DB_PASSWORD=Purple Monkey Dishwasher``), when words
    follow its first word there and none of what follows reads as code (a bracket, an operator, a comment, or after
    `` = ``, a condition, ``password = pwd or ''``: ``_condition``) nor, after ``=`` alone, as a command's options: a
    shell's ``PGPASSWORD=… psql -h db`` sets a variable for that command, whose value ends at the first blank, as an
    option's does (a program that reads the variable or a path needs no option: ``PGPASSWORD=… psql``, ``_RUN_WITH``;
    nor a variable a container's ``-e``/``--env`` sets: ``docker run -e PW=… postgres``) (``mysql --password=… db``: a key whose name starts with a dash and ``=``). The line ends at a line break, a quote or either as JSON text escapes it (``\\n``, ``\\"``, also escaped again),
    however far on (``_rest_of_line``), or at the single quote that closes a string the key is in
    (``_closing_quote``: ``'password: Eat the red apple' is what he said``), without the blanks before. None
    otherwise."""
    sep = data[m.end(1) : m.start(3)]
    if b":" not in sep and b"=" not in sep or _PASSWORD_KEY.search(m.group(1)) is None or m.group(3)[:1] == b"=":
        return None  # (``password == ''``, ``password := x`` compare and assign)
    name = _key_name(data, m)
    if sep == b"=" and name[:1] == b"-":  # a command's option, ``--password=…``: one word of the shell's
        return None
    if sep == b"=" and _ENV_OPTION.search(data, max(0, m.end(1) - len(name) - 8), m.end(1) - len(name)) is not None:
        return None  # a container's ``-e DB_PASSWORD=…``: one argument of the shell's too
    at = _joined(data, m.end(3))  # after the first word's punctuation inside it, the word's own (``aB3;dE5 …``)
    if _MORE_WORDS.match(data, at) is None:
        return None
    end, (code, word, option) = _rest_of_line(data, at, _closing_quote(data, m, at))
    if code >= at or sep == b"=" and (option >= at or _RUN_WITH.match(data, at) is not None):
        return None
    if word >= at and sep[:1] in (b" ", b"\t") and b"=" in sep and _condition(data, m, end):
        return None
    return end


# what a single quote that opens a string before a key word follows (``_closing_quote``): a blank, a bracket, a
# sign, a line's start (also as JSON text writes it); and the last single quote, line break or ``"`` before the key
_OPENS_AFTER = frozenset(b" \t([{=,:\n\r")
_QUOTE_OR_BREAK = re.compile(rb"['\"\r\n]|\\[nr]")
# the first single quote that closes a string after a value's first word (after a character of it, before a blank,
# punctuation or the line's end), or the line's end, a ``"`` or either as JSON text escapes it, whichever is first
_CLOSING_QUOTE = re.compile(rb"(?<=[^\s\\'])'(?=[\s.,;:!?)\]}|&<>+]|\Z|\\+[nr\"])|[\"\r\n]|\\+[nr\"]")


def _closing_quote(data: bytes, m: Any, at: int) -> int | None:
    """Where the single quote that closes the string a password's words are in is (``_line_end``), past ``at``: a
    single quote opened that string before the key (the last single quote, line break or ``"`` before it is a
    single quote after a blank, a bracket, a sign or the line's start: ``'password: …``, ``print('Your password:
    …``; not ``Bob's password: …``), and one closes it after a word's last character before the line ends
    (``rock'n'roll`` goes on). None otherwise. The first such quote or line end past a place is kept: the values of a
    line are asked in order."""
    quote, _ = _last_before(_QUOTE_OR_BREAK, data, m.start(1), COMMAND_REACH)
    if quote < 0 or data[quote] != 0x27 or data[quote + 1 : quote + 2].isspace():
        return None
    before = data[quote - 1 : quote] if quote else b"\n"
    if before[0] not in _OPENS_AFTER and not (before == b"n" and data[quote - 2 : quote - 1] == b"\\"):
        return None
    text, asked, found = _kept.closing
    if text is not data or asked > at or found is not None and found.start() < at:
        found = _CLOSING_QUOTE.search(data, at)
    _kept.closing = (data, at, found)
    return found.start() if found is not None and data[found.start()] == 0x27 else None


_OPERATORS = frozenset(b"if else or and not is in".split())  # the words between a condition's operands
_VALUE_LITERALS = frozenset(b"none null nil true false undefined".split())
_DOTTED = re.compile(rb"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")  # ``args.password``
_QUOTE_NEXT = re.compile(rb'[ \t]*\\*"')  # a quote (or its JSON escape) where a line's rest stops


def _condition(data: bytes, m: Any, end: int) -> bool:
    """True when the words from the value of ``m`` (group 3) to ``end`` are a condition as code writes one after
    `` = ``: operands with a word of ``_OPERATORS`` between each two (never two side by side: ``me and you
    forever`` is a passphrase), one of them code's own: a quoted string (also one the quote the line stops at
    opens, after an operator), a literal (``None``), a reference (``$pw``), a dotted or snake_case name, or the
    key's own name (``password or default``). ``pwd or ''`` is one; ``the and apple`` is none, its words a
    passphrase's."""
    words = data[m.start(3) : end].split()
    code = words[-1] in _OPERATORS and _QUOTE_NEXT.match(data, end) is not None
    key = _bare_name(_key_name(data, m))
    operand = False  # the word before was an operand
    for word in words:
        if word in _OPERATORS:
            operand = False
            continue
        if operand:
            return False
        operand = True
        code = code or (word[:1] in (b"'", b"$") or word.lower() in _VALUE_LITERALS or b"_" in word
                        or _DOTTED.fullmatch(word) is not None or _bare_name(word) == key)  # fmt: skip
    return code


_ENV_OPTION = re.compile(rb"(?:^|[ \t])(?:-e|--env)[ \t=]\Z")  # a container's option that sets a variable (``_line_end``)
# a program a shell's variable is set for (``_line_end``), the word after the value: one that reads a password from
# the environment (``PGPASSWORD=… psql``, ``MYSQL_PWD=… mysqldump``, ``SSHPASS=… sshpass``), or a path to one
# (``./run.sh``, ``/usr/bin/psql``)
_RUN_WITH = re.compile(
    rb"[ \t]+(?:(?:psql|pg_[a-z]+|pgbench|createdb|dropdb|createuser|dropuser|vacuumdb|reindexdb|clusterdb|mysql"
    rb"|mysqldump|mysqladmin|mariadb(?:-dump|-admin)?|redis-cli|sshpass)|\.{0,2}/[\w.-][^\s\"'\\]*)(?=[ \t]|\Z|[\r\n\"]|\\+[nr\"])"
)
# what ``_line_end`` looks for in the rest of a line: code, a condition's word, a command's option
_LINE_MARKS = (_CODE_AFTER, _CODE_WORDS, re.compile(rb"[ \t]--?[A-Za-z]"))


def _rest_of_line(data: bytes, at: int, stop: int | None = None) -> tuple[int, tuple[int, ...]]:
    """Where the line ``at`` is in ends (``_LINE_REST``), without the blanks before, and where the last match of each
    of ``_LINE_MARKS`` starts in it (-1: none): the rest of the line from ``at`` holds one when it starts at ``at``
    or later. The line is scanned once for all the values on it (the last line's answer is kept): each value of a
    line of many (``password: a b`` again and again) scanning the rest of it took time growing as the square of
    the line. ``stop``: where the line ends at the latest (``_closing_quote``)."""
    last = _kept.line
    if last[0] is data and last[1] <= at <= last[2] and last[4] == stop:
        return last[2], last[3]
    end = _LINE_REST.match(data, at, len(data) if stop is None else stop).end()  # type: ignore[union-attr]  # (the
    stripped = len(data[at:end].rstrip(b" \t")) + at  # empty string matches)
    marks = tuple(max((found.start() for found in mark.finditer(data, at, end)), default=-1) for mark in _LINE_MARKS)
    _kept.line = (data, at, stripped, marks, stop)
    return stripped, marks


def _prose_after(data: bytes, m: Any) -> bool:
    """True when the value after a key word starts words of prose to the end of its line: a key word itself
    (``token: token expired``), or a word, capitalised or not, that words follow among which one no secret is made
    of (``Token: Enter the token you were given.``; not ``secret: Correct horse battery staple``). After a key
    named for a password such words are the password (``_line_end``)."""
    value, rest = m.group(3), _PROSE_LINE.match(data, m.end(3))
    if rest is None:
        return False
    if _SECRET_KEY.fullmatch(value.decode(errors="replace")) is not None:
        return True
    return _PROSE_START.fullmatch(value) is not None and not _FUNCTION_WORDS.isdisjoint(rest.group().split())


def _pgpass_line(data: bytes, m: Any) -> bool:
    """True when a ``.pgpass``-shaped match ends its line's fifth field: no sixth field follows."""
    return data[m.end(1) : m.end(1) + 1] != b":"


def _docker_value(data: bytes, m: Any) -> bool:
    """True when the value of a Dockerfile's ``ENV`` for a secret's name is one: no reference and no setting."""
    value = m.group(3)
    return not _placeholder(value) and not _setting(value.decode(errors="replace"))


# the patterns whose value a quote may open (``_quoted_end``; ``_PAIR``'s also past punctuation: ``_pair_end``), those
# of them that take a command's word as a shell reads it (``_shell_end``), and those whose value ``echo`` gives
# (``_echoed_end``)
_ECHOES = (_STDIN_PASSWORD, _STDIN_AGAIN, _CHPASSWD, _CHPASSWD_AGAIN, _SUBSTITUTED)
_QUOTED = (_FTP_USER, _SQL_PASSWORD, _NAMED_VALUE, _ADD_KEY, _LOGIN_CALL, _DEFAULTED)
_SHELL_WORDS = (
    _OPTION, *_CLI_PASSWORDS, _KEYGEN, _ADMIN_PASSWORD, _HERE_STRING, _BEARER, *_POSITIONAL_PASSWORDS, _HASHED,
    _FISH_SET,
)


@_remembered
def _secret_key(key: Any) -> bool:
    """True when ``key`` of a JSON object names a secret (``password``, ``api_key``, ``x-auth-token``, ``DB_PASS``,
    ``auth``): ``_PAIR`` would take the value after it quoted."""
    return type(key) is str and _SECRET_KEY.search(key) is not None and not _no_password(key)


def _secret_number(key: Any, value: Any) -> bool:
    """True when ``value``, under ``key`` of a JSON object, is a secret of digits written as a number
    (``{"password": 12345678}``, ``{"api_key": 20240607}``): ``_digit_secret``'s rule, four digits or more under a
    key named for a secret that is no count's (``{"max_tokens": 4096}``, ``{"max_token": 4096}`` stay)."""
    return type(value) is int and value >= 1000 and type(key) is str and _number_key(key)


def _option_value(data: bytes, m: Any) -> bool:
    """True when what follows an option named for a secret is one: no other option, no help text's placeholder
    (``--token TOKEN``, ``--api-key API_KEY``, ``--password <password>``) or word of prose about the option, no
    source of openssl's (``-password env:PW``; ``pass:…`` is ``_CLI_PASSWORDS``'), and, as
    after a key word, no code (``_secret_value``), but a word that reads like a class's name is given, not code."""
    value = m.group(3)
    if m.group(2) is not None:  # quoted: judged whole, to its closing quote (``"MY pass phrase"`` is no ``TOKEN``)
        value = data[m.start(3) : _quoted_end(data, m, 3, shell=True)]
    elif (glued := _glued(data, m.start(3))) is not None:  # a quoted piece glued in: judged whole too
        value = data[m.start(3) : glued]
    elif (words := _code_span_words(data, m)) is not None:
        return words
    elif len(value) < ENV_MIN_NAMED:  # unquoted, a shorter one is as likely code (``_secret_value``)
        return False
    if value[:1] == b"-" or value.isupper() and value.replace(b"_", b"").isalpha() or value.lower() in _OPTION_WORDS:
        return False
    if value.startswith(_PASS_SOURCES):  # openssl's ``-password pass:…`` (``_CLI_PASSWORDS`` take what follows)
        return False
    return bool(_CLASS_NAME.fullmatch(value.rstrip(b".:!?`"))) or _secret_value(data, m)


def _sql_password(data: bytes, m: Any) -> bool:
    """True when the quoted value after ``PASSWORD`` or ``IDENTIFIED BY`` is one: all of it, to its closing quote,
    of any length, and no placeholder (``'$PASS'``, ``'<password>'``) nor a file a search tool is given
    (``grep password 'config.yml'``, ``_search_argument``)."""
    value = data[m.start(2) : _quoted_end(data, m, 2)]
    return bool(value) and _literal_secret(value) and not _search_argument(data, m.start(1))


# a setter's call, its name and bracket, just before its first argument (``props.setProperty(``, ``put(``,
# ``setdefault(``, ``add(``, a browser test's ``page.fill(``): the quoted name it is given (a field's ``#password``
# too) is given the value after it (``_named_value``)
_SETTER = re.compile(
    rb"(?:^|[^\w$])(?:set(?:[A-Z_]\w*|default|env)?|put(?:[A-Z_]\w*|env)?|add(?:[A-Z_]\w*)?|append|fill|type)[ \t]*\([ \t]*\Z"
)


def _named_value(data: bytes, m: Any) -> bool:
    """True when a quoted value given to a quoted name for a secret is one: assigned to it, or, after a comma, given
    with a constant's name (``define('DB_PASSWORD', …)``) or to a setter (``props.setProperty("password", …)``,
    ``_SETTER``; ``s.replace("token", …)`` is code) and no other
    constant's (a list of names: ``["API_KEY", "DB_PASSWORD"]``), all of it to its closing quote whatever its
    length, no placeholder or setting, and digits only under a name that counts nothing (``_digit_secret``)."""
    value = data[m.start(5) : _quoted_end(data, m, 5)]
    named = m.group(2).isupper() or _SETTER.search(data, max(0, m.start() - 48), m.start()) is not None
    if m.group(3).endswith(b",") and (not named or _CONSTANT.fullmatch(value)):
        return False
    if value.isdigit():
        return _digit_secret(m.group(2), value)
    return bool(value) and _literal_secret(value) and not _lexer_word(m.group(2), value)


def _login_value(data: bytes, m: Any) -> bool:
    """True when the password a login call takes after its user (``_LOGIN_CALL``) is one: all of it, to its closing
    quote, from three characters, and no placeholder (``"$PW"``) or setting."""
    value = data[m.start(2) : _quoted_end(data, m, 2)]
    return len(value) >= SHORTEST and _literal_secret(value)  # (no key word names it: ``SHORTEST``)


def _go_end(data: bytes, m: Any, group: int) -> int:
    """Where the string Go's ``var`` gives (``_GO_VAR``) ends: a raw string's at its backquote on the line, else as a
    quoted value's (``_quoted_end``)."""
    if m.group(2) == b"`":
        close = _close(data, b"`", m.end(group), literal=True)
        return m.end(group) if close is None else close
    return _quoted_end(data, m, group)


def _go_value(data: bytes, m: Any) -> bool:
    """True when the string Go's ``var`` gives a name for a secret is one: all of it, whatever its length, no
    placeholder or setting, and no lexer's word under ``token`` (``_lexer_word``)."""
    value = data[m.start(3) : _go_end(data, m, 3)]
    return bool(value) and _literal_secret(value) and not _lexer_word(m.group(1), value)


_FISH_QUERIES = frozenset(b"e q S n erase query show names".split())  # ``set``'s options that assign nothing


def _fish_value(data: bytes, m: Any) -> bool:
    """True when fish's ``set`` gives a variable named for a secret its value: it is exported (``-x``, ``-gx``,
    ``--export``) or named in upper case (``set PASSWORD …``; ``set password hunter2`` may be prose), no option of
    it only erases, queries or lists (``set -e PASSWORD``), and the value is no reference, setting, number or path
    (``_docker_value``)."""
    if m.group(1) is None:  # ``setx``, ``setenv``: the environment's
        return not _placeholder(m.group(4)) and not _setting(m.group(4).decode(errors="replace"))
    options = m.group(1).split()
    if any(option.lstrip(b"-") in _FISH_QUERIES or option[1:2] != b"-" and set(option[1:]) & set(b"eqSn")
           for option in options):  # fmt: skip
        return False
    exported = any(option == b"--export" or option[1:2] != b"-" and b"x" in option for option in options)
    value = m.group(4)
    if value[:1] == b"-":  # an option of a command whose word ``set`` is (``gh secret set NAME --body …``)
        return False
    return (exported or m.group(2).isupper()) and not _placeholder(value) and not _setting(value.decode(errors="replace"))


def _xml_text(data: bytes, m: Any) -> bool:
    """True when the text of an element named for a secret is one: the tag after it closes that element, and it is
    no placeholder, setting or colour (``${env.DB_PASSWORD}``), of any length, or, all digits, under a name
    that counts nothing (``_digit_secret``: ``<max_token>4096</max_token>`` stays); under an element named ``token``
    alone, not letters and blanks only nor a ``_lexer_word`` (a lexer's or a language tool's ``<token>return</token>``,
    ``<token>STRING_LITERAL</token>``)."""
    name, value = m.group(1), m.group(2).strip()  # a CDATA section's blanks
    if not data.startswith(name + b">", m.end()) or _no_password(name.rpartition(b":")[2].decode(errors="replace")):
        return False
    tag = name.rpartition(b":")[2]
    if tag.lower() == b"token" and (value.replace(b" ", b"").isalpha() or _lexer_word(tag, value)):
        return False
    if value.isdigit():
        return _digit_secret(name, value)
    return bool(value) and _literal_secret(value)


def _root_home(data: bytes, m: Any) -> bool:
    """True when ``/root`` (group 1) is root's home, not a URL's user after its scheme (``mysql://root@host``)."""
    return not data.endswith((b":/", b":\\/"), 0, m.start(1))


def _cli_value(data: bytes, m: Any) -> bool:
    """True when the password a command takes on its line is one, not a reference (``$PASS``, ``${TOKEN}``)."""
    return not _placeholder(m.group(1))


def _default_value(data: bytes, m: Any) -> bool:
    """True when the default a parameter's expansion gives a secret (``_DEFAULTED``) is one: of any length,
    no reference, number, path or setting word (``${API_KEY:-none}``, ``${PASSWORD:-/run/pw}``)."""
    value = data[m.start(1) : _quoted_end(data, m, 1)]
    return bool(value) and not _placeholder(value) and not _setting(value.decode(errors="replace"))


def _positional_value(data: bytes, m: Any) -> bool:
    """True when the argument in the place of a password (``_POSITIONAL_PASSWORDS``) is one: no reference, no switch
    or redirection (``net use … /persistent:no``, ``smbclient //h/s -N``, ``smbclient //h/s <cmds``: no password
    given), no option's value (``bw unlock --passwordenv BW_PW``), and, when it is a word of letters as a sentence
    has them (``to``, ``When``), where the command ends or an option follows (``_AFTER_POSITIONAL``): ``smbclient
    //srv/share to list the files`` and ``run bw unlock When asked`` are prose. A quoted value, or a word with a
    capital past its first letter, a digit or a symbol, is one wherever it stands."""
    value = m.group(1)
    if _placeholder(value) or data.startswith(_POSITIONAL[m.group(0)[:2].lower()], m.start(1)):  # (``2>``)
        return False
    if _BW_VALUE.search(data, max(0, m.start(1) - 24), m.start(1)) is not None:
        return False
    quoted = data[m.start(1) - 1] in b"\"'"
    return quoted or not _SENTENCE_WORD.fullmatch(value) or _AFTER_POSITIONAL.match(data, m.end(1)) is not None


def _grouped(data: bytes, m: Any) -> bool:
    """True when an ``echo`` after the first of a group (``_STDIN_AGAIN``, ``_CHPASSWD_AGAIN``) gives a password: the
    group is piped whole into that pattern's reader (``(echo A; echo B; echo C) | passwd``), and the value is no
    reference."""
    return _piped_group(data, m.end(), _GROUP_INTO[m.re]) and _cli_value(data, m)


def _piped_group(data: bytes, at: int, into: Any) -> bool:
    """True when the commands from ``at`` on end a group whose closing bracket ``into`` matches (with the pipe after
    it, into a reader). The last answer is kept, with where the group's rest was read from and to: each ``echo`` of
    a group of many reading on to its end took time growing as the square of their number."""
    last = _kept.group
    if last[0] is data and last[1] is into and last[2] <= at <= last[3]:
        return last[4]
    stop = _GROUP_REST.match(data, at).end()  # type: ignore[union-attr]  # it matches the empty string
    found = into.match(data, stop) is not None
    _kept.group = (data, into, at, stop, found)
    return found


def _keygen_value(data: bytes, m: Any) -> bool:
    """True when a one-letter option's value is a secret (``_LETTER_SECRETS``): a command that takes it so is the one
    the option is given to (named at most ``COMMAND_REACH`` bytes before it), and the value is no reference
    (``"$PASSPHRASE"``)."""
    letter = m.group(0).lstrip()[1:2]
    return any(
        letter in letters and _in_command(data, m.start(), tool, len(tool.pattern)) is not None
        for tool, letters in _LETTER_SECRETS.items()
    ) and _cli_value(data, m)


def _hashed_value(data: bytes, m: Any) -> bool:
    """True when the argument of ``openssl passwd`` or ``mkpasswd`` after their options is a password: no option
    (``-stdin``: it comes on standard input) and no reference."""
    return m.group(1)[:1] != b"-" and _cli_value(data, m)


def _printf_arguments(data: bytes, m: Any) -> list[tuple[int, int]]:
    """The arguments of a ``printf`` (``_PRINTF``) that fill a conversion its format gives a key named for a secret
    (``printf "user=%s\\npassword=%s\\n" bob PW``: ``PW``), or that follow the argument a key's conversion takes
    when that names a secret (``printf '%s=%s\\n' DB_PASSWORD PW``: ``PW``); the format is used again for more
    arguments, as printf does, so ``printf "password=%s\\n" A B`` gives both; as spans of the text, but a reference
    (``"$PW"``). Each ``*`` of a conversion's width or precision takes the argument before the one it writes
    (``%*s``: ``5 PW``)."""
    form = m.group(1) if m.group(1) is not None else m.group(2)
    found = [c for c in _CONVERSION.finditer(form) if c.group() != b"%%"]
    taken = list(accumulate(1 + c.group().count(b"*") for c in found))  # the arguments used up to each conversion
    writes = {c.start(): n - 1 for c, n in zip(found, taken, strict=True)}  # the argument each conversion writes
    secret = {writes[pair.start(3)] for pair in _PAIR.finditer(form) if pair.start(3) in writes}
    # a conversion a sign joins to the next (``%s=%s``, ``%s: "%s"``): the argument the next writes is the value of
    # a key the first's names, when that names a secret
    keyed = {taken[i + 1] - 1: taken[i] - 1 for i in range(len(found) - 1)
             if _FORMAT_SIGN.fullmatch(form, found[i].end(), found[i + 1].start())}  # fmt: skip
    if not secret and not keyed:
        return []
    spans, cycle = [], []  # the arguments of the format's current use
    for i, argument in enumerate(_PRINTF_ARGUMENT.finditer(data, m.start(3), m.end(3))):
        value, at = 2 if argument.group(1) is not None else 3, i % taken[-1]
        cycle = cycle[:at] + [argument.group(value)]
        named = at in keyed and _secret_key(cycle[keyed[at]].decode(errors="replace"))
        if (at in secret or named) and not _placeholder(argument.group(value)):
            spans.append((argument.start(value), argument.end(value)))
    return spans


# what comes before an HTTP header's name where it starts its line or a string (group 1, the quote that opens it):
# blanks, curl's ``>`` or ``<`` of ``-v`` (``_header_opening``)
_HEADER_BEFORE = re.compile(rb"(\\*[\"'`])?(?:[ \t]|\\+t)*(?:[<>][ \t]+)?\Z")
_HEADER_SIGN = re.compile(rb"[ \t]*:")
_BREAK = re.compile(rb"[\r\n]|\\+[nr]")  # a line break, itself or as JSON text escapes it
# the scheme word a credential follows, and the blanks after it; and a scheme word alone, empty quotes (as JSON text
# writes them too) or both (``Bearer ""``), which name no credential
_SCHEME_HEAD = re.compile(rb"(?i:" + _AUTH_SCHEME + rb")[ \t]+(?=[^\s])")
_SCHEME_ONLY = re.compile(rb"[ \t]*(?:(?i:" + _AUTH_SCHEME + rb")[ \t]*)?(?:(" + _QUOTE + rb")\1[ \t]*)?")
# code's sign after the header's name, an index's close before it or not, and a name of code (``_assigned_name``)
_ASSIGNED = re.compile(rb"(?:\\*[\"']\])?[ \t]*=[ \t]*")
_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_PROSE_VALUE = re.compile(rb"[A-Za-z][a-z]*(?:[ \t]+[a-z]+)+[.!?]?")  # words of prose (``_prose``)
_SCHEME_QUOTE = re.compile(rb"\b(?i:" + _AUTH_SCHEME + rb")[ \t]+(" + _QUOTE + rb")\Z")  # (``_scheme_quote``)


def _header_opening(data: bytes, m: Any) -> bytes | None:
    """How the Authorization header of ``m`` (``_AUTHORIZATION``) is written when it is an HTTP header's text, its
    name then ``:`` (or an environment variable's, ``_env_header``): the quote (as written: ``"``, ``\\"``, ``'``) that opens the string it starts (curl's ``-H
    "Authorization: …"``, a JSON string's ``"Authorization: …"``), or b"" when it starts its line (blanks or
    ``curl -v``'s ``>`` before it). None elsewhere: an object's key, code's name, a word of a comment or of prose."""
    if _HEADER_SIGN.match(data, m.end(1)) is None and not _env_header(data, m):
        return None
    at = m.end(1) - len(_key_name(data, m))  # (``Proxy-Authorization``, ``X-Authorization``)
    lo = _line_start(data, at)
    before = _HEADER_BEFORE.search(data, max(lo, at - 32), at)
    if before is None or before.group(1) is None and before.start() > lo:
        return None
    return before.group(1) or b""


def _header_end(data: bytes, m: Any, opening: bytes) -> int:
    """Where an HTTP header's value that starts at group 3 of ``m`` ends: at the close of the quote ``opening``
    opened, where one did (``_close``), and at its line's end at the latest, a line break or, in JSON text, the
    quote that ends the string its line is in (``_string_end``), without the blanks and a ``,`` or ``;`` before."""
    start = m.start(3)
    found = _BREAK.search(data, start)
    stop = len(data) if found is None else found.start()
    close = _close(data, opening, start) if opening else None
    if close is not None:
        stop = min(stop, close)
    elif not opening and (escaped := data.rfind(b"\\n", max(0, start - COMMAND_REACH), start)) > data.rfind(
        b"\n", max(0, start - COMMAND_REACH), start
    ):  # its line begun at a line break JSON text escapes: a quote with fewer backslashes ends the string
        run = escaped
        while run > 0 and data[run - 1] == 0x5C:
            run -= 1
        quote = _string_end(data, start, stop, escaped + 1 - run)
        stop = stop if quote < 0 else quote
    return start + len(data[start:stop].rstrip(b" \t,;"))  # (``Authorization: token,``: an object's line)


def _env_header(data: bytes, m: Any) -> bool:
    """True when the Authorization header of ``m`` is an environment variable's, ``=`` after its upper-case name
    (``AUTHORIZATION=…``, CGI's ``HTTP_AUTHORIZATION=…``)."""
    return data[m.end(1) : m.end(1) + 1] == b"=" and _key_name(data, m).isupper()


def _scheme_quote(data: bytes, m: Any) -> bytes | None:
    """The quote, as written (``"``, ``\\"`` …), that opens an Authorization header's credential after its scheme
    word (``Bearer "ab"``), if one does."""
    quoted = _SCHEME_QUOTE.search(data, m.end(1), _credential_start(data, m))
    return None if quoted is None else quoted.group(1)


_EMPTY_QUOTES = re.compile(rb"(" + _QUOTE + rb")\1")  # (``_credential_start``)


def _credential_start(data: bytes, m: Any, group: int = 3) -> int:
    """Where an Authorization header's credential starts (``_AUTHORIZATION``, its ``group`` 3): where the group does,
    but past a scheme word and its blanks the group starts with, which the pattern took for the credential where no
    character of one came next (``Bearer ""ab``, ``Bearer "\\""``): past empty quotes glued before the credential
    then, else past the quote that opens it (``_scheme_quote`` finds it, ``_authorization_end`` its close)."""
    start = m.start(group)
    head = _SCHEME_HEAD.match(data, start)
    if head is None:
        return start
    at = head.end()
    while (empty := _EMPTY_QUOTES.match(data, at)) is not None:
        at = empty.end()
    opens = _QUOTE_AT.match(data, at) if at == head.end() else None
    return at if opens is None else opens.end()


def _authorization_end(data: bytes, m: Any, group: int) -> int:
    """Where an Authorization header's credentials end (``_AUTHORIZATION``, its ``group`` 3): a credential a quote
    after the scheme word opens at that quote's close (``Bearer "ab cd"``: the scheme and the quotes stay), a
    quoted value at its closing quote (``"Bearer ab"``, a template literal's backquote), a header's at its end
    (``_header_end``: every parameter of ``Digest username="bob", …, response="…"``), an environment variable's
    after a scheme at its line's end, a URL query's parameter's at the next parameter or the fragment
    (``?authorization=ab&x=1``: ``_query_end``); elsewhere as any quoted value after a key word (``_quoted_end``)."""
    if (query := _query_end(data, m)) is not None:
        return query
    quote = _scheme_quote(data, m)
    if quote is not None and (close := _close(data, quote, _credential_start(data, m, group))) is not None:
        return close
    if m.group(2) is not None:
        close = _close(data, m.group(2), m.start(group))
        return m.end(group) if close is None else _stripped_end(data, m.start(group), close)
    opening = _header_opening(data, m)
    if opening is None and _env_header(data, m) and m.start(group) > m.end(1) + 1:  # (``=Bearer …``)
        opening = b""
    return _quoted_end(data, m, group) if opening is None else _header_end(data, m, opening)


def _stripped_end(data: bytes, start: int, end: int) -> int:
    """``end``, the blanks before it (after ``start``) left out."""
    return start + len(data[start:end].rstrip(b" \t"))


def _credentials(value: bytes) -> bool:
    """True when ``value``, an Authorization header's value past its scheme word, is a credential: anything but
    nothing, a scheme word alone (``Bearer``), empty quotes or both (``Bearer ""``), a reference or a placeholder
    (``$TOKEN``, ``<token>``, ``{token}``, ``${{ secrets.X }}``) or a setting word (``none``), whatever its length
    (``ab``)."""
    return bool(value.strip()) and _SCHEME_ONLY.fullmatch(value) is None and _literal_secret(value.strip())


def _typed(data: bytes, m: Any) -> bool:
    """True when the unquoted value after ``authorization:`` is code's type, no header's value: an annotation with
    its default, a blank before its ``=`` (``authorization: str = Header(None)``), a type's name (``authorization: str``) or a generic's
    (``Optional[str]``)."""
    typed = _ANNOTATION.match(data, m.end(1), min(len(data), m.end(1) + ANNOTATION_MAX))
    if typed is not None and data[data.rfind(b"=", m.end(1), typed.end()) - 1] in b" \t":  # (no ``Zm9v=``)
        return True
    value = m.group(3)
    code = _CODE.match(value)
    return (
        value.lower() in _LITERALS
        or code is not None
        and bool(code.group(2))
        and _closed(data, m.start(3), code.group(2))
    )


def _authorization_value(data: bytes, m: Any) -> bool:
    """True when an Authorization header's value (``_AUTHORIZATION``) is its credentials (``_credentials``): after a
    scheme word or none, of any length, where a header is written (its name then ``:`` starting a line or a string:
    ``_header_opening``), quoted (``"Authorization": "ab"``) or as an environment variable's (``AUTHORIZATION=ab``),
    but a typed name's (``authorization: str``, ``_typed``) and, on a header's line with no scheme word, ordinary
    words (``Authorization: see below``, ``_prose``); elsewhere (a comment, code's object or argument) when
    it is no code: no variable code assigns (``authorization=auth_header``, ``_assigned_name``) and no other code
    (``_secret_value``). One a call's argument gives after the header's name (``setHeader(
    'Authorization', …)``) only when quoted: a bare word there is a variable."""
    quoted = m.start(2) >= 0
    if not quoted and b"," in data[m.end(1) : m.start(3)]:
        return False
    opening = _header_opening(data, m)
    header = quoted or _env_header(data, m) or opening is not None and not _typed(data, m)
    if not header:  # (a string with its prefix after an index, ``headers["Authorization"] = f"…"``: code's)
        return (
            not _assigned_name(data, m)
            and _STRING_PREFIX.match(data, m.start(3)) is None
            and _secret_value(data, m)
        )
    value = data[_credential_start(data, m) : _authorization_end(data, m, 3)]
    if (
        not quoted
        and opening is not None
        and _SCHEME_HEAD.search(data, m.end(1), m.start(3) + 1) is None
        and _prose(value)
    ):
        return False  # ``Authorization: see below``: words about the header, no credential
    return _credentials(value)


def _assigned_name(data: bytes, m: Any) -> bool:
    """True when code gives an Authorization header's value a variable (``authorization=auth_header``, ``headers[
    'Authorization'] = authHeader``), no secret: the header's name is code's, neither an environment variable's (upper
    case: ``_env_header``) nor a URL query's parameter (after ``?`` or ``&``); ``=`` follows it (an index's ``'] =``
    too); and the unquoted value is a name as code writes one, words of letters joined by ``_`` or in camelCase, with
    no digit (``_code_name``). A token's shape makes it a credential, which goes: a digit, letters of random case, a
    token's punctuation (``abc123def456``, ``x7Kq9Lm2Np4R``, ``Zm9v==``)."""
    name = _key_name(data, m)
    if name.isupper() or data[m.end(1) - len(name) - 1 : m.end(1) - len(name)] in (b"?", b"&"):
        return False
    value = m.group(3)
    return (
        _ASSIGNED.fullmatch(data, m.end(1), m.start(3)) is not None
        and _IDENTIFIER.fullmatch(value) is not None
        and _code_name(value)
    )


def _prose(value: bytes) -> bool:
    """True when a header's value is ordinary words, no credential (``see below``, ``See the docs.``): two words or
    more of letters, the first maybe capitalised and the last maybe ended by ``.``, ``!`` or ``?``, each of three
    letters or more or a word prose is made of (``is``, ``to``: ``_FUNCTION_WORDS``). A credential's shape is none:
    a digit, an upper-case letter inside a word, a token's punctuation, a word of one or two letters prose is not
    made of (``ab cd``: an unknown scheme and its credential)."""
    if _PROSE_VALUE.fullmatch(value) is None:
        return False
    return all(len(word) >= 3 or word in _FUNCTION_WORDS for word in value.rstrip(b".!?").lower().split())


def _bearer_value(data: bytes, m: Any) -> bool:
    """True when httpie's ``-a`` value is a bearer token: ``-A bearer`` (``--auth-type=bearer``) is given to the same
    command, before or after it, and the value is no reference (``$TOKEN``)."""
    return _BEARER_SCHEME.search(_command_around(data, m.start(), m.end())) is not None and _cli_value(data, m)


def _admin_value(data: bytes, m: Any) -> bool:
    """True when ``password …`` is the new password ``mysqladmin`` (or ``mariadb-admin``) sets: that command is the
    one the word is given to, and the value is no reference (``$NEW_PW``)."""
    return _in_command(data, m.start(), _ADMIN, ADMIN_MAX) is not None and _cli_value(data, m)


def _last_before(pattern: Any, data: bytes, at: int, reach: int) -> tuple[int, int]:
    """The span of the last match of ``pattern`` (one or two bytes long) wholly in the ``reach`` bytes before
    ``at``, (-1, -1) when none. The last answer is kept for each pattern: asked again further on in the same text (a
    pattern's matches are judged in order), only what lies between the two places is searched, so a line of many
    key words is searched once, not ``reach`` bytes back from each of them."""
    lo = max(0, at - reach)
    kept = _kept.before
    text, asked, start, end = kept.get(pattern, (b"", 0, -1, -1))
    if text is not data or asked > at:
        asked, start, end = lo, -1, -1
    for found in pattern.finditer(data, max(asked - 1, lo), at):  # (one of two bytes may have begun just before)
        start, end = found.span()
    kept[pattern] = (data, at, start, end)
    return (start, end) if start >= lo else (-1, -1)


def _command_start(data: bytes, at: int) -> int:
    """Where the command ``at`` is in starts: after the last command end before ``at`` (a line break, its JSON
    escape, a pipe, ``;``, ``&``), looked for at most ``COMMAND_REACH`` bytes back (``_last_before``: each byte of
    a line of many key words was searched some 170 times when each question searched all of its reach:
    ``bench/redact.py``)."""
    start, end = _last_before(_COMMAND_ENDS, data, at, COMMAND_REACH)
    return end if start >= 0 else max(0, at - COMMAND_REACH)


def _command(data: bytes, at: int) -> bytes:
    """The command ``at`` is in, up to ``at`` (``_command_start``)."""
    return data[_command_start(data, at) : at]


def _in_command(data: bytes, at: int, pattern: Any, longest: int) -> Any:
    """The first match of ``pattern`` (none longer than ``longest`` bytes) in the command ``at`` is in, before ``at``
    (``_command_start``); None when there is none. Asked again further on in the same command, or in its part in
    reach, the search goes on from where it stopped (less ``longest``: a match it may have cut), or, a match found
    still in reach, is not made again: each byte of a command is searched about once, however many questions."""
    start = _command_start(data, at)
    kept = _kept.in_command
    text, searched, found = kept.get(pattern, (b"", 0, None))
    if text is not data or searched > at or start >= searched or found is not None and found.start() < start:
        found = pattern.search(data, start, at)  # a new command, or its first match out of reach: from its start
    elif found is None or found.start() > searched - longest:  # (one starting before it may end past ``searched``)
        found = pattern.search(data, max(start, searched - longest), at) or found
    kept[pattern] = (data, at, found)
    return found


def _command_around(data: bytes, start: int, end: int) -> bytes:
    """The whole command that ``data[start:end]`` is in: ``_command`` before it, and after it up to the command's end
    (a line break, its JSON escape, a pipe, ``;``, ``&``), looked for at most ``COMMAND_REACH`` bytes on."""
    hi = min(len(data), end + COMMAND_REACH)
    stop = min((i for stop in _COMMAND_END if (i := data.find(stop, end, hi)) >= 0), default=hi)
    return _command(data, start) + data[start:stop]


def _search_argument(data: bytes, at: int) -> bool:
    """True when ``at`` is an argument of a search tool's command (grep, rg, ag, ack, git grep) outside any quote of
    its arguments: a key word there is the pattern looked for and the next argument a file, no value of it
    (``grep password 'config.yml'``, ``grep -rn password: config/``); in a quoted pattern it keeps its value
    (``grep "password: hunter2pw" app.log``)."""
    tool = _in_command(data, at, _SEARCH_TOOL, SEARCH_TOOL_MAX)
    if tool is None:
        return False
    text, after, counted, double, single = _kept.quotes_after
    if text is not data or not after <= tool.end() <= counted <= at:  # (else counted on from the last question's)
        after, counted, double, single = tool.end(), tool.end(), 0, 0
    # less what lies before the tool's name, which moved on (a tool's out of reach), more what lies past the count
    double += data.count(b'"', counted, at) - data.count(b'"', after, tool.end())
    single += data.count(b"'", counted, at) - data.count(b"'", after, tool.end())
    _kept.quotes_after = (data, tool.end(), at, double, single)
    return double % 2 == 0 and single % 2 == 0


def _netrc_entry(data: bytes, m: Any) -> bool:
    """True when the password of a netrc entry (``_NETRC``, group 2) is one: after a ``login``, ``account`` or
    ``port`` pair (group 1), whatever it is; with none, as on a line of its own (``_netrc_value``): prose's ``the
    default password is …`` or ``the machine account password in …`` is no ``default password …`` entry."""
    return bool(m.group(1)) or _netrc_value(data, m.group(2))


def _netrc_password(data: bytes, m: Any) -> bool:
    """True when ``password …`` is a line of its own (nothing but blanks after it) and a netrc file's
    (``_netrc_value``)."""
    return _NETRC_LINE_END.match(data, m.end(1)) is not None and _netrc_value(data, m.group(1))


def _netrc_value(data: bytes, value: bytes) -> bool:
    """True when the ``value`` after ``password`` is a netrc file's password, not prose (``password required``, an
    error's ``"password incorrect"``): it has a digit, a symbol or a capital letter, or the text is about a netrc
    file (``cat ~/.netrc``); an assignment's sign is none (``password = "…"``)."""
    if value[:1] in (b"=", b":"):
        return False
    return not _PROSE_WORD.fullmatch(value) or _about_netrc(data)


def _about_netrc(data: bytes) -> bool:
    """True when the text names a netrc file (``cat ~/.netrc``). The last text's answer is kept: each password line of
    prose in a text of many looking through the whole text took time growing as the square of their number."""
    if _kept.netrc[0] is not data:
        _kept.netrc = (data, _NETRC_NAME.search(data) is not None)
    return _kept.netrc[1]


def _closes(data: bytes, at: int, escapes: int) -> bool:
    """True when the quote character at ``at`` closes a value that a quote written with ``escapes`` backslashes
    opened (none in text, 1 in JSON text, 3 in JSON text of JSON text): the backslashes before it write that quote's
    and, before them, backslashes that stand for themselves, two for each, not one that escapes the quote within the
    value (``"a b\\"c"``, ``\\"a b\\\\\\"c\\"``)."""
    run = at
    while run > 0 and data[run - 1] == 0x5C:
        run -= 1
    return (at - run - escapes) % (2 * escapes + 2) == 0


def _quoted_end(data: bytes, m: Any, group: int, shell: bool = False) -> int:
    """``_quoted_end_of``, asked once for each match (a judge asks it, and then what ends the value)."""
    known = m.ends.get((group, shell))
    if known is None:
        known = m.ends[group, shell] = _quoted_end_of(data, m, group, shell)
    return known


_LEAD_AT = re.compile(_LEAD)
# line breaks after a quote, the value on a line after it; backslashes before a single quote (``_quoted_end_of``)
_BROKEN = re.compile(rb"(?:[ \t]*" + _NEWLINE + _INDENT + rb")+")
_BACKSLASHES = re.compile(rb"(\\+)'")


def _line_start(data: bytes, at: int) -> int:
    """Where the line that holds ``at`` starts (after a line break, ``\\n`` or ``\\r`` as an HTTP header's line has
    it, or a newline as JSON text writes it), looked for ``COMMAND_REACH`` bytes back at most: where the text starts
    (0) when no break comes before ``at``."""
    lo = max(0, at - COMMAND_REACH)
    escaped = data.rfind(b"\\n", lo, at)
    return max(data.rfind(b"\n", lo, at) + 1, data.rfind(b"\r", lo, at) + 1, escaped + 2 if escaped >= 0 else lo)


def _quoted_end_of(data: bytes, m: Any, group: int, shell: bool) -> int:
    """Where the value of ``m`` (its ``group``) ends: at the quote that closes it when a quote of the match opens it
    and the value stopped short of that quote (``psk="correct horse"``), the quote on the same line, however far
    on, past any that a backslash escapes within the value (``_close``; in a ``shell``'s single quotes none does);
    else, for a password of several words, at its line's end (``_line_end``); else where the group ends. The quote
    may open before what the value follows in its word: openssl's ``pass:`` (``-passin 'pass:two words'``), a user
    and its sign (``curl -u "bob:two words"``, ``smbclient -U 'bob%two words'``), or end its line, the value on the
    next (``password: "`` then ``  two words"``, as YAML may write it), or go on over the lines after it
    (``password: "ab`` then ``  cd"``: YAML's flow scalar, ``_flow_close``; a triple quote's to its close, however
    many lines on: ``_triple_close``). A value of backslashes alone in single quotes
    that nothing else closes on its line ends at the quote after them (``password: '\\'``: YAML, SQL and a shell
    read no escape there)."""
    start, end = m.start(group), m.end(group)
    head = data[m.start() : start]
    word = max(head.rfind(b'"'), head.rfind(b"'")) + 1  # after the last quote of the match before the value
    broken = 0 < word < len(head) and _BROKEN.fullmatch(head, word) is not None  # the value on the next line
    glued = head.endswith((b":", b"%", b",")) and not any(c in head[word:] for c in b" \t")
    opens = m.start() + word if 0 < word < len(head) and (broken or glued) else start
    if opens > m.start() and data[opens - 1] in b"\"'":
        escaped = opens - 1  # the quote with its backslashes (``\\"``, ``\\\\\\"``), as JSON text writes it
        while escaped > m.start() and data[escaped - 1] == 0x5C:
            escaped -= 1
        quote = data[escaped:opens]
        literal = shell and quote == b"'" and data[escaped - 1 : escaped] != b"$"
        lead = _LEAD_AT.match(data, start, end).end()  # type: ignore[union-attr]  # it matches the empty string
        close = _close(data, quote, start, literal) if lead > start else None
        if close is None or close >= lead:  # else the blanks or quotes it starts with close it (``password='' x``)
            close = _close(data, quote, end, literal)
        triple = data[escaped - 1 : escaped] in (b"'", b'"')  # a triple quote's (Python's, TOML's)
        if triple:  # closed by the same three quotes only, on its line or another
            close = _triple_close(data, quote, start)
        elif (
            group == 3 and (close is None or quote == b"'" and close >= end) and _yaml_sign(m, escaped, data)
        ):
            close = _flow_close(data, quote, end, _key_indent(data, m))  # (a single quote's ``''`` too)
        closes = lead > start and close is not None or broken
        if closes and data.count(quote, _line_start(data, escaped), escaped) % 2:
            return start  # it closes a quote its line opened before the key (``print("password: " + pw)``): no value
        level = (len(quote)).bit_length() - 1 if quote[-1:] == b'"' else None
        if triple:  # nothing is glued to it
            pass
        elif close is not None:  # on over the pieces a shell's word glues after it (``'a'"b c"``)
            return _glued_end(data, escaped, close + len(quote), close, level)[0]
        elif quote[:1] == b"\\" and quote[-1:] == b"'":  # ``\'``, a quote a backslash escapes (JSON text escapes
            glued, quoted = _glued_end(data, escaped, escaped, end, level)  # none): a character of the word
            if quoted:
                return glued
        if close is not None:
            return close
        if quote == b"'" and (backslashes := _BACKSLASHES.match(data, start)) is not None:
            return backslashes.end(1)  # ``'\\'``: backslashes, which escape nothing in single quotes
        if lead > start:  # a quote that blanks or quotes follow and that closes nothing opens no value
            return start
    line = _line_end(data, m) if group == 3 else None
    return end if line is None else line


def _triple_close(data: bytes, quote: bytes, at: int) -> int | None:
    """Where a string that ``quote`` (as written: ``"``, ``\\"``, ``'``) three times opened closes (Python's
    ``'''…'''``, TOML's multi-line string), from ``at`` on, on its line or any after: at the next three of them, the
    first not one a backslash escapes within the value (``_closes``); None when none comes."""
    triple = quote * 3
    while (close := data.find(triple, at)) >= 0:
        if _closes(data, close + len(quote) - 1, len(quote) - 1):
            return close
        at = close + 1
    return None


# bytes past a quote's first line its close is looked for in on the lines after (``_flow_close``)
FLOW_REACH = 16384


# the blanks before a key's name (group 1), a list item's ``- `` and a quote around the name aside (``_key_indent``)
_KEY_INDENT = re.compile(rb"(" + _INDENT + rb")(?:-[ \t]+)?(?:\\*[\"'])?\Z")


def _indent_width(blanks: bytes) -> int:
    """How many blanks ``blanks`` (``_INDENT``'s) is, a tab as JSON text escapes it (``\\t``) one."""
    return len(blanks.replace(b"\\", b""))


def _key_indent(data: bytes, m: Any) -> int:
    """How deep the key of ``m`` (group 1) is: the blanks just before its name, where its line starts or a JSON
    string does (``{"c": "  password: …``), a list item's ``- `` and a quote around the name aside."""
    at = m.end(1) - len(_key_name(data, m))
    blanks = _KEY_INDENT.search(data, max(0, at - 64), at)
    return 0 if blanks is None else _indent_width(blanks.group(1))


def _yaml_sign(m: Any, at: int, data: bytes) -> bool:
    """True when what comes between the key word of ``m`` (group 1) and ``at``, its value's quote, is a YAML
    mapping's sign (``: ``), no ``=``."""
    sign = data[m.end(1) : at]
    return b":" in sign and b"=" not in sign


def _flow_close(data: bytes, quote: bytes, at: int, indent: int) -> int | None:
    """Where a YAML flow scalar that ``quote`` (as written: ``"``, ``\\"`` …, or ``'``) opened after a key closes,
    from ``at`` on, on its line or a later one (``password: "ab`` then ``  cd"``), each line to it deeper than the key
    (``indent`` blanks: ``_key_indent``) or empty, within ``FLOW_REACH`` bytes: past a double quote a backslash
    escapes within the value (``_closes``), and in single quotes past ``''``, which writes a quote (a backslash
    escapes nothing there). None when a line no deeper (the next entry) comes first: nothing closes the value."""
    stop = min(len(data), at + FLOW_REACH)
    doubled = quote == b"'"
    while True:
        brk = _BREAK.search(data, at, stop)
        end = stop if brk is None else brk.start()
        while (close := data.find(quote, at, end)) >= 0:
            at = close + len(quote)
            if doubled and data[at : at + 1] == b"'":  # ``''``: a quote of the value
                at += 1
            elif doubled or _closes(data, at - 1, len(quote) - 1):
                return close
        if brk is None:
            return None
        at = _INDENTED.match(data, brk.end()).end()  # type: ignore[union-attr]  # it matches the empty string
        if _BREAK.match(data, at) is None and _indent_width(data[brk.end() : at]) <= indent:
            return None  # (an empty line, or ``\r\n``'s second half, is passed over)


def _close(data: bytes, quote: bytes, at: int, literal: bool = False) -> int | None:
    """Where the value that ``quote`` (as written: ``"``, ``\\"`` …) opened closes, from ``at`` on, on the same line,
    past a quote a backslash escapes within it (``_closes``), or, ``literal`` (a shell's single quotes, bash's
    ``$'…'`` aside), at the first; None when nothing closes it on its line."""
    # linear in all: no other value this quote opens lies before its close (that quote would close this one)
    while (close := data.find(quote, at)) >= 0 and data.find(b"\n", at, close) < 0 and data.find(b"\\n", at, close) < 0:
        at = close + len(quote)
        if literal or _closes(data, at - 1, len(quote) - 1):
            return close
    return None


# a shell word's unquoted piece: no blank, quote, backquote or backslash (but one that escapes a character, a blank
# too), nor what ends a shell's word (``|;&()<>``), closes what the value is in (``,]}``) or opens code's index
# (``os.environ["KEY"]``, ``{``) (``_glued_end``); and a quote, its backslashes apart (JSON text's, or a shell's
# that make it a character of the word)
_UNQUOTED_PIECE = re.compile(rb"(?:[^\s\"'`\\|;&()<>,\[\]{}]|\\+[^\s\"'\\nrt]|\\+[ \t])+")
_QUOTE_RUN = re.compile(rb"(\\*)([\"'])")


# a double quote and the backslashes that write it (``_json_level``)
_DOUBLE_QUOTE_RUN = re.compile(rb'(\\*)"')


def _json_level(data: bytes, at: int) -> int:
    """How many times JSON text wrote the text at ``at``, as its line tells (``_line_start``): the level of an
    escaped break it starts at (``\\n`` once, ``\\\\n`` twice …), and one more for each level whose quote (``"``,
    ``\\"``, ``\\\\\\"`` …) the line holds an odd number of before ``at``; at least 1 in a JSON string
    (``_in_json_string``, for a line begun further back than the line looked at). A string of JSON text in JSON text
    (``"\\"password='ab'\\""``) is so read as twice written, not as a text whose ``\\"`` a backslash escapes."""
    lo, level = _line_start(data, at), 0
    if lo >= 2 and data[lo - 2 : lo] == b"\\n":
        run = lo - 1
        while run > 0 and data[run - 1] == 0x5C:
            run -= 1
        level = (lo - 1 - run).bit_length()
    runs = Counter(len(q.group(1)) for q in _DOUBLE_QUOTE_RUN.finditer(data, lo, at))
    while runs[(1 << level) - 1] % 2:
        level += 1
    return max(level, int(_in_json_string(data, at)))


def _glued_end(data: bytes, word: int, at: int, end: int, level: int | None = None) -> tuple[int, bool]:
    """Where a shell word that starts at ``word`` ends, its pieces read up to ``at`` and its value so far ending at
    ``end``: past the pieces glued after them, quoted and unquoted (``password='a'"b c"``, ``'it'\\''s pw'``,
    ``ab'c d'``), to the last one's closing quote (or its last character); and whether a quoted piece was read.
    ``level``: how many times JSON text wrote the word (0: as it is; None: as ``_json_level`` tells, asked only
    when a quote comes), which says how a quote of the shell's is written (``"``, ``\\"``, ``\\\\\\"``): one with
    fewer backslashes ends the JSON string, one with more, as a single quote after any, is a character of the word.
    A quote glued on that the line (to ``word``) holds an odd number of closes one opened before the word
    (``'password="ab"' + x``), and one that closes nowhere on its line ends the word; after a quoted piece,
    punctuation (``'ab'.strip()``, ``'ab':``) does too."""
    quoted, lo = False, -1
    while True:
        piece = _UNQUOTED_PIECE.match(data, at)
        if piece is not None and not (at > word and data[at - 1] in b"\"'" and data[at] in b".:!?/"):
            at = end = piece.end()
        if (quote := _QUOTE_RUN.match(data, at)) is None:
            return end, quoted
        if level is None:
            level = _json_level(data, word)
        run, char = len(quote.group(1)), quote.group(2)
        if run and (char == b"'" or run >= 1 << level):  # a quote a backslash escapes: the word's character
            at = end = quote.end()
            continue
        if lo < 0:
            lo = _line_start(data, word)
        written = quote.group()
        if char == b'"' and run < (1 << level) - 1 or data.count(written, lo, word) % 2:
            return end, quoted
        close = _close(data, written, quote.end(), char == b"'" and data[at - 1 : at] != b"$")
        if close is None:
            return end, quoted
        at, end, quoted = close + len(written), close, True


def _glued(data: bytes, start: int) -> int | None:
    """Where the unquoted value at ``start`` ends when a shell reads it as one word with a quoted piece glued in
    (``ab'c d'``, ``ab"c"'d'``, ``ab\\'c'd e'``: ``_glued_end``); None when no quoted piece is."""
    end, quoted = _glued_end(data, start, start, start)
    return end if quoted else None


_QUOTE_AT = re.compile(_QUOTE)
_WORD_ON = re.compile(rb"(?:" + _CLI_WORD + rb")?")  # the rest of a shell's word, if any


def _shell_end(data: bytes, m: Any, group: int) -> int:
    """Where a command's value (``m``'s ``group``) ends, as a shell reads its word (``_shell_word_end``), and past
    every quoted piece glued into an unquoted one (``ab'c d'"e f"``: ``_glued``)."""
    end, start = _shell_word_end(data, m, group), m.start(group)
    if end > start and data[start - 1] not in b"\"'" and (glued := _glued(data, start)) is not None:
        return max(end, glued)
    return end


def _shell_word_end(data: bytes, m: Any, group: int) -> int:
    """Where a command's value (``m``'s ``group``) ends, as a shell reads its word: a quote closes at its close
    (``_quoted_end``; a backslash escapes nothing in single quotes); a quote after the value that closes one the
    value opened (``echo a 'b c' | passwd``) is the value's, with the word's rest after it; and a quote that opens
    inside the unquoted word (its line holding an even number of that quote before the value) goes on with it: to
    its close on the line and the word's rest after that (``Hunter'2 pw'x`` and ``Hunter"2 pw"x`` are one word),
    or, a ``'`` closed nowhere on the line, over the apostrophe it is then and the word after it (``don't``). A bare
    ``"`` that closes nothing on its line is left where it is: in JSON text it ends the string (its line holds an
    odd number of ``"`` before it), whose shell quotes are ``\\"``; and so is one whose line begins at a ``\\n``
    of JSON text (a string's next line: no bare ``"`` is inside it) or further back than ``COMMAND_REACH`` (its
    quotes cannot be counted)."""
    start, end = m.start(group), _quoted_end(data, m, group, shell=True)
    if m.re is _OPTION and (span := _code_span_end(data, m)) is not None:  # (``--password `Abc def` ``)
        return max(end, span)
    quote = _QUOTE_AT.match(data, end)
    if quote is None or end == start or data[start - 1] in b"\"'":
        return end
    reach = max(0, end - COMMAND_REACH)  # the line's start, looked for so far back at most
    real, escaped = data.rfind(b"\n", reach, end), data.rfind(b"\\n", reach, end)
    if quote.group() == b'"' and (escaped > real or reach and real < 0):  # JSON text, or a line begun too far back:
        return end  # a bare ``"`` ends the JSON string the value is in, or cannot be told from its end
    lo = min(max(real + 1, escaped + 2, reach), start)
    if data.count(quote.group(), lo, start) % 2:  # it closes a quote the line opened before the value
        return end
    if data.count(quote.group(), start, end) % 2:  # it closes one the value opened: the word goes on after it
        return _WORD_ON.match(data, quote.end()).end()  # type: ignore[union-attr]  # it matches the empty string
    close = _close(data, quote.group(), quote.end(), quote.group() == b"'")
    if close is None and quote.group() != b"'":  # no apostrophe: a quote that closes nothing ends the word
        return end
    after = quote.end() if close is None else close + len(quote.group())
    return _WORD_ON.match(data, after).end()  # type: ignore[union-attr]  # it matches the empty string


_FD = re.compile(_MAYBE_QUOTE + rb"[ \t]+[0-9]{1,9}\Z")  # a redirection's file descriptor after a value (``_echoed_end``)


def _echoed_end(data: bytes, m: Any, group: int) -> int:
    """Where the value ``echo`` (or ``printf``) gives ends (``_quoted_end``), before a last word of digits that a
    ``<`` or ``>`` follows: the file descriptor that redirection is of, no word echoed (``echo PW 2>/dev/null |
    passwd``)."""
    start, end = m.start(group), _shell_end(data, m, group)
    if data[end : end + 1] not in (b"<", b">"):
        return end
    fd = _FD.search(data, max(start, end - 16), end)
    return end if fd is None else fd.start()


# an ``echo`` (``printf``) and its options that a line break as JSON text writes it begins (``_echoed_lines``);
# tried from the first backslash of a run only, not again from each of the run's (linear in a run of any length)
_NEXT_ECHO = re.compile(rb"(?<!\\)\\+n(?:echo|printf)(?:[ \t]+-[neE]+)*[ \t]+")


def _echoed_lines(data: bytes, start: int, end: int) -> list[tuple[int, int]]:
    """The parts of an echoed value (``data[start:end]``) that are passwords: all of it, but an unquoted ``\\n`` that
    an ``echo`` follows is a line break as JSON text writes it, with no indent after it (``(echo A\\necho B) |
    passwd``), where the value joined the shell's ``\\n`` of ``echo -e``: that ``echo`` and its options are the next
    command's and stay. A value a quote opens or holds keeps its ``\\n`` whole (``echo -e 'A\\necho B'``: the
    second line is a password)."""
    if data[start - 1 : start] in (b'"', b"'") or b'"' in data[start:end] or b"'" in data[start:end]:
        return [(start, end)]
    parts, at = [], start
    for echo in _NEXT_ECHO.finditer(data, start, end):
        parts.append((at, echo.start()))
        at = echo.end()
    parts.append((at, end))
    return [(a, b) for a, b in parts if b > a]


def _block_end(data: bytes, m: Any, group: int) -> int:
    """Where the YAML block scalar of ``m`` (``_YAML_BLOCK``) ends: at the end of its last line that is not blank,
    before the first line no deeper than its key, the text's end or, in JSON text, the quote that ends the string
    holding it (one escaped fewer times than its line breaks are). Each line is read once."""
    column, newline = len(m.group(1)), m.group(2)
    escapes = len(newline) - 1 if newline[:1] == b"\\" else 0  # backslashes before a quote of the block's text
    at, end = m.start(3), m.end(group)
    while True:
        stop = data.find(newline, at)
        stop = len(data) if stop < 0 else stop
        close = _string_end(data, at, stop, escapes) if escapes else -1
        line = data[at : stop if close < 0 else close].rstrip(b" \t\r")
        body = line.lstrip(b" \t")
        if body:
            if len(line) - len(body) <= column:
                return end
            end = at + len(line)
        if close >= 0 or stop == len(data):
            return end
        at = stop + len(newline)


def _heredoc_value(data: bytes, m: Any) -> bool:
    """True when a here-document's first ``user:password`` line (``_HEREDOC``) is chpasswd's: the document is given
    to it (``chpasswd <<EOF``) or ``cat`` pipes it there, and the password is no reference (``$PW``)."""
    into = not m.group(0).startswith(b"cat") or _INTO_CHPASSWD.match(m.group(2)) is not None
    return into and not _placeholder(m.group(4))


def _heredoc_end(data: bytes, m: Any, group: int) -> int:
    """Where the here-document of ``m`` (``_HEREDOC``) ends: at the end of its last line that is not blank, before
    the line that closes it (its delimiter, after blanks: ``<<-`` allows tabs), the text's end or, in JSON text, the
    quote that ends the string holding it (as ``_block_end`` finds it). A line that is no ``user:password`` (no
    ``:``), or that starts another here-document (``<<``), ends it too: no line is read for two documents, so a
    text of many takes time in step with its length. Each line is read once."""
    delimiter, newline = m.group(1), m.group(3)
    escapes = len(newline) - 1 if newline[:1] == b"\\" else 0
    at, end = m.start(group), m.end(group)
    while True:
        stop = data.find(newline, at)
        stop = len(data) if stop < 0 else stop
        close = _string_end(data, at, stop, escapes) if escapes else -1
        line = data[at : stop if close < 0 else close].rstrip(b" \t\r")
        text = line[_INDENTED.match(line).end() :]  # type: ignore[union-attr]  # it matches the empty string
        if at > end and text and (text == delimiter or b":" not in text or b"<<" in text):  # (not the first line)
            return end
        if text:
            end = at + len(line)
        if close >= 0 or stop == len(data):
            return end
        at = stop + len(newline)


def _string_end(data: bytes, start: int, stop: int, escapes: int) -> int:
    """The first quote between ``start`` and ``stop`` with fewer than ``escapes`` backslashes before it: the end of
    the JSON string whose text writes its own quotes with that many (-1: none)."""
    quote = data.find(b'"', start, stop)
    while quote >= 0:
        before = quote
        while before > start and data[before - 1] == 0x5C:
            before -= 1
        if quote - before < escapes:
            return quote
        quote = data.find(b'"', quote + 1, stop)
    return -1


def _yaml_block(data: bytes, m: Any) -> bool:
    """True when a YAML block scalar under a key named for a secret holds one: its first line is deeper than the
    key, and its text, of any length, is no placeholder (``${{ secrets.TOKEN }}``)."""
    if len(m.group(3)) <= len(m.group(1)):
        return False
    value = data[m.start(4) : _block_end(data, m, 4)]
    return bool(value) and not _placeholder(value)


# where a value starts, for the patterns whose replaced group may start past it (else at the group's start)
_STARTS: dict[Any, Callable[[bytes, Any, int], int]] = {_PAIR: _pair_start, _AUTHORIZATION: _credential_start}
# what ends the value of a pattern whose match may stop short of it (else its group's end)
_ENDS: dict[Any, Callable[[bytes, Any, int], int]] = {
    _PAIR: _pair_end, **dict.fromkeys(_QUOTED, _quoted_end), **dict.fromkeys(_SHELL_WORDS, _shell_end),
    **dict.fromkeys(_ECHOES, _echoed_end), _YAML_BLOCK: _block_end,
    _HEREDOC: _heredoc_end, _GO_VAR: _go_end, _AUTHORIZATION: _authorization_end,
}


def written_forms(values: list[str]) -> list[str]:
    """Each of ``values`` and, where they differ, the forms JSON text in a string writes it in (a tool call's
    arguments, a tool's JSON output): its quotes, backslashes and control characters escaped, and also every
    character past ASCII as a ``\\u`` escape (Python's ``json.dumps``); longest first."""
    forms = {form for v in values for form in (v, orjson.dumps(v)[1:-1].decode(), json.dumps(v)[1:-1])}
    return sorted(forms, key=len, reverse=True)


@lru_cache(maxsize=8)
def _search_set(patterns: tuple[bytes, ...]) -> Any:
    """The compiled ``re2.Set`` of ``patterns``, kept for the next redactor of the same home: compiling it took
    10-30 ms, each export pays it once and a process that exports many times (the TUI's ``X``, a test's thousands of
    exports) only at the first. Matching a set is thread-safe in RE2. No environment value is among ``patterns``
    (``Redactor`` searches for those on its own): a set kept here, and its key, would keep every secret of an
    environment alive after the last redactor that needed it."""
    which = re2.Set.SearchSet()
    for pattern in patterns:
        which.Add(pattern)
    which.Compile()
    return which


class _Found:
    """A match of one of the patterns (``Redactor._patterns``), its groups' spans read once: the RE2 module's match
    asks RE2 how many groups its pattern has at each ``start``, ``end`` and ``group``, which cost a text of many
    matches more than judging them (about a third of a line of 100,000 quoted values)."""

    __slots__ = ("re", "ends", "_data", "_spans")

    def __init__(self, m: Any, data: bytes) -> None:
        self.re, self._data = m.re, data
        self._spans = [m.span(group) for group in range(m.re.groups + 1)]
        self.ends: dict[tuple[int, bool], int] = {}  # ``_quoted_end``'s answers

    def start(self, group: int = 0) -> int:
        """Where ``group`` starts (-1: it took part in no match)."""
        return self._spans[group][0]

    def end(self, group: int = 0) -> int:
        """Where ``group`` ends (-1: it took part in no match)."""
        return self._spans[group][1]

    def group(self, group: int = 0) -> bytes | None:
        """The text ``group`` matched (None: it took part in no match)."""
        start, end = self._spans[group]
        return None if start < 0 else self._data[start:end]


_AT = {kind: i for i, kind in enumerate(KINDS)}  # each kind's place in ``KINDS`` (``Redactor._replacement``)


class _Mine(threading.local):
    """What one thread's calls of a ``Redactor`` keep from the other threads': what it counted (``tally``: its
    replacements, ``add`` and ``uncount``, in ``KINDS`` order), whether it counts into ``Redactor.counts`` now (not
    inside ``aside`` or ``again``) and where its walk notes each string it redacts (``walk(seen=...)``)."""

    def __init__(self) -> None:
        self.tally = [0] * len(KINDS)
        self.counting = True
        self.seen: Seen | None = None


class Redactor:
    """Replaces secrets in strings and counts the replacements by kind. One may serve several threads at once:
    ``counts`` takes every thread's replacements (under a lock), and what a call says it replaced (``walk_found``,
    ``aside``, ``pieces``, ``tally_since``) is its own thread's alone."""

    def __init__(self, environ: Mapping[str, str] | None = None, home: str | None = None) -> None:
        self.counts: Counter[str] = Counter({kind: 0 for kind in KINDS})  # every thread's, under ``_lock``
        self._lock = threading.Lock()
        self._mine = _Mine()
        secrets = written_forms(env_secrets(environ))
        home = os.path.expanduser("~") if home is None else home
        home = home.rstrip("/") if home and home.rstrip("/") not in ("", "/") else None
        # each pattern's kind, the group that is replaced, and what says whether a match is one (None: every one)
        self._patterns: list[tuple[str, Any, int, Callable[[bytes, Any], bool] | None]] = [
            ("key", _KEYS, 0, None), ("key", _SIGNED_URL, 1, None), ("key", _CREDENTIAL, 1, _credential), ("key", _PAIR, 3, _secret_value),
            ("key", _AUTHORIZATION, 3, _authorization_value), ("key", _OPTION, 3, _option_value), ("key", _NETRC, 2, _netrc_entry),
            ("key", _NETRC_LINE, 1, _netrc_password), *(("key", p, 1, _cli_value) for p in _CLI_PASSWORDS),
            *(("key", p, 1, _positional_value) for p in _POSITIONAL_PASSWORDS),
            ("key", _COOKIE, 2, None), ("key", _CRYPT, 0, None), ("key", _HASH_LINE, 1, None),
            ("key", _KEYGEN, 1, _keygen_value), ("key", _ADMIN_PASSWORD, 1, _admin_value),
            ("key", _SUBSTITUTED, 1, _cli_value), ("key", _DEFAULTED, 1, _default_value),
            ("key", _STDIN_PASSWORD, 1, _cli_value), ("key", _STDIN_AGAIN, 1, _grouped), ("key", _CHPASSWD, 1, _cli_value),
            ("key", _CHPASSWD_AGAIN, 1, _grouped),
            ("key", _HERE_STRING, 1, _cli_value), ("key", _HEREDOC, 4, _heredoc_value), ("key", _FTP_USER, 1, _cli_value),
            ("key", _BEARER, 1, _bearer_value),
            ("key", _HASHED, 1, _hashed_value), ("key", _PRINTF, 3, None),
            ("key", _SQL_PASSWORD, 2, _sql_password),
            ("key", _PGPASS, 1, _pgpass_line), ("key", _DOCKER_ENV, 3, _docker_value), ("key", _NAMED_VALUE, 5, _named_value), ("key", _XML_TEXT, 2, _xml_text),
            ("key", _ADD_KEY, 5, _named_value), ("key", _GO_VAR, 3, _go_value), ("key", _FISH_SET, 4, _fish_value),
            ("key", _LOGIN_CALL, 2, _login_value),
            ("key", _XML_CDATA, 2, _xml_text),
            ("key", _YAML_BLOCK, 4, _yaml_block),
            ("email", _EMAIL, 0, None), ("home", _HOME, 0, None), ("home", _ROOT, 1, _root_home),
        ]  # fmt: skip
        if home is not None:  # a whole directory where a path starts: ``/root`` never the start of ``/rootfs``
            whole = r"\b" if re.match(r"\w", home[-1], re.ASCII) else ""
            own = re2.compile(_PATH_START + (re.escape(home) + whole + ")").encode())
            self._patterns.append(("home", own, 1, None))
        # one scan says which of the patterns a string holds anything of (most hold nothing): only those are run;
        # the environment's values, last, are searched for apart (``_search_set`` keeps no secret)
        self._which = _search_set(tuple(pattern.pattern for _, pattern, _, _ in self._patterns))
        self._env: tuple[list[int], Any] | None = None  # the env pattern's place among them, and its search
        if secrets:
            env = re2.compile("|".join(map(re.escape, secrets)).encode())
            self._env = [len(self._patterns)], env._regexp.Match
            self._patterns.append(("env", env, 0, None))
        # and one scan of a value's JSON whether any of its strings may (the literals as JSON writes them)
        literals = [re.escape(orjson.dumps(v)[1:-1]) for v in [*secrets, *([home] if home else [])]]
        screen = re2.compile(b"|".join([_SCREEN, *literals]))._regexp
        # Asked once per event: the compiled RE2 is called as it is, not through the module's ``search``, whose
        # generator and offset checks cost as much as the scan of a short event's JSON (about 3.7 -> 1.5 us a
        # call). A ``re2.Set`` would be as quick but, unlike a regex, answers "no match" when its DFA runs out
        # of memory, which a screen must never do.
        self._screen = screen.Match
        self._unanchored = screen.Anchor.UNANCHORED
        # the same screen of an event's line as read, which also stops at a ``\u`` or ``\/`` escape: a string
        # without them is written there as ``orjson`` writes it (``clean_line``)
        self._line_screen = re2.compile(b"|".join([_SCREEN, *literals, rb"\\[u/]"]))._regexp.Match

    def text(self, text: str, name: bool = False) -> str:
        """``text`` with every secret replaced by ``[redacted <kind>]`` (a home directory by ``~``); a ``name`` (a
        dict's key) keeps a word an environment secret holds (``_spans``)."""
        return self._text(text, name)[0]

    def _text(self, text: str, name: bool = False) -> tuple[str, bool]:
        """``text`` redacted, and whether it held anything a pattern kept (``_spans``), replaced or not."""
        spans, held = self._spans(text, name)
        if not spans:
            return text, held
        out: list[str] = []
        done = 0
        for start, end, kinds in spans:
            out.append(text[done:start])
            out.append(self._replacement(text[start:end], kinds, _userinfo(text, start, end)))
            done = end
        out.append(text[done:])
        return "".join(out), held

    def pieces(self, texts: list[str]) -> tuple[list[str], list[Counts | None]]:
        """``texts`` redacted as the one text they make joined (a model stream's deltas, each shown on its own: a
        secret one delta cuts goes from both), each replacement in the piece its match starts in, and what each
        piece's replacements are, counted nowhere."""
        joined = "".join(texts)
        spans, _ = self._spans(joined)
        if not spans:
            return texts, [None] * len(texts)
        out: list[str] = []
        found: list[Counts | None] = []
        i, start = 0, 0
        for text in texts:
            end, at, parts = start + len(text), start, []
            before = self.tally()
            while i < len(spans) and spans[i][0] < end:
                s_start, s_end, kinds = spans[i]
                if s_start >= at:  # it starts here (else the piece before showed it)
                    parts += (joined[at:s_start], self._replacement(
                        joined[s_start:s_end], kinds, _userinfo(joined, s_start, s_end)
                    ))  # fmt: skip
                at = max(at, min(s_end, end))
                if s_end > end:  # it goes on into the next piece
                    break
                i += 1
            parts.append(joined[at:end])
            out.append("".join(parts))
            found.append(self.take_back(before))
            start = end
        return out, found

    def _spans(self, text: str, name: bool = False) -> tuple[list[tuple[int, int, set[str]]], bool]:
        """Where ``text`` holds something to replace, in order, as code point offsets, and what kinds it is; and
        whether it held anything a pattern kept, before what a ``name`` or a replacement made already keeps (the
        names its judges were asked about are remembered only when it held nothing: ``_settle``). In a ``name`` an
        environment secret that is a word (``message``, ``_WORD``) is none: a key is named so.

        Every kind is matched on the original text and overlapping matches are merged into one span, so a secret
        inside another (an environment value that is also part of a key) goes whole. The patterns run on the
        text's UTF-8 bytes, encoded once (they match whole code points, so each span is one of the text's)."""
        if len(text) < 5:
            return [], False
        data = text.encode()
        which = self._which.Match(data)
        if self._env is not None and self._env[1](self._unanchored, data, 0, len(data))[0][0] >= 0:
            which = [*(which or ()), *self._env[0]]
        if which is None:
            return [], False
        held = True  # (until the patterns say otherwise)
        try:
            spans = self._matched(data, which)
            held = bool(spans)
        finally:
            _kept.forget()
            _settle(held)
        if name:
            spans = [span for span in spans if span[2] != "env" or not readable(data[span[0] : span[1]].decode())]
        if b"[redacted" in data or b"%5Bredacted" in data:  # what an export replaced already (an export of one, a
            # log quoting one) stays, also a URL's password replaced (the match is the URL's, from its scheme)
            marks = [(r.start(), r.end()) for r in _REDACTED.finditer(data)]
            spans = [span for span in spans if not _replaced_already(data, span[0], span[1], marks)]
        if not spans:
            return [], held
        if len(data) != len(text):  # not ASCII: byte offsets to code point offsets
            spans = _code_points(data, spans)
        spans.sort()
        merged: list[tuple[int, int, set[str]]] = []
        start, end, kinds = spans[0][0], spans[0][1], {spans[0][2]}
        for s_start, s_end, kind in [*spans[1:], (len(text) + 1, 0, "")]:
            if s_start < end:  # overlaps the open span: one replacement
                end = max(end, s_end)
                kinds.add(kind)
                continue
            merged.append((start, end, kinds))
            start, end, kinds = s_start, s_end, {kind}
        return merged, held

    def _matched(self, data: bytes, which: Any) -> list[tuple[int, int, str]]:
        """The spans of ``data`` the patterns ``which`` names match and their judges keep, by kind, in no order."""
        spans: list[tuple[int, int, str]] = []
        patterns = self._patterns
        for i in sorted(which):
            kind, pattern, group, keep = patterns[i]
            begin, end, echoed = _STARTS.get(pattern), _ENDS.get(pattern), pattern in _ECHOES
            at: int | None = 0
            while at is not None:
                matches, at = pattern.finditer(data, at), None
                for found in matches:
                    m = _Found(found, data)
                    if pattern is _PAIR:  # the other literals of its value's expression
                        spans.extend((a, b, kind) for a, b in _literals(data, m))
                    if m.end(group) > m.start(group) and (keep is None or keep(data, m)):
                        start = m.start(group) if begin is None else begin(data, m, group)
                        stop = m.end(group) if end is None else end(data, m, group)
                        if echoed:  # its lines, without an ``echo`` a line break JSON text writes begins
                            spans.extend((a, b, kind) for a, b in _echoed_lines(data, start, stop))
                        elif pattern is _PRINTF:  # the arguments its format gives a secret's key
                            spans.extend((a, b, kind) for a, b in _printf_arguments(data, m))
                        else:
                            spans.append((start, stop, kind))
                            if pattern is _PAIR and (line := _LINE_BREAK_AT.match(data, stop)) is not None:
                                at = line.end()  # (``_LINE_BREAK_AT``)
                                break
                    elif pattern is _PAIR and _BREAK.search(data, m.end(1), m.start(group)) is not None:
                        at = m.start(group)  # no value on the line after a quote (it closed one, ``"password: "``):
                        break  # that line is read again for its own keys (``token = "…"``), which the match took
        return spans

    def _replacement(self, found: str, kinds: set[str], host: int | None = None) -> str:
        """What replaces one merged match (counted once, as its first kind in ``KINDS`` order). A URL's password,
        or what stands in a URL's user part (``host``: where its host starts in ``found``, ``_userinfo``), is
        replaced percent-encoded, ``%5Bredacted%20key%5D``, as a URL writes ``[`` and a blank there, and the URL's
        scheme, user and host stay: it still parses."""
        kind = next(k for k in KINDS if k in kinds)
        self._count(_AT[kind], 1)
        if kind == "home":  # a home directory alone: the rest of its path stays readable
            return "~"
        head = ""
        if kind == "key" and (url := _URL_HEAD.match(found)) is not None:  # keep ``postgres://user:`` and ``@``
            head = url.group(0) if "@" not in url.group(2) else url.group(1)
            at = found.rfind("@", url.end())  # and the host after it (an e-mail address read)
            host = at if at >= 0 else len(found)
        return f"[redacted {kind}]" if host is None else f"{head}%5Bredacted%20{kind}%5D{found[host:]}"

    def walk(self, value: Any, dump: bytes | None = None, seen: Seen | None = None) -> Any:
        """``value`` with every string value and key redacted (and a secret of digits, ``_secret_number``);
        other numbers, booleans and nulls unchanged, and the strings of ``WORDS`` (an event's or a block's type, a
        role). A dict or list with nothing to redact is returned as it is, anything else as a copy. ``dump``:
        ``value``'s JSON, when the caller has it; ``seen``: where to note each string redacted one by one (``aside``
        takes it)."""
        if (type(value) is dict or type(value) is list) and self._clean(value, dump):
            return value
        return self._walked(value, seen)

    def walk_found(self, value: Any, dump: bytes | None = None, seen: Seen | None = None) -> tuple[Any, Counts | None]:
        """``walk``, and what it replaced by kind in ``KINDS`` order (None: nothing), counted as ``walk`` counts it
        (a value the screen passes is given back without a tally)."""
        if (type(value) is dict or type(value) is list) and self._clean(value, dump):
            return value, None
        before = self.tally()
        return self._walked(value, seen), self.tally_since(before)

    def _walked(self, value: Any, seen: Seen | None) -> Any:
        """``walk`` below its first screen."""
        mine = self._mine
        outer, mine.seen = mine.seen, seen
        try:
            return self._walk(value)
        finally:
            mine.seen = outer
            _settle(True)  # (nothing is left to settle, but when the walk was cut short: forgotten)

    def _walk(self, value: Any) -> Any:
        """``walk`` below its first screen: a long list is screened a slice at a time, the rest walked."""
        kind = type(value)
        if kind is str:
            return self.text(value) if self._mine.seen is None else self._noted(value, self.text)
        if kind is dict:
            walk, keyed, key = self._walk, self._keyed, self._key
            pairs = []
            append, pending = pairs.append, _pending.answers  # (this thread's, the same dict from settle to settle)
            for k, v in value.items():
                name, held = key(k)
                if type(v) is str and v in WORDS:
                    append((name, v))
                    continue
                secret = type(v) is str and _secret_key(k)
                number = not secret and _secret_number(k, v)
                if pending:  # what was asked about the key anew: remembered when it held nothing
                    _settle(held)
                append((name, keyed(k, v) if secret else self._whole_key(str(v)) if number else walk(v)))
            out = dict(pairs)
            return out if len(out) == len(pairs) else _apart(pairs)
        if kind is list or kind is tuple:
            if set(map(type, value)) <= SCALARS:  # a list of seqs: nothing to redact (checked in C)
                return list(value)
            walk = self._walk
            if len(value) <= LIST_SLICE:
                return [walk(v) for v in value]
            out: list[Any] = []
            for i in range(0, len(value), LIST_SLICE):
                part = value[i : i + LIST_SLICE]
                out.extend(part if self._clean(part) else map(walk, part))
            return out
        if isinstance(value, str):  # a str subclass
            return self.text(value)
        return value

    def _key(self, key: Any) -> tuple[Any, bool]:
        """A dict's key redacted as text (a damaged or forged log can make an e-mail address, a key or a home one;
        two keys that become one are told apart, ``_apart``), but as a name: an environment secret that is a word, as a
        log's own keys are (``message``, ``arguments``), stays in it; a walk that notes what it redacts notes that a
        key was, so that no copy is taken from its notes (``_from_seen``). And whether the key held anything a
        pattern kept, replaced or not (``_spans``)."""
        if type(key) is not str or key in WORDS:
            return key, False
        out, held = self._text(key, name=True)
        seen = self._mine.seen
        if out is not key and seen is not None:
            seen[NO_COPY] = (key, out, None)
        return out, held

    def _keyed(self, key: str, value: str) -> str:
        """``_walk`` of the string ``value`` under ``key``, a dict's key named for a secret (``_secret_key``): all of it
        goes when it is a secret as a quoted value after a key word is (``_literal_secret``, as long as ``_PAIR`` takes
        one, and no ``_lexer_word``), past its scheme word under an Authorization header's name (``_credentials``);
        an object's string is no text the text rules see as ``"password": "hunter2"``."""
        data = value.encode()
        if _AUTHORIZATION_NAME.search(key):  # a header's credentials, its scheme kept (``Bearer ab``)
            head = _SCHEME_HEAD.match(data)
            at = 0 if head is None else head.end()  # (ASCII: as many characters as bytes)
            if _credentials(data[at:]):
                return self._noted(value, lambda v: v[:at] + self._whole_key(v[at:]))
        elif value and _literal_secret(data) and not _lexer_word(key.encode(), data):
            return self._noted(value, self._whole_key)
        return self._walk(value)

    def _whole_key(self, value: str) -> str:
        """All of ``value`` replaced as a key."""
        return self._replacement(value, {"key"})

    def _noted(self, value: str, redact: Callable[[str], str]) -> str:
        """``redact(value)``, noted in the walk's ``seen`` when it has one."""
        seen = self._mine.seen
        if seen is None:
            return redact(value)
        before = self.tally()
        out = redact(value)
        noted = seen.get(id(value))
        if noted is not None and noted[0] is value and noted[1] != out:  # (``{"password": s, "note": s}``)
            seen[NO_COPY] = (value, out, None)
        seen[id(value)] = (value, out, None if out is value else self.tally_since(before))
        return out

    def _clean(self, value: Any, dump: bytes | None = None) -> bool:
        """True when no string in ``value`` can hold anything to redact (its JSON does not pass the screen)."""
        try:
            data = orjson.dumps(value) if dump is None else dump
            return self._screen(self._unanchored, data, 0, len(data))[0][0] < 0  # the whole match's span: (-1, -1)
        except TypeError:  # not JSON (a key that is no string, an integer too big): walked string by string
            return False

    def clean_line(self, line: bytes) -> bool:
        """True when no string of the JSON value read from ``line`` can hold anything to redact: the screen finds
        nothing there, nor any ``\\u`` or ``\\/`` escape (a string written so may hold what the screen finds only as
        ``orjson`` writes it: every other escape is the one ``orjson`` writes)."""
        return self._line_screen(self._unanchored, line, 0, len(line))[0][0] < 0

    def tally(self) -> tuple[int, ...]:
        """What this thread counted so far by kind, in ``KINDS`` order (its replacements, ``add`` and ``uncount``):
        two of them apart (``tally_since``) tell what its calls between replaced, whatever other threads did."""
        return tuple(self._mine.tally)

    def _count(self, at: int, n: int) -> None:
        """Count ``n`` more of the kind at ``at`` in ``KINDS``: in this thread's tally, and in ``counts`` unless the
        thread counts nothing now (``aside``, ``again``). One kind a call: it is asked for every replacement."""
        mine = self._mine
        mine.tally[at] += n
        if mine.counting:
            with self._lock:
                self.counts[KINDS[at]] += n

    def tally_since(self, before: tuple[int, ...]) -> tuple[int, ...] | None:
        """What was replaced since ``tally`` gave ``before`` (None: nothing)."""
        now = self.tally()
        return None if now == before else tuple(n - b for n, b in zip(now, before, strict=True))

    def take_back(self, before: tuple[int, ...]) -> tuple[int, ...] | None:
        """What was replaced since ``tally`` gave ``before`` (None: nothing), no longer counted (``uncount``)."""
        found = self.tally_since(before)
        if found is not None:
            self.uncount(found)
        return found

    def _count_all(self, found: tuple[int, ...], sign: int) -> None:
        """Count ``found`` (a ``tally_since``) once more (``sign`` 1) or once less (-1), every kind of it under one
        hold of the lock: a ``summary`` sees all of them counted or none."""
        mine = self._mine
        for at, n in enumerate(found):
            mine.tally[at] += sign * n
        if mine.counting:
            with self._lock:
                for at, n in enumerate(found):
                    if n:
                        self.counts[KINDS[at]] += sign * n

    def uncount(self, found: tuple[int, ...]) -> None:
        """Count ``found`` (a ``tally_since``) no more: its caller counts it where the export shows it."""
        self._count_all(found, -1)

    def add(self, found: tuple[int, ...]) -> None:
        """Count ``found`` (a ``tally_since``) again: what redacting the same value once more replaces."""
        self._count_all(found, 1)

    def aside(
        self, values: list[Any], dump: bytes | None = None, seen: Seen | None = None
    ) -> tuple[list[Any], tuple[int, ...] | None]:
        """``walk`` of each of ``values`` in turn, and what that replaced by kind in ``KINDS`` order (None:
        nothing), counted nowhere (``add`` counts it). When every string of ``values`` that redaction could
        change is one ``seen`` noted (the same object), each is taken from there and nothing is screened or
        walked. Else one screen of the list's JSON (``dump``, when the caller has it) clears them all at once (each
        item's JSON is a piece of it, so an item it passes holds nothing either); then ``values`` itself is given
        back."""
        if seen is not None and (known := _from_seen(values, seen)) is not None:
            return known
        if self._clean(values, dump):
            return values, None
        mine = self._mine
        outer = mine.tally, mine.counting
        mine.tally, mine.counting = [0] * len(KINDS), False  # (this thread's alone: the others count on)
        try:
            return [self.walk(value) for value in values], self.tally_since((0,) * len(KINDS))
        finally:
            mine.tally, mine.counting = outer

    def seen_clean(self, value: Any, seen: Seen) -> None:
        """Note in ``seen`` every string of ``value`` as redaction leaves it: as it is, replacing nothing. Only
        for a part of a value that ``walk`` gave back as it is (its JSON passed the screen, so none of its strings
        holds anything to redact)."""
        stack = [value]
        while stack:
            item = stack.pop()
            kind = type(item)
            if kind is str:
                seen[id(item)] = (item, item, None)
            elif kind is dict:
                stack.extend(item.values())
            elif kind is list:
                stack.extend(item)

    def again(self, value: Any) -> Any:
        """``walk`` of a value whose replacements were counted already (with ``add``): nothing is counted."""
        mine = self._mine
        outer = mine.tally, mine.counting
        mine.tally, mine.counting = list(mine.tally), False  # (this thread's alone: the others count on)
        try:
            return self.walk(value)
        finally:
            mine.tally, mine.counting = outer

    def summary(self) -> dict[str, int]:
        """Replacements so far by kind, every kind listed: every thread's, copied under the lock every count is made
        under (one kind a replacement, all of a call's at once: ``_count_all``), so one snapshot."""
        with self._lock:
            return {kind: self.counts[kind] for kind in KINDS}


def _apart(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """A dict of ``pairs`` whose keys are not all different (two keys redaction made one text): each key taken
    already is numbered, `` (2)``, `` (3)`` …, in the object's order, so that no value is lost. Each key's numbering
    goes on from the number its last copy took (every lower one is taken): many copies are numbered in linear time."""
    out: dict[Any, Any] = {}
    last: dict[Any, int] = {}
    for k, v in pairs:
        n = last.get(k, 1)
        name = k if n == 1 else f"{k} ({n})"
        while name in out:
            n += 1
            name = f"{k} ({n})"
        last[k] = n
        out[name] = v
    return out


class _Unseen(Exception):
    """A string that no walk noted: ``_from_seen`` cannot answer."""


def _from_seen(values: list[Any], seen: Seen) -> tuple[list[Any], tuple[int, ...] | None] | None:
    """What ``Redactor.aside(values)`` gives, each string taken from ``seen`` (None: a string redaction could
    change is not there)."""
    if NO_COPY in seen:  # ``_taken`` copies no key, and takes one string object one way
        return None
    try:
        clean = _unchanged(values, seen)
        if clean is not None:  # most nodes: every string noted as it is (a clean event's), so nothing is made anew
            return (values, None) if clean else None
        found = [0] * len(KINDS)
        out = [_taken(value, seen, found) for value in values]
    except _Unseen:
        return None
    finally:
        _settle(True)  # (the keys asked about here were the walk's: what it remembered of them, it remembered)
    return (out, tuple(found)) if any(found) else (values, None)


def _unchanged(value: Any, seen: Seen) -> bool | None:
    """True when every string of ``value`` that redaction could change is one ``seen`` noted as left as it is
    (what ``_taken`` would give back unchanged, counting nothing); False when one is not noted at all (``_taken``
    cannot answer); None when one was noted as redacted (``_taken`` is to make the copy). A stack, not recursion
    (see ``_taken``)."""
    stack = [value]
    push = stack.append
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            if not item or item in WORDS:  # what ``_walk`` gives back unnoted
                continue
            noted = seen.get(id(item))
            if noted is None or noted[0] is not item:
                return False
            if noted[1] is not item:
                return None
        elif kind is dict:
            for k, v in item.items():  # a loop, not a generator: most dicts here have a few items
                if type(v) is int and _secret_number(k, v):  # ``_walk`` replaces it, which no string noted
                    return False
                push(v)
        elif kind is list:
            stack.extend(item)
        elif kind not in SCALARS:
            return False
    return True


def _taken(value: Any, seen: Seen, found: list[int]) -> Any:
    """``value`` with each string as ``seen`` noted it, what that replaced added to ``found``. A function of the
    module, not a closure of ``_from_seen``: a closure that calls itself is a reference cycle, which would keep
    ``seen`` (every string of an event) alive until the collector runs, and a pass runs with it paused."""
    kind = type(value)
    if kind is str:
        if not value or value in WORDS:  # empty, or a word: ``_walk`` gives it back
            return value
        noted = seen.get(id(value))
        if noted is None or noted[0] is not value:
            raise _Unseen
        if noted[2] is not None:
            for i, n in enumerate(noted[2]):
                found[i] += n
        return noted[1]
    if kind is dict:
        if any(type(v) is int and _secret_number(k, v) for k, v in value.items()):  # as in ``_unchanged``
            raise _Unseen
        return {k: _taken(v, seen, found) for k, v in value.items()}
    if kind is list:
        return [_taken(v, seen, found) for v in value]
    if kind in SCALARS:
        return value
    raise _Unseen
