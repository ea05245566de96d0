"""Redaction: no planted secret survives whatever text surrounds it, and no number of the export changes.

``TAPEDECK_REDACT_CASES`` sets the Hypothesis cases of the export property (1,000 for the target run; 60 by
default to keep the suite quick): ``TAPEDECK_REDACT_CASES=1000 python -m pytest tests/export/test_redact.py``.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import string
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from core.export import redact
from core.export.build import ExportOptions
from core.export.redact import KINDS, TYPE_NAME, Redactor, Seen, env_secrets
from core.export.redact import WORDS as STRUCTURE_WORDS
from core.export.write import export
from core.log.vocabulary import KNOWN_TYPES, PACKED_ROW_TYPES, TAPEDECK_TYPES
from tests.export.planted import BASE, plant, with_arguments

CASES = int(os.environ.get("TAPEDECK_REDACT_CASES", "60"))
ALNUM = string.ascii_letters + string.digits


def _body(n: int, alphabet: str = ALNUM) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=n, max_size=n + 12)


KEYS = st.one_of(
    _body(32).map(lambda b: "sk-" + b),
    _body(24).map(lambda b: "sk-proj-" + b),
    _body(36).map(lambda b: "ghp_" + b),
    _body(30).map(lambda b: "github_pat_" + b),
    _body(24).map(lambda b: "xoxb-" + b),
    st.text(alphabet=string.ascii_uppercase + string.digits, min_size=16, max_size=16).map(lambda b: "AKIA" + b),
    _body(35).map(lambda b: "AIza" + b),
    st.tuples(_body(10), _body(12), _body(16)).map(lambda t: f"eyJ{t[0]}.{t[1]}.{t[2]}"),
    _body(24).map(lambda b: "sk_live_" + b),
    _body(32).map(lambda b: "ya29." + b), _body(26).map(lambda b: "hvs." + b), _body(20).map(lambda b: "glrt-" + b),
    st.text(alphabet="0123456789abcdef", min_size=64, max_size=64).map(lambda b: "dop_v1_" + b),
    st.text(alphabet="0123456789abcdef", min_size=32, max_size=32).map(lambda b: "shpat_" + b),
    _body(40).map(lambda b: "pypi-AgE" + b),
)
EMAILS = st.tuples(
    st.text(alphabet=ALNUM + "._+-", min_size=1, max_size=12).filter(lambda s: s[0] not in ".-"),
    st.text(alphabet=ALNUM, min_size=1, max_size=10),
    st.sampled_from(["com", "io", "org", "co.uk", "dev"]),
).map(lambda t: f"{t[0]}@{t[1]}.{t[2]}")
ENV_VALUES = st.text(alphabet=ALNUM + "-_./:=+", min_size=8, max_size=24).filter(
    lambda v: bool(env_secrets({"SECRET_VALUE": v}))
)
# a plain word or two as a password is (``MyPassword``, ``hunter2``), assigned to a variable named for a secret
# or written in a netrc entry
WORD_VALUES = st.from_regex(r"[A-Z][a-z]{2,8}[A-Z][a-z]{2,8}|[a-z]{4,10}[0-9]{1,3}", fullmatch=True).filter(
    lambda v: bool(env_secrets({"DB_PASSWORD": v}))
)
ASSIGNMENTS = st.tuples(
    st.sampled_from(["", "export ", "docker run -e ", "set "]),
    st.sampled_from(["DB_PASSWORD", "API_SECRET", "DB_PASS", "MYSQL_PWD", "REDIS_AUTH", "SMTP_PW", "GPG_PASSPHRASE",
                     "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "SSHPASS"]),  # fmt: skip
    st.sampled_from(["=", " = "]),
).map("".join) | st.sampled_from(
    ["docker login -u bob --password ", "gh auth login --with-token ", "--api-key ", "sshpass -p ", "mysql -uroot -p",
     "redis-cli -a ", "az login -u bob -p ", "aws configure set aws_secret_access_key ", "mongosh -u admin -p ",
     "sqlcmd -S db -U sa -P ", "keytool -list -storepass ", "openssl enc -d -pass pass:", "7z x -p",
     "htpasswd -b .htpasswd bob ", "rabbitmqctl add_user bob ", "net use Z: //srv/share /user:bob ",
     "docker login -u bob -p", "mariadb -uroot -p", "mysqladmin -u root -pOld1pw password ", "redis-cli --pass ",
     "openssl pkcs12 -export -password pass:", "openssl enc -d -k ", "sqlplus scott/", "rman target sys/",
     "net user bob ", "nmcli dev wifi connect Home password ", "wpa_passphrase Home ", "ls\nzip -e -P ",
     "unrar x -p", "lftp -u bob,", "twine upload -u bob -p ", "cf login -u bob -p ", "rabbitmqadmin -u bob -p ",
     "mosquitto_pub -u bob -P ", "ls\nbcp t out f -U sa -P ", "http -a bob:", "https --auth=bob:", "http -A bearer -a ", "openssl passwd -6 ",
     "mkpasswd -m sha-512 ", "mcli alias set --insecure s3 https://h ak ", "mc admin user add s3 ann ", "nuget push a.nupkg -ApiKey ",
     "Invoke-Sqlcmd -Username sa -Password ", "cqlsh -u cassandra -p ", "xfreerdp /u:bob /p:",
     "influx -username bob -password ", "ldappasswd -x -D cn=admin -W -s ",
     "smbclient //h/s ", "mc alias set s3 https://s3.example.com AKIAEXAMPLE ", "neo4j-admin set-initial-password ",
     "useradd -m -p "]
)
NETRC = st.sampled_from(["machine example.com login bob password ", "machine h.example.org\n  login ann\n  password ",
                         "default login anonymous password "])  # fmt: skip
B64 = string.ascii_letters + string.digits + "./"
# a password hash as an htpasswd or shadow line holds one: ``$apr1$``, bcrypt's ``$2y$``, ``$6$``, ``{SHA}``
HASHES = st.one_of(
    st.tuples(_body(1, B64), _body(22, B64)).map(lambda t: f"$apr1${t[0][:8]}${t[1][:22]}"),
    _body(53, B64).map(lambda b: "$2y$10$" + b[:53]),
    st.tuples(_body(4, B64), _body(86, B64)).map(lambda t: f"$6${t[0][:16]}${t[1][:86]}"),
    _body(27, ALNUM + "+/").map(lambda b: "{SHA}" + b[:27] + "="),
)
# a passphrase of several words, ordinary ones and those prose is made of (``Eat the red apple``), from a
# random word on (its first word may be a short or common one)
PASSPHRASES = st.tuples(
    st.lists(st.sampled_from(["Eat", "the", "red", "apple", "your", "Purple", "Monkey", "Dishwasher", "please", "it",
                              "is", "in", "No", "more"]), min_size=1, max_size=4),
    st.from_regex(r"[a-z]{5,9}[0-9]{2}", fullmatch=True),
).map(lambda t: " ".join([*t[0], t[1]]))
# a passphrase after `` = `` whose words are those a condition is made of (``me and you forever``), which reads
# as code only when it is one (``pwd or ''``)
CONDITIONS = st.tuples(
    st.lists(st.sampled_from(["me", "and", "you", "or", "not", "if", "else", "in", "is", "the"]), min_size=1,
             max_size=4),
    st.from_regex(r"[a-z]{5,9}[0-9]{2}", fullmatch=True),
).map(lambda t: " ".join([*t[0], t[1]]))
# a config file's line of its own, each with values of the kind it holds: a .pgpass line, a Dockerfile's ENV, a
# key of one word or several (camelCase or snake_case: a word that reads as a type's name, ``FooStr``, is one there); a password hash, a Wi-Fi psk, a key's passphrase (of two words, the first maybe short: the second
# is the one checked); an npm token; a short value under a secret's name; an XML element's text; a YAML block scalar
CONFIG = st.one_of(
    st.tuples(st.sampled_from(["db.internal:5432:app:app_user:{}", "*:*:*:postgres:{}", "ENV API_KEY {}",
                               "ENV API_KEY={}", "  apiKey: {}", "clientSecret: {}", "- DbPassword: {}",
                               "dbPass = {}", "curl -u bob:{} https://x", "Cookie: sid={}; theme=dark",
                               "client_secret: {}", "  db_password: {}", "aws_secret_access_key = {}",
                               "DB_PASSWORD: {}", "password: {}", "  secret: {}", "- passphrase: {}", "token: {}",
                               "password: |\n  {}\nuser: app", "db:\n  db_password: >-\n    {}\n  host: db",
                               "- token: |-  # rotated\n\n    {}", "PGPASSWORD={} psql -h db -U app mydb", "PGPASSWORD={} psql", "DB_PASSWORD={} ./run.sh app",
                               "mysql --password x9,{} db", "gh auth login --with-token ab]{}",
                               "DB_PASSWORD=x9){}", "password: ab;{}", "  api_key: ab,{}", "postgres://app:x@{}@db/app", "https://h.blob.core.windows.net/c?sv=1&sig=0123456789ab{}",
                               "define( 'DB_PASSWORD', '{}' );", "os.environ['API_KEY'] = '{}'",
                               "Server=db;Uid=sa;Pwd={};Database=app", '$db_pass = "{}";',
                               "SECRET_KEY_BASE={}", "net use \\\\srv\\share {} /user:bob",
                               "net use Z: \\\\srv\\share {} /persistent:no", "htpasswd -n -b bob {}",
                               "htpasswd -b -C 12 .htpasswd bob {}", "htpasswd -B -r 9 -b -c f bob {}",
                               "echo {} | docker login -u bob --password-stdin",
                               "printf '%s' {} | helm registry login r.io --password-stdin",
                               "echo 'bob:{}' | sudo chpasswd", "chpasswd <<< 'bob:{}'",
                               "sudo chpasswd <<EOF\nbob:{}\nEOF", "echo {} | sudo -S apt-get update",
                               "docker login -u bob --password-stdin <<< '{}'", 'echo -e "{0}\\n{0}" | passwd',
                               "(echo {0}; echo {0}) | sudo smbpasswd -a -s bob",
                               "(echo {0}\necho {0}) | passwd", "(echo {0}\\necho {0}) | passwd",
                               "sshpass -p '{}\\' ssh h 'ls'", "(echo x; echo {}'t) | passwd", "doctl auth init -t {}",
                               "bw unlock {}", "vault login s.{}", "echo {} | docker secret create db_pw -",
                               "ftp -n h <<EOF\nuser bob {}\nbye\nEOF", "printf '%s\\n' {0} {0} | passwd --stdin bob",
                               "echo {} | gpg --batch --passphrase-fd 0 -d f.gpg",
                               "password = os.getenv('P', '{}')", 'var password string = "{}"', ':password => "{}"',
                               "password = '''{}'''", '<add key="Password" value="{}"/>', "set -gx DB_PASSWORD {}",
                               "set -x PASSWORD {}", 'props.setProperty("password", "{}");', 'setx DB_PASSWORD "{}"',
                               "setenv DB_PASSWORD {}", 'let password: &str = "{}";', 'server.login("bob", "{}")',
                               "requests.get(u, auth=('bob', '{}'))", 'page.fill("#password", "{}")',
                               'password: "\n  {}"', "secret = '\n    {}'",
                               'Authorization: Bearer "{}"', "curl -H 'Proxy-Authorization: Basic \"{}\"' h"]),
              WORD_VALUES.filter(lambda v: not TYPE_NAME.fullmatch(v.encode()))),
    st.tuples(st.sampled_from(["bob:{}", "root:{}:19000:0:99999:7:::", "password_hash() gave {}"]), HASHES),
    st.tuples(st.sampled_from(["headers: {{ Authorization: `Bearer ${{x}}{}` }}", '"Authorization": "Bearer <token>{}"']),
              _body(16)),  # a credential glued after a reference or a placeholder
    st.tuples(st.sampled_from(['\tpsk="{}"', "ssh-keygen -t ed25519 -N '{}' -f k", 'ssh-keygen -p -P {} -N "x2pass"']),
              WORD_VALUES),
    st.tuples(st.sampled_from(['\tpsk="{}"', "ssh-keygen -N '{}' -f k", 'password = "{}"', "--password '{}'"]),
              WORD_VALUES | st.from_regex(r"[a-z]{1,2}", fullmatch=True),
              WORD_VALUES).map(lambda t: (t[0].format(t[1] + " {}"), t[2])),  # a quoted passphrase of two words
    st.tuples(st.sampled_from(["_auth={}", "_authToken={}", "//registry.npmjs.org/:_authToken={}"]), ENV_VALUES),
    st.tuples(st.sampled_from(["PASSWORD={}", "export DB_PASS={}", 'password = "{}"', "MYSQL_ROOT_PASSWORD: {}",
                               "ENV PASSWORD={}", "client_secret: {}", "- db_password: {}",
                               "aws_secret_access_key = {}", "password: {}", "  secret: {}", "- token: {}"]),
              st.from_regex(r"[a-z]{2,4}[0-9]", fullmatch=True)),
    st.tuples(st.sampled_from(["password: {}", "PGPASSWORD={}", "- db_password: {}", "  psk: {}", "passphrase = {}"]),
              st.from_regex(r"[0-9]{4,12}", fullmatch=True)),  # a password of digits
    st.tuples(st.sampled_from(["<password>{}</password>", "  <secret>{}</secret>", "<apiKey>{}</apiKey>",
                               '<db:password type="plain">{}</db:password>', "<clientSecret>\n  {}\n</clientSecret>",
                               "<password><![CDATA[{}]]></password>"]),
              WORD_VALUES),  # an XML element's text
).map(lambda t: (t[0].format(t[1]), t[1])) | st.tuples(
    st.sampled_from(["password: {}", "passphrase: {}", "DB_PASSWORD={}", "  db_password: {}", "psk = {}",
                     "- dbPass: {}", "Your new password: {}", "passphrase: >\n  {}", "print('password: {}') if ok"]),
    PASSPHRASES,
).map(lambda t: (t[0].format(t[1]), t[1].rsplit(" ", 1)[1])) | st.tuples(  # no word of it: its last is checked
    st.sampled_from(["password = {}", "DB_PASSWORD = {}", "passphrase = {}"]), CONDITIONS,
).map(lambda t: (t[0].format(t[1]), t[1].rsplit(" ", 1)[1]))
USERS = st.text(alphabet=string.ascii_lowercase + string.digits + "_-", min_size=1, max_size=10)
SURROUND = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=24)


def _numbers(value: Any, path: str = "") -> dict[str, Any]:
    """Every number, boolean and null of a JSON value by its path (and every container's size)."""
    if isinstance(value, dict):
        out = {f"{path}#len": len(value)}
        for k, v in value.items():
            out.update(_numbers(v, f"{path}/{k}"))
        return out
    if isinstance(value, list):
        out = {f"{path}#len": len(value)}
        for i, v in enumerate(value):
            out.update(_numbers(v, f"{path}/{i}"))
        return out
    return {} if isinstance(value, str) else {path: value}


def _strings(value: Any) -> list[str]:
    """Every string of a JSON value."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def _export(log: Path, fmt: str, redactor: Redactor | None) -> bytes:
    out = io.BytesIO()
    export(log, out, fmt, ExportOptions(redactor=redactor))
    return out.getvalue()


def _redacts(text: str, out: str, keys: int = 1) -> None:
    """``text`` redacts to ``out``, with ``keys`` secrets replaced and nothing else."""
    r = Redactor(environ={}, home="/home/ann")
    found = r.text(text)
    assert found == out and r.summary() == {**dict.fromkeys(KINDS, 0), "key": keys}, found


def _stays(text: str) -> None:
    """``text`` comes out of redaction as it is, with nothing counted."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0, r.text(text)


_BASELINES: dict[str, str] = {}


def _baseline(fmt: str) -> str:
    """The export of the fixture with nothing planted and no redaction."""
    if fmt not in _BASELINES:
        _BASELINES[fmt] = _export(BASE, fmt, None).decode()
    return _BASELINES[fmt]


@settings(max_examples=CASES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=KEYS, email=EMAILS, env=ENV_VALUES, user=USERS, assigned=st.tuples(ASSIGNMENTS, WORD_VALUES),
       netrc=st.tuples(NETRC, WORD_VALUES), config=st.lists(CONFIG, min_size=1, max_size=3),
       around=st.lists(SURROUND, min_size=10, max_size=10))  # fmt: skip
@example(key="sk-" + "a1B2" * 8, email="ann@example.com", env="k3y-v4lue-q9Z", user="ann",
         assigned=("DB_PASSWORD=", "MyPassword"), netrc=("machine example.com login bob password ", "hunter123"),
         config=[('password: "\n  Summer Rain7"', "Rain7"), ("secret = '\n    DeepPurple'", "DeepPurple"),
                 ('Authorization: Bearer "Zm9vYmFy99"', "Zm9vYmFy99")],
         around=[""] * 10)  # a value on the line after its opening quote; a quoted credential after a scheme word
def test_no_planted_secret_survives_and_no_number_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, email: str, env: str, user: str,
    assigned: tuple[str, str], netrc: tuple[str, str], config: list[tuple[str, str]], around: list[str],
) -> None:  # fmt: skip
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    home = f"/home/{user}"
    a = around
    values = [assigned[1], netrc[1], *(value for _, value in config)]
    # a surrounding text is no secret's place, nor its JSON escapes (a NUL's ``\u0000`` holds a password ``0000``)
    # nor the escapes of its repr, as a diagnostic quotes a forged surface op (``'\U000aa000'`` holds ``aa0``)
    assume(not any(value in form for value in values for text in around
                   for form in (text, orjson.dumps(text).decode(), repr(text))))  # fmt: skip
    # nor part of the name of the command a secret is given to ('n' before 'mcli alias set' makes nmcli's line)
    assume(not a[8][-1:].isascii() or not a[8][-1:].isalnum())
    # nor the planted log's own path, which the JSON export names ('4342' is in /tmp/pytest-of-root/pytest-4342/…)
    assume(not any(secret in str(tmp_path) for secret in (key, email, env, home, *values)))
    log = plant(
        tmp_path / "planted.jsonl",
        user=f"{a[0]}{key}{a[1]} {a[2]}{env}{a[3]}",
        result=f"{a[4]}{email}{a[5]}\n{a[6]}{home}/project/main.py{a[7]}\n{a[8]}{''.join(assigned)} {''.join(netrc)}{a[9]}"
               + "".join(f"\n{line}" for line, _ in config) + "\n",
        answer=f"done {a[1]}{key}",
        structure=f"{a[2]}{email} {key}{a[3]}",
    )
    environ = {"SECRET_VALUE": env}
    plain = orjson.loads(_export(log, "json", None))
    for fmt in ("json", "md", "html"):
        redacted = _export(log, fmt, Redactor(environ=environ, home="/nonexistent-home")).decode()
        for secret in (key, email, env, home, *values):
            # a value may also be part of the export's own words (an env value 'sistant/' in every
            # 'assistant/message'): those it may keep, nothing the log's text brought
            assert redacted.count(secret) <= _baseline(fmt).count(secret), f"{fmt}: {secret!r} survived"
        if fmt == "json":
            doc = orjson.loads(redacted)
            assert sum(doc.pop("redaction").values()) >= 4 and plain.pop("redaction", None) is None
            assert _numbers(doc) == _numbers(plain)


def test_redaction_keeps_structure_and_counts_by_kind() -> None:
    r = Redactor(environ={"TOKEN": "hunter2-value"}, home="/home/ann")
    value = {"a": ["mail ann@example.com", 42, 1.5, None, True], "b": "/home/ann/x and hunter2-value",
             "c": "Authorization: Bearer abcdefghijklmnop", "n": 7}  # fmt: skip
    out = r.walk(value)
    assert out == {"a": ["mail [redacted email]", 42, 1.5, None, True], "b": "~/x and [redacted env]",
                   "c": "Authorization: Bearer [redacted key]", "n": 7}  # fmt: skip
    assert r.summary() == {"key": 1, "env": 1, "email": 1, "home": 1}


def test_numbers_words_and_paths_in_the_environment_are_not_secrets() -> None:
    assert env_secrets({"A": "12345678", "B": "abcdefghij", "C": "/usr/bin:/bin", "D": "short", "E": "k3y-v4lue-x"}) == [
        "k3y-v4lue-x"
    ]


# what a developer's shell has: none of it a secret
HARMLESS_ENV = {
    "LANG": "C.UTF-8", "LC_ALL": "en_US.UTF-8", "TERM": "xterm-256color", "COLORTERM": "truecolor",
    "SHELL": "/bin/bash", "NODE_OPTIONS": "--max-old-space-size=4096", "LS_COLORS": "rs=0:di=01;34:ln=01;36:mh=00",
    "PYTHONIOENCODING": "utf-8", "VIRTUAL_ENV_PROMPT": "(.venv) ", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus",
    "TOKENIZERS_PARALLELISM": "false", "GIT_BRANCH": "feature_login", "AUTH_ENABLED": "enabled", "EDITOR": "nvim",
    "npm_config_user_agent": "npm/10.2.3 node/v20.10.0 linux x64 workspaces/false", "XDG_SESSION_TYPE": "wayland",
}  # fmt: skip
CODE = """import getpass, os
LANG=C.UTF-8 TERM=xterm-256color NODE_OPTIONS=--max-old-space-size=4096 python app.py  # feature_login
def connect(api_key: Optional[str] = None, *, token: TokenType = TokenType.BEARER) -> Client:
    token = self._next_token()
    access_token = response.json()["access_token"]
    password = getpass.getpass("Password: ")
    secret_key = os.environ["SECRET_KEY"]
    self.token = token_value
    login(password=args.password, api_key=api_key, secret=secret_value)
    if token == expected_token and password_hash == bcrypt.hash(password):
        return {"token": None, "password": password_hash}
const apiKey = process.env.API_KEY;  // the network-connection-timeout-handler, task-management-service-layer
interface Login { token: string; password: string | null; apiKey: unknown }  // password: required
def on_token(token: MessageType, password: SecretStr) -> None:  # see ``api_key=args.api_key``, ``token: TokenType``
    self.password = password  # the value of password=… or token: <token> or secret: ********
STYLE = {Token: "#d8dee9", Token.Comment: FG_DEFAULT}  # ``secret=secret_value``: a name
headers["Authorization"] = f"Bearer {token}"; auth = {"Authorization": "Bearer " + token}  # Authorization: required
env: { NPM_TOKEN: ${{ secrets.NPM_TOKEN }}, password: $DB_PASSWORD }
Basic authentication needs a basic understanding of encoding="utf-8" and wayland; it needs a token:

Unsafe values stay out of the repository, and so does the password:
   Handling is described below.
USE_AUTH=disabled ENABLE_AUTH=true GOOGLE_APPLICATION_CREDENTIALS=/etc/gcp/creds.json PASSWORD_MIN_LENGTH=12 TOKEN_TYPE=bearer
class Settings(BaseSettings): API_KEY: SecretStr; DB_PASSWORD: PostgresDsn  # SECRET_KEY = os.environ["SECRET_KEY"]
DB_PASSWORD = settings.DB_PASSWORD; AUTH_TOKEN = None; API_SECRET = get_secret("api")
psql: password authentication failed for user; the login form has a password field; a password is required
  --token TOKEN  --password <password>  --api-key API_KEY  --password-file ./pw  --no-token --verbose
the --password option is required; give --api-key argument values as ``--token $GH_TOKEN`` or --secret "$SECRET"
auth: oauth2  # auth = HTTPBasicAuth(user, pw); {"auth": {"type": "oauth2"}, "oauth": "enabled"}
mysql -u root -p mydb; ssh -p 2222 host; grep -a pattern; redis-cli -h cache ping; sshpass -f ~/.pw ssh host
url = f"{base}/login?token={token}&user={user}"; tpl = "password={password}"; run(f"deploy --api-key {api_key}")
DB_PASSWORD={DB_PASSWORD} and "Authorization: Bearer {token_value}" are templates
const body = { api_key: apiKey, client_secret: clientSecret, access_token: accessToken, password: password };
"""


def test_ordinary_code_and_harmless_environment_values_stay_readable(tmp_path: Path) -> None:
    """Code that names keys, tokens and passwords (calls, attributes, annotations, references, names holding the
    word, a format string's ``{token}``: it came out as ``token=[redacted key]}``, the key's own name in another
    case: ``{ api_key: apiKey }``), kebab-case words with ``sk-``/``rk-`` inside, prose after ``Basic`` or on the line after a key word, and
    a shell's own settings (``LANG=C.UTF-8``, ``TERM=xterm-256color``, options, a branch name) are no secrets: an
    export of a tool result holding them replaces nothing. They used to come out as ``[redacted key]`` and
    ``[redacted env]``."""
    r = Redactor(environ=HARMLESS_ENV, home="/home/ann")
    assert r.text(CODE) == CODE and sum(r.summary().values()) == 0
    log = plant(tmp_path / "s.jsonl", "run it", CODE, "done")
    for fmt in ("json", "md", "html"):
        redactor = Redactor(environ=HARMLESS_ENV, home="/home/ann")
        _export(log, fmt, redactor)
        assert redactor.summary() == {"key": 0, "env": 0, "email": 0, "home": 0}, fmt


SECRET_ENV = {
    "DB_PASSWORD": "hunter2", "SERVICE_TOKEN": "letmeinplease", "HOSTNAME": "7f3a9c2b1d4e",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "STRIPE_API_KEY": "correct-horse-battery",
    "PGPASSWORD": "postgres-pw", "MYSQL_PWD": "mysqlpass",
}  # fmt: skip


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("password=hunter2pw", "hunter2pw"), ('password = "s3cr3t-pw"', "s3cr3t-pw"), ("PASSWORD=supersecret", "supersecret"),
        ("(password=mypassword1)", "mypassword1"), ("GET /api?token=abc123xyz789&x=1", "abc123xyz789"),
        ('{\\"password\\": \\"hunter2pw\\"}', "hunter2pw"), ("api_key: a9f8e7d6c5b4a3f2", "a9f8e7d6c5b4a3f2"),
        ("Authorization: Bearer abcdefghijklmnop", "abcdefghijklmnop"), ("Bearer eyJhbGciOiJIUzI1NiJ9xyz", "eyJhbGciOiJIUzI1NiJ9xyz"),
        ('-H "Authorization: Basic dXNlcjpwYXNz"', "dXNlcjpwYXNz"), ("x sk-proj-Zq81xVb2LmN0pQr5StUv7WxYz", "Zq81xVb2LmN0pQr5StUv7WxYz"),
        ("tasksk-" + "a1B2" * 8, "a1B2" * 8), ("login with hunter2 now", "hunter2"), ("the value letmeinplease", "letmeinplease"),
        ("on host 7f3a9c2b1d4e", "7f3a9c2b1d4e"), ("aws wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
        ("stripe correct-horse-battery", "correct-horse-battery"), ("mail me at a@b.io", "a@b.io"),
        ("cd /home/alice/x", "alice"), ("password: Welcome", "Welcome"), ("password: super_secret_pw", "super_secret"),
        ("DB_PASSWORD=super_secret_pw", "super_secret"), ("SECRET_KEY=my.secret.phrase", "my.secret"),
        ("Authorization: abcdef1234567890abcdef", "abcdef1234"), ("-H 'Authorization: token 0123456789abcd'", "0123456789"),
        ('headers={"Authorization": "abcdef1234567890"}', "abcdef1234"),
        ("AccountName=x;AccountKey=q9Zk2lW8xYtRm5Vn==;EndpointSuffix=core.windows.net", "q9Zk2lW8xYtRm5Vn"),
        ("SG.abcdefghij0123456789.ABCDEFGHIJ0123456789abcdefgh", "ABCDEFGHIJ0123456789"),
        ("whsec_abcdefghij0123456789ABCD", "abcdefghij0123456789"), ("bot 123456789:AAHk2lW8xYtRm5Vnq9Zk2lW8xYtRm5VnQ9Z", "AAHk2lW8"),
        ("DB_PASS=MyPassword", "MyPassword"), ("export MYSQL_PWD=SuperSecret", "SuperSecret"),
        ("docker run -e REDIS_AUTH=correcthorse redis", "correcthorse"), ("SMTP_PW='swordfish'", "swordfish"),
        ("DB_PASSWORD = MyPassword", "MyPassword"), ("export API_SECRET = SuperSecret", "SuperSecret"),
        ("GPG_PASSPHRASE=OpenSesame", "OpenSesame"), ("passphrase=opensesame", "opensesame"),
        ("docker login -u bob --password swordfish registry.io", "swordfish"), ("gh auth login --with-token ghtok12345", "ghtok12345"),
        ("deploy --api-key 'MyApiKey' --client-secret SuperSecret", "MyApiKey"), ("--client-secret SuperSecret", "SuperSecret"),
        ('{"auths": {"registry.example.com": {"auth": "Ym9iOnN3b3JkZmlzaA=="}}}', "Ym9iOnN3b3JkZmlzaA"),
        ("sshpass -p swordfish ssh bob@h", "swordfish"), ("mysql -u root -pswordfish mydb", "swordfish"),
        ('mysqldump -uroot -p"swordfish" db', "swordfish"), ("redis-cli -h cache -a swordfish ping", "swordfish"),
        ("machine example.com login bob password swordfish", "swordfish"),
        ("machine example.com\n  login bob\n  password swordfish\n", "swordfish"),
        ("default login anonymous password guest-1234", "guest-1234"), ("$ grep password ~/.netrc\n  password swordfish", "swordfish"),
        ("post to https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX", "XXXXXXXXXXXX"), ("token=MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs", "Cl2FMQ"), ("psql with postgres-pw", "postgres-pw"), ("mysql mysqlpass", "mysqlpass"),
    ],
)  # fmt: skip
def test_secrets_beside_code_still_go(text: str, secret: str) -> None:
    """Telling code from secrets keeps every secret out: a key word's value that is no code (quoted, a random
    token, a word), a credential after ``Authorization``, a key glued to text before it, the value of a variable
    named for a secret however plain or short (from six characters), a random token in any variable, e-mail
    addresses and home paths."""
    r = Redactor(environ={**HARMLESS_ENV, **SECRET_ENV}, home="/home/ann")
    assert secret not in r.text(text)


@pytest.mark.parametrize(
    "text",
    ["password required", "error: \npassword expired\n", '{"error": "password incorrect"}',
     '{\\"error\\": \\"password incorrect\\"}', "Login failed.\n  password expired.\n"],
)  # fmt: skip
def test_prose_about_a_password_on_a_line_of_its_own_is_no_netrc_line(text: str) -> None:
    """A line (or a quoted message) that reads ``password`` and a lower-case word is prose, as an error message
    writes it, unless the text is about a netrc file: it stays and counts nothing."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and r.summary()["key"] == 0


@pytest.mark.parametrize(
    ("text", "secret"),
    [("password hunter2", "hunter2"), ("password S3cr3t!", "S3cr3t!"), ("\n  password Swordfish\n", "Swordfish"),
     ('"password s3cr3t"', "s3cr3t"), ("cat ~/.netrc\npassword swordfish\n", "swordfish"),
     ("cat _netrc\\npassword swordfish", "swordfish")],
)  # fmt: skip
def test_a_netrc_line_of_its_own_is_still_redacted(text: str, secret: str) -> None:
    """A value with a digit, a symbol or a capital letter is a password, and so is a lower-case word in a text
    about a netrc file."""
    r = Redactor(environ={}, home="/home/ann")
    assert secret not in r.text(text) and r.summary()["key"] == 1


def test_a_url_keeps_its_host_when_its_password_reads_as_an_e_mail() -> None:
    """``http://user:pass@example.com`` holds an e-mail address too (``pass@example.com``): the two matches are
    replaced as one key, which took the host with the password."""
    r = Redactor(environ={}, home="/home/ann")
    text = "see http://samuel:pw1234@example.com:8000/x"
    assert r.text(text) == "see http://samuel:%5Bredacted%20key%5D@example.com:8000/x"
    assert r.summary() == {"key": 1, "env": 0, "email": 0, "home": 0}


def test_numbers_settings_and_paths_of_secret_variables_are_kept() -> None:
    """A variable named for a secret whose value is a number, a setting word or a path keeps it readable."""
    environ = {"TOKEN_TTL": "86400000", "USE_AUTH": "disabled", "GCP_CREDENTIALS": "/etc/gcp.json"}
    assert env_secrets(environ) == []


WORDS = st.sampled_from([
    "sk-", "sk-proj-", "rk_live_", "ghp_", "github_pat_", "xoxb-", "AKIA", "ASIA", "AIza", "eyJ", "Bearer", "basic",
    "BASIC", "token", "Token", "api_key", "API-KEY", "access_token", "secret", "password", "passwd", "to\u212aen",
    "secret_key", "aws_secret_access_key", "PRIVATE-KEY", "accesskey", '\\"', "\\/home\\/", "\\/Users\\/",
    "C:\\\\Users\\\\", "glpat-", "npm_", "hf_", "redis://", "https://u:", "@",
    "\u017fecret", "ann@example", "/home/", "/Users/", "/root", "C:\\Users\\", "-----BEGIN RSA PRIVATE KEY-----",
    "hunter2-value", 'q"uo\\te-env', "x", "Authorization", "authorization: token", "DB_PASS", "MYSQL_PWD",
    "REDIS_AUTH", "passphrase", "DB_PASSWORD = ", "machine", "default", " login ", " password ", "\npassword",
    "\\npassword ", "--password ", "--with-token", '"auth"', '\\"auth\\"', "sshpass -p", "mysql -u x -p",
    "redis-cli -a ", "&sig=", "?X-Amz-Signature=", "\\u0026Signature=", "var password ", "set -gx ", "<add key=",
    "'''", "${x}", "<token>", " => ", ":password", "getenv('P', ", "setx ", "setenv ", ".setProperty(", ": &str = ",
    ".login(", "HTTPBasicAuth(", "auth=(", ".fill(",
])  # fmt: skip
GLUE = st.lists(st.sampled_from(["=", ":", '"', "'", " ", "\t", "\n", "\r", "\f", "\x0b", "\\", "\x01", ".", "-", "\u00e9"]),
                max_size=3).map("".join)  # fmt: skip
BODIES = st.text(alphabet=ALNUM + "._-", min_size=0, max_size=40)
MADE_UP = st.lists(st.tuples(WORDS, GLUE, BODIES).map("".join), min_size=1, max_size=3).map("".join)


@settings(max_examples=max(CASES, 200), deadline=None)
@given(text=MADE_UP)
@example(text='\\npassword sk- \\"')  # a netrc line in JSON text: its line break and quote escaped again in JSON
@example(text='"auth""=000sk-')  # a quoted key's quote, and one more
@example(text=" password \x0b\\npassword sk- 0")  # a netrc line's end escaped in text, escaped again in JSON
@example(text="password\\token\x0b")  # a netrc line's blank escaped in text (``\t``), doubled in JSON
def test_a_value_is_walked_as_its_strings_one_by_one(text: str) -> None:
    """The screen that lets a value with nothing to redact through whole never lets a secret through: a dict and
    a long list (screened a slice at a time) come out as their strings redacted one by one."""
    environ, home = {"API_TOKEN": "hunter2-value", "B_SECRET": 'q"uo\\te-env'}, "/home/ann"
    one = Redactor(environ=environ, home=home)
    expected = one.text(text)
    many = Redactor(environ=environ, home=home)
    value = {"type": "x", "a": [text] * 40 + [{"b": text, "n": 1}], "c": {"d": text}}
    assert many.walk(value) == {"type": "x", "a": [expected] * 40 + [{"b": expected, "n": 1}], "c": {"d": expected}}
    assert many.summary() == {kind: n * 42 for kind, n in one.summary().items()}


@settings(max_examples=max(CASES, 200), deadline=None)
@given(texts=st.lists(MADE_UP, min_size=1, max_size=4), split=st.integers(0, 4))
def test_aside_walks_each_item_and_counts_nothing(texts: list[str], split: int) -> None:
    """``aside`` screens a list of messages once: what it gives and says equals what walking the items one by one
    gives and counts (also for secrets whose parts end one item and start the next), and the redactor's own
    counts stay as they were."""
    environ, home = {"API_TOKEN": "hunter2-value", "B_SECRET": 'q"uo\\te-env'}, "/home/ann"
    items = [{"role": "user", "content": t} for t in texts[:split]] + [{"role": "tool", "content": "".join(texts[split:])}]
    walked = Redactor(environ=environ, home=home)
    expected = [walked.walk(item) for item in items]
    counted = Redactor(environ=environ, home=home)
    counted.text("hunter2-value")  # one env replacement counted before
    assert counted.aside(items) == (expected, walked.tally() if any(walked.tally()) else None)
    assert counted.summary() == {"key": 0, "env": 1, "email": 0, "home": 0}


def test_text_after_characters_of_several_bytes_is_cut_where_the_secret_is() -> None:
    """The patterns run on UTF-8 bytes: a match after characters of two, three and four bytes replaces exactly
    the secret's characters."""
    r = Redactor(environ={"API_TOKEN": "hunter2-value"}, home="/home/ann")
    text = "é€😀 /home/bob/x ü hunter2-value ✓ ann@example.org ñ sk-" + "a1B2" * 5
    assert r.text(text) == "é€😀 ~/x ü [redacted env] ✓ [redacted email] ñ [redacted key]"
    assert r.summary() == {"key": 1, "env": 1, "email": 1, "home": 1}


@settings(max_examples=max(CASES, 200), deadline=None)
@given(texts=st.lists(MADE_UP, min_size=2, max_size=5), fresh=st.booleans(), short=st.sampled_from(["", "ok", "x"]))
def test_aside_takes_the_strings_a_walk_redacted_as_walking_them_again_would(
    texts: list[str], fresh: bool, short: str
) -> None:
    """A node's wire messages carry its event's strings: ``aside`` with what the event's walk noted (``seen``) gives
    and counts exactly what walking the messages gives and counts, and a string no walk noted (made anew, as two
    texts joined are) is screened and walked as before."""
    environ, home = {"API_TOKEN": "hunter2-value", "B_SECRET": 'q"uo\\te-env'}, "/home/ann"
    event = {"type": "tool/result", "data": {"message": {"role": "user", "content": [
        {"type": "text", "text": t} for t in texts]}, "meta": {"lines": [texts[0]] * 40}}}  # fmt: skip
    blocks = event["data"]["message"]["content"]
    joined = texts[0] + texts[1] if fresh else blocks[1]["text"]
    wire = [{"role": "user", "content": blocks[0]["text"]},
            {"role": "tool", "tool_call_id": short, "content": joined, "calls": [{"id": blocks[-1]["text"], "n": 3}]}]  # fmt: skip
    noting = Redactor(environ=environ, home=home)
    seen: dict[int, Any] = {}
    shown = noting.walk(event, seen=seen)
    if shown is event:  # nothing to redact: the projected message's strings stay as they are
        noting.seen_clean(event["data"]["message"], seen)
    walked = Redactor(environ=environ, home=home)
    expected = [walked.walk(item) for item in wire]
    assert noting.aside(wire, seen=seen) == (expected, walked.tally() if any(walked.tally()) else None)
    assert noting.aside(wire, seen={}) == (expected, walked.tally() if any(walked.tally()) else None)


def test_a_key_that_only_joined_text_blocks_make_is_redacted_where_the_wire_joins_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each text block of the user message is clean alone, and the event list and surface show them a line apart;
    DSH's wire joins them with nothing between, so the request section holds the key they make: redacted there
    too, whether the node's wire JSON is screened outright (a short one) or its strings are looked up."""
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    key = "sk-" + "a1B2" * 6
    items: list[dict[str, Any]] = [orjson.loads(line) for line in BASE.read_bytes().splitlines()]
    user = next(i["data"] for i in items if i.get("type") == "user/message" and i["data"]["source"]["kind"] == "user")
    user["content"] = [{"type": "text", "text": key[:8]}, {"type": "text", "text": key[8:]}]
    for padding in (0, 3000):  # a short wire JSON, and one past what is screened outright
        if padding:
            user["content"].insert(0, {"type": "text", "text": "x" * padding + "\n"})
        log = tmp_path / f"split{padding}.jsonl"
        log.write_bytes(b"\n".join(orjson.dumps(i) for i in items) + b"\n")
        for fmt in ("json", "html"):
            out = _export(log, fmt, Redactor(environ={}, home="/nonexistent-home")).decode()
            assert key not in out and "[redacted key]" in out, fmt


@pytest.mark.parametrize(
    ("secret", "written"),
    [
        ("alice@example.com", b"alice\\u0040example.com"),
        ("/home/alice", b"\\/home\\/alice"),
        ("sk-" + "a1B2" * 6, b"sk\\u002d" + b"a1B2" * 6),
    ],
)
def test_a_secret_its_line_writes_with_escapes_is_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret: str, written: bytes
) -> None:
    """The export screens an event's line as read, where a string may be written with escapes a dump of it has
    not (``\\u0040`` for ``@``, ``\\/`` for ``/``): such a line is screened as its event's dump, so the secret
    is redacted as when the line writes it plainly."""
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    (tmp_path / "plain").mkdir()
    (tmp_path / "escaped").mkdir()
    plain = plant(tmp_path / "plain" / "log.jsonl", user=f"see {secret} now", result=f"at {secret}", answer=secret)
    escaped = tmp_path / "escaped" / "log.jsonl"
    escaped.write_bytes(plain.read_bytes().replace(secret.encode(), written))
    assert escaped.read_bytes().count(written) == 3
    for fmt in ("json", "md", "html"):
        out = _export(escaped, fmt, Redactor(environ={}, home="/nonexistent-home")).decode()
        assert secret not in out, fmt
        assert out == _export(plain, fmt, Redactor(environ={}, home="/nonexistent-home")).decode().replace(
            str(plain), str(escaped)
        ), fmt


@pytest.mark.parametrize(
    ("arguments", "secrets"),
    [
        ({"path": "config.json", "content": '{"api_key": "f3a9c2e1d4b5", "password": "hunter2hunter2"}'},
         ["f3a9c2e1d4b5", "hunter2hunter2"]),
        ({"path": "~/.aws/credentials", "content": "[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRf"},
         ["wJalrXUtnFEMI/K7MDENG/bPxRf"]),
        ({"command": "export SECRET_KEY='dj4ng0-s3cr3t-v4lue' PRIVATE_KEY=pr1v4t3-k3y-v4lue"},
         ["dj4ng0-s3cr3t-v4lue", "pr1v4t3-k3y-v4lue"]),
        ({"path": "~/.docker/config.json", "content": '{"auths": {"r.io": {"auth": "Ym9iOnN3b3JkZmlzaA=="}}}'},
         ["Ym9iOnN3b3JkZmlzaA"]),
        ({"path": "C:\\Users\\dave.k\\proj\\main.py"}, ["dave.k"]),
        ('{"path": "\\/home\\/alice.k\\/proj\\/main.py", "root": "\\/Users\\/bob.k"}', ["alice.k", "bob.k"]),
    ],
)  # fmt: skip
def test_a_secret_in_a_tool_call_s_arguments_is_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arguments: dict[str, str] | str, secrets: list[str]
) -> None:
    """A tool call's arguments are JSON text: a secret there has its quotes escaped (a config file the model
    writes) and names of their own (``aws_secret_access_key``, ``SECRET_KEY``), a home path its backslashes
    doubled (a Windows path) or its slashes escaped: none survives any format."""
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    text = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
    log = with_arguments(plant(tmp_path / "log.jsonl", "go", "ok", "done"), text)
    for fmt in ("json", "md", "html"):
        out = _export(log, fmt, Redactor(environ={}, home="/nonexistent-home")).decode()
        for secret in secrets:
            assert secret not in out, (fmt, secret)


def test_a_secret_under_a_key_named_for_one_in_a_json_object_is_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool call's arguments as a JSON object (not text) hold a password as a string of its own, which no text
    rule sees: the string under a key named for a secret goes whole, every other string, number and key stays."""
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    arguments = {"host": "db.internal", "password": "hunter2", "db_password": "S3cr3t pass", "port": 5432,
                 "auth": {"api_key": "plainword", "x-auth-token": "abc.def/ghi"}, "GITHUB_TOKEN": "correcthorse",
                 "token": "<token>", "secret": "${{ secrets.DEPLOY }}", "note": "hunter", "tokens": "many words"}  # fmt: skip
    r = Redactor(environ={}, home="/home/ann")
    out = r.walk({"arguments": arguments})["arguments"]
    redacted = ("password", "db_password", "GITHUB_TOKEN")
    assert out == {**arguments, **{k: "[redacted key]" for k in redacted},
                   "auth": {"api_key": "[redacted key]", "x-auth-token": "[redacted key]"}}  # fmt: skip
    assert r.summary()["key"] == 5
    log = with_arguments(plant(tmp_path / "log.jsonl", "go", "ok", "done"), arguments)
    for fmt in ("json", "md", "html"):
        text = _export(log, fmt, Redactor(environ={}, home="/nonexistent-home")).decode()
        for secret in ("hunter2", "S3cr3t pass", "plainword", "abc.def/ghi", "correcthorse"):
            assert secret not in text, (fmt, secret)
        assert fmt == "md" or "db.internal" in text and "5432" in text, fmt  # Markdown shows no arguments


def test_a_password_of_digits_a_json_object_holds_as_a_number_is_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A number under a key named for a password or another secret (four digits or more, as on a config line) is
    that secret, in every format and in the surface's copy of the call too; a count of tokens, a short number and
    a port stay numbers."""
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    arguments = {"password": 12345678, "db": {"db_password": 4711, "port": 5432}, "pwd": 987654321, "pass": 123,
                 "mail": "ann@example.com", "max_tokens": 4096, "tokens": 1200, "token": 55501234, "passes": 3,
                 "flag": True, "api_key": 20240607, "secret": 8675309, "max_token": 8192, "input_tokens": 5000,
                 "token_count": 3000, "auth": 99}  # fmt: skip
    r = Redactor(environ={}, home="/home/ann")
    out = r.walk({"arguments": arguments})["arguments"]
    assert out == {**arguments, "password": "[redacted key]", "pwd": "[redacted key]", "mail": "[redacted email]",
                   "db": {"db_password": "[redacted key]", "port": 5432}, "token": "[redacted key]",
                   "api_key": "[redacted key]", "secret": "[redacted key]"}  # fmt: skip
    assert r.summary()["key"] == 6
    # the strings a walk noted answer for no number it replaced (nor a nested one beside a string it redacted)
    for value, found in ((arguments, (6, 0, 1, 0)), ([arguments["db"]], (1, 0, 0, 0)),
                         ({"db": arguments["db"], "mail": arguments["mail"]}, (1, 0, 1, 0))):  # fmt: skip
        seen: Seen = {}
        walked = r.walk({"value": value, "host": "db.internal"}, seen=seen)["value"]
        assert r.aside([value], seen=seen) == ([walked], found)
    log = with_arguments(plant(tmp_path / "log.jsonl", "go", "ok", "done"), arguments)
    for fmt in ("json", "html"):  # Markdown shows no arguments
        text = _export(log, fmt, Redactor(environ={}, home="/nonexistent-home")).decode()
        for secret in ("12345678", "4711", "987654321", "55501234", "20240607", "8675309"):
            assert secret not in text, (fmt, secret)
        assert all(str(n) in text for n in (5432, 4096, 1200, 8192, 5000, 3000)), fmt


@pytest.mark.parametrize(
    ("text", "secret", "kept"),
    [
        ("DATABASE_URL=postgres://admin:s3cr3tpw@prod-db:5432/app", "s3cr3tpw", "postgres://admin:"),
        ("git remote add o https://oauth2:Zq81xVb2LmN0pQr5StUv@gitlab.example.com/x.git", "Zq81xVb2LmN0pQr5StUv", "https://oauth2:"),
        ("redis://:p4ssw0rd-r3d1s@cache:6379/0", "p4ssw0rd-r3d1s", "redis://:"),
        ("GITLAB_TOKEN glpat-Zq81xVb2LmN0pQr5StUv", "glpat-Zq81xVb2LmN0pQr5StUv", ""),
        ("//registry.npmjs.org/:_authToken npm_Zq81xVb2LmN0pQr5StUv7WxYz0123456789", "npm_Zq81xVb2LmN0pQr5StUv7WxYz0", ""),
        ("HF hf_Zq81xVb2LmN0pQr5StUv7WxYzAbCdEfGh", "hf_Zq81xVb2LmN0pQr5StUv7WxYz", ""),
    ],
)  # fmt: skip
def test_credentials_in_urls_and_more_token_formats_are_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, secret: str, kept: str
) -> None:
    """A password in a URL (a database URL, a git remote) goes, the scheme and user before it stay; GitLab, npm and
    Hugging Face tokens go as the other formats do."""
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    log = plant(tmp_path / "log.jsonl", "go", text, "done")
    for fmt in ("json", "md", "html"):
        out = _export(log, fmt, Redactor(environ={}, home="/nonexistent-home")).decode()
        assert secret not in out and (RU if kept else R) in out, fmt  # percent-encoded in a URL's user part
        assert kept in (out if fmt != "html" else out.replace("&#x27;", "'")), fmt


@pytest.mark.parametrize("value", ['p"ss\\w0rd-long', "h\u00e9llo-w\u00f6rld-123", "tab\there-secret"])
def test_an_environment_value_written_as_json_text_is_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """An environment value with a quote, a backslash, a control character or a letter past ASCII is written
    escaped where it is JSON text in a string: in a tool call's arguments, and in a tool's JSON output (Python's
    ``json.dumps`` writes ``\\u00e9``): redacted there as where it is plain."""
    import json

    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    log = plant(tmp_path / "log.jsonl", "go", json.dumps({"password": value, "note": f"pw {value}"}), "done")
    with_arguments(log, orjson.dumps({"command": f"login --password {value}"}).decode())
    forms = {value, orjson.dumps(value).decode()[1:-1], json.dumps(value)[1:-1]}
    for fmt in ("json", "md", "html"):
        out = _export(log, fmt, Redactor(environ={"PW": value}, home="/nonexistent-home")).decode()
        if fmt == "json":
            shown = "\n".join(_strings(orjson.loads(out)))
        else:
            shown = out.replace("&quot;", '"').replace("&#x27;", "'")
        for form in forms:
            assert form not in shown, (fmt, form)


def test_a_model_named_by_its_path_is_redacted_in_the_cost_section_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local model is often named by its file (``/home/<user>/models/x.gguf``): the header and the request
    redacted that name, but the cost section (each request's row, the models no price covers) did not."""
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    log = plant(tmp_path / "log.jsonl", "go", "ok", "done")
    model = b'"model":"/home/alice/models/q.gguf"'
    log.write_bytes(log.read_bytes().replace(b'"model":"deepseek-v4-flash"', model))
    for fmt in ("json", "md", "html"):
        out = _export(log, fmt, Redactor(environ={}, home="/nonexistent-home")).decode()
        assert "alice" not in out, fmt
    doc = orjson.loads(_export(log, "json", Redactor(environ={}, home="/nonexistent-home")))
    assert doc["cost"]["unpriced"] == ["~/models/q.gguf"]
    assert doc["cost"]["requests"][0]["model"] == "~/models/q.gguf"


def test_the_exporting_users_home_is_a_whole_directory_never_the_start_of_another_name() -> None:
    r = Redactor(environ={}, home="/root")
    assert r.text("mount /rootfs/etc; cd /root/work; ls /root") == "mount /rootfs/etc; cd ~/work; ls ~"
    r = Redactor(environ={}, home="/srv/ann")
    assert r.text("/srv/ann/x /srv/anna/y /srv/ann") == "~/x /srv/anna/y ~"
    assert r.counts["home"] == 2


@pytest.mark.parametrize("home", ["/root", "/home/ann"])
def test_a_directory_named_root_inside_a_path_is_no_home(home: str) -> None:
    """``/root`` is a home directory where a path starts with it, not a directory named ``root`` deeper in one (a
    sessions root, a site's document root): ``/tmp/demo/root/x.jsonl`` came out as ``/tmp/demo~/x.jsonl``, which
    also broke the command the Markdown names to expand a result, and counted a home that was not there. The
    exporting user's own home (``/root`` when exporting as root) is replaced the same way, and both still go at
    the start of a path, also as JSON text writes it."""
    r = Redactor(environ={}, home=home)
    kept = "tapedeck expand '/tmp/demo/root/--w--/s/session.jsonl'; cp /srv/app/root/index.html build-root/x ~/root/y"
    assert r.text(kept) == kept and r.summary()["home"] == 0
    text = 'cd /root; ls "/root/.ssh" (/root) {"path":"\\/root\\/x"} =/root'
    assert r.text(text) == 'cd ~; ls "~/.ssh" (~) {"path":"~\\/x"} =~'


@pytest.mark.parametrize("home", ["/root", "/srv/ann"])
def test_a_home_that_starts_a_line_of_json_text_is_replaced(home: str) -> None:
    """JSON text in a string (a tool call's arguments) writes a line break or a tab as an escape, so the home that
    starts the line after it follows a letter there: still the start of a path."""
    r = Redactor(environ={}, home=home)
    text = f'{{"content": "keys:\\n{home}/.ssh/id_rsa\\n\\t{home}/x\\r{home}"}}'
    assert r.text(text) == '{"content": "keys:\\n~/.ssh/id_rsa\\n\\t~/x\\r~"}'
    assert r.summary()["home"] == 3


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("host:5432:db:user:secretpw", "secretpw"), ("$ cat ~/.pgpass\n*:*:*:postgres:S3cr3t-pw\n", "S3cr3t-pw"),
        ('{"content": "db.internal:5432:app:app_user:hunter2pw\\n"}', "hunter2pw"),
        ("_auth=Ym9iOnN3b3JkZmlzaA==", "Ym9iOnN3b3JkZmlzaA"), ("registry=x\n_auth = Ym9iOnN3\n", "Ym9iOnN3"),
        ("//registry.npmjs.org/:_auth=Ym9iOnN3b3JkZmlzaA==", "Ym9iOnN3b3JkZmlzaA"),
        ("_authToken=abcd1234efgh5678", "abcd1234efgh5678"), ("//registry.npmjs.org/:_authToken=a1b2c3", "a1b2c3"),
        ("FROM node:22\nENV API_KEY secretvalue\n", "secretvalue"), ("ENV API_KEY=secretvalue", "secretvalue"),
        ('ENV DB_PASSWORD "Open Sesame"', "Open Sesame"), ('"cmd": "FROM x\\nENV GITHUB_TOKEN MyGitHubToken\\n"', "MyGitHub"),
        ("apiKey: abc123xyz", "abc123xyz"), ("apiKey: MyApiKey", "MyApiKey"), ("clientSecret: SuperSecret", "SuperSecret"),
        ("  DbPassword: Welcome", "Welcome"), ("dbPass: hunter2pw", "hunter2pw"), ("mysqlPwd: opensesame", "opensesame"),
        ("SmtpPw = MailPass", "MailPass"), ('"refreshToken": "SessionKey"', "SessionKey"),
        ("PASSWORD=abc12", "abc12"), ("export DB_PASS=pw1", "pw1"), ('password = "abc12"', "abc12"),
        ('{"password": "abc12"}', "abc12"), ("MYSQL_ROOT_PASSWORD: root", "root"), ("ENV PASSWORD=abc12", "abc12"),
        ("client_secret: SuperSecret", "SuperSecret"), ("  db_password: MyPassword", "MyPassword"),
        ("aws_secret_access_key = MyPassword", "MyPassword"), ("DB_PASSWORD: MyPassword", "MyPassword"),
        ("- db_password: root", "root"), ("client_secret: abc12", "abc12"), ("clientSecret: abc12", "abc12"),
        ("client-secret: OpenSesame", "OpenSesame"),
    ],
)  # fmt: skip
def test_config_file_shapes_and_short_values_are_redacted(text: str, secret: str) -> None:
    """A ``.pgpass`` line, an npm ``_auth``/``_authToken`` line, a Dockerfile's ``ENV NAME value``, a value under a
    camelCase or CamelCase key named for a secret (however it reads), and a value of three to five characters
    under a secret's name (an env line, a quoted value, a compose file's ``NAME: value``) all went through; so did
    a class-like word or a short value under a snake_case key of a config file's line (``client_secret:
    SuperSecret``, ``db_password: root``, an AWS credentials file's ``aws_secret_access_key = abc12``)."""
    r = Redactor(environ={}, home="/home/ann")
    assert secret not in r.text(text) and r.summary() == {"key": 1, "env": 0, "email": 0, "home": 0}


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("host1 ansible_ssh_pass=s3cretpw", "s3cretpw"), ("- ansible_become_pass: Welcome1", "Welcome1"),
        ("db_pass: hunter2pw", "hunter2pw"), ("smtp_pass = MailPass", "MailPass"),
        ("mysql_pwd=opensesame", "opensesame"), ("  redis_pw: abc12", "abc12"),
        ('{"content": "[db]\\nhost=x\\nadmin_pass=pgAdmin99\\n"}', "pgAdmin99"),
    ],
)  # fmt: skip
def test_a_value_under_a_lowercase_name_ending_in_pass_or_pw_is_redacted(text: str, secret: str) -> None:
    """``DB_PASS`` and ``dbPass`` were key words and ``db_pass`` was not: an Ansible inventory's
    ``ansible_ssh_pass=…`` and a config file's ``smtp_pass: …`` went out whole."""
    r = Redactor(environ={}, home="/home/ann")
    assert secret not in r.text(text) and r.summary()["key"] == 1


@pytest.mark.parametrize("text", ["bypass: true", "compass=north", "passes: 3"])
def test_a_word_that_only_ends_in_pass_is_no_key(text: str) -> None:
    """The lowercase ``_pass`` key needs its ``_``: ``bypass`` and ``compass`` name no password."""
    assert Redactor(environ={}, home="/home/ann").text(text) == text


@settings(max_examples=CASES, deadline=None)
@given(stage=st.sampled_from(["first", "second", "render", "compile", "high", "boarding", "old", "tests", "Final"]),
       owner=st.sampled_from(["db", "user", "smtp", "ansible_ssh", "admin", "mail", "redis"]),
       form=st.sampled_from(["{}_pass", "{}Pass", "{}_pwd", "{}_PW"]), line=st.sampled_from(["{}: {}", "  {} = {}", "- {}: {}", "{}={}"]),
       words=st.lists(st.from_regex(r"[a-z]{3,9}", fullmatch=True), min_size=1, max_size=4),
       secret=st.from_regex(r"[A-Za-z][a-z]{3,6}[0-9]{1,3}[A-Za-z]{0,2}", fullmatch=True))  # fmt: skip
def test_a_name_ending_in_pass_that_is_a_stage_or_a_condition_keeps_its_words_and_a_passwords_goes(
    stage: str, owner: str, form: str, line: str, words: list[str], secret: str
) -> None:
    """``first_pass: parse tokens``, ``renderPass: shadows``, ``boarding_pass: issued``, ``old_pwd: src``, ``{"first_pass":
    "lexer"}`` and ``if user_pass: return`` lost their words as passwords: a name ending in ``_pass`` (``Pass``,
    ``_pw``, ``_pwd``) whose word before names a stage, a filter, a ticket or a directory names no password, and a
    key word a condition tests is code's. A password under ``db_pass`` and the like still goes."""
    if form.isupper():  # a variable's name: ``DB_PW``, ``FIRST_PW``
        stage, owner = stage.upper(), owner.upper()
    value = " ".join(words)
    _stays(line.format(form.format(stage), value))
    _stays(orjson.dumps({form.format(stage): value, "n": 4096}).decode())
    _stays(f"if {form.format(owner)}: {words[0]}\n    while not self.password: {words[-1]}")
    r = Redactor(environ={}, home="/home/ann")
    assert secret not in r.text(line.format(form.format(owner), secret)) and r.summary()["key"] == 1


def test_a_short_secret_under_a_key_named_for_one_in_a_json_object_is_redacted() -> None:
    """A JSON object's string of three to five characters under a secret's key, camelCase included, goes too."""
    r = Redactor(environ={}, home="/home/ann")
    value = {"password": "abc12", "dbPass": "pw1", "clientSecret": "xyz", "auth": "none", "token": "ab", "note": "abc12"}
    assert r.walk(value) == {**value, "password": "[redacted key]", "dbPass": "[redacted key]",
                             "clientSecret": "[redacted key]"}  # fmt: skip
    assert r.summary()["key"] == 3


NEAR_MISSES = """12:30:45 started; 2026:12:05:17:36 stamp; nobody:x:65534:65534:nobody:/nonexistent:/bin/false; 00:11:22:33:44:55
src/app.py:12:5:E501:line too long; fe80:0:0:0:1 and 2001:db8:85a3:0:8a2e; a:b:c:d:e
self._auth = auth; self._auth = HTTPBasicAuth(user, pw); _auth = None
ENV NODE_ENV production
ENV TOKENIZERS_PARALLELISM false
ENV API_KEY=$API_KEY
ENV DB_PASSWORD_FILE /run/secrets/db
const { password: pw, token: tok } = creds; login(password=pwd, token=tok)
useAuth: true; requirePassword: false; passwordMinLength: 12; tokenType: Bearer
interface Props { apiKey: ApiKeyType; onToken: TokenHandler }  // def f(apiKey: ApiKey = None)
PASSWORD=123 TOKEN_TTL=3600 USE_AUTH=off API_KEY=
class Settings(BaseSettings):
    db_password: SecretStr
    DB_PASSWORD: PostgresDsn
    refresh_token: TokenType
    api_key: str
    client_secret: Optional[str] = None
  apiKey: ApiKeyType
connect(db_password=pw, api_key=key)
"""


def test_near_misses_of_the_config_shapes_stay() -> None:
    """Times, ``/etc/passwd`` lines, a linter's ``file:line:col`` output and addresses are no ``.pgpass`` line; a
    private ``_auth`` attribute, a Dockerfile's ``ENV`` of a setting, a reference or a file, short names in code
    and camelCase settings and types are no secrets, nor a settings class's fields annotated on lines of their own
    (a type's name, ``SecretStr``, is no config line's password)."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(NEAR_MISSES) == NEAR_MISSES and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("password: ChangeMe", "ChangeMe"), ("db:\n  password: ChangeMe\n  user: app\n", "ChangeMe"),
        ("secret: hunt3", "hunt3"), ("- password: abc\n", "abc"), ("  token: ab12c", "ab12c"),
        ("passphrase: OpenSesame", "OpenSesame"), ("psk: MyWifi", "MyWifi"), ("password: ChangeMe!", "ChangeMe"),
        ('{"command": "cat > db.yml <<EOF\\nuser: app\\npassword: ChangeMe\\nEOF"}', "ChangeMe"),
        ('{"path": "db.yml", "content": "password: pass1\\nuser: app"}', "pass1"),
    ],
)  # fmt: skip
def test_a_one_word_key_on_a_config_line_of_its_own_takes_a_short_or_class_like_value(text: str, secret: str) -> None:
    """A YAML line whose key is one word named for a secret (``password: ChangeMe``, ``secret: hunt3``) kept its
    value when that read like a class's name or had under six characters: only a key of several words counted
    as a config line's. A one-word key counts now, also where JSON text starts the line with its quote."""
    r = Redactor(environ={}, home="/home/ann")
    assert secret not in r.text(text) and r.summary() == {"key": 1, "env": 0, "email": 0, "home": 0}


ORDINARY_YAML = """password:
  min_length: 12
secret: true
token: null
password: none
secret: off
db_password: none
DB_PASSWORD: 123
max_token: 4096
token: 1
token: ${{ secrets.GITHUB_TOKEN }}
password: "{{ vault_db_password }}"
token: Token
Password: Required
Token: Optional
  "token": tok
"""


PARSER_ERRORS = """SyntaxError: Unexpected token: Identifier
error: expected token: Semicolon, found Comma
line 3 can expected token: Should both module option
  File "x.py", line 2: unexpected token: Keyword
"""


def test_a_parser_s_unexpected_token_is_no_secret() -> None:
    """A parser's ``Unexpected token: Identifier`` (an error message an agent's tool results are full of) lost
    the token it names, which reads like a password after ``token:``."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(PARSER_ERRORS) == PARSER_ERRORS and sum(r.summary().values()) == 0
    assert r.text("invalid token: Hunter2pw") == "invalid token: [redacted key]"
    assert r.text("AssertionError: expected token: abc123def") == "AssertionError: expected token: [redacted key]"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("password: 12345678", "12345678"), ("mysql_root_password: 987654321\n", "987654321"),
        ("DB_PASSWORD=20240607", "20240607"), ("PGPASSWORD=4711", "4711"), ("  psk: 55501234", "55501234"),
        ("DB_PASSWORD: 1234", "1234"), ("passphrase = 0000111122", "0000111122"),
    ],
)  # fmt: skip
def test_a_password_of_digits_goes(text: str, secret: str) -> None:
    """A number after a key named for a password (not a token's: ``max_token: 4096`` is a count) is the password
    itself, from four digits: a config or env line kept it as a setting, so ``password: 12345678`` went out."""
    r = Redactor(environ={}, home="/home/ann")
    assert secret not in r.text(text) and r.summary() == {"key": 1, "env": 0, "email": 0, "home": 0}


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("api_key: 12345678", "12345678"), ("secret: 98765432\n", "98765432"), ("  token: 123456789", "123456789"),
        ("API_KEY=20240607", "20240607"), ("GITHUB_TOKEN=55501234", "55501234"), ("client_secret = 4711", "4711"),
        ("access_token: 0000111122", "0000111122"), ("export REDIS_AUTH=8675309", "8675309"),
    ],
)  # fmt: skip
def test_a_secret_of_digits_under_a_key_named_for_one_goes(text: str, secret: str) -> None:
    """Only a key named for a password took a number of four digits or more as its value: ``api_key: 12345678``,
    ``secret: 98765432`` and ``API_KEY=20240607`` went out as settings."""
    r = Redactor(environ={}, home="/home/ann")
    assert secret not in r.text(text) and r.summary() == {"key": 1, "env": 0, "email": 0, "home": 0}


COUNTS = """max_tokens: 4096
tokens: 1200
max_token: 4096
token: 1
secret: 123
input_tokens: 5000
prompt_token: 2048
maxToken: 8192
MAX_TOKEN=8192
TOKEN_TTL=3600
api_key_id: 12345
"""


def test_counts_and_short_numbers_under_token_keys_stay() -> None:
    """A key that counts tokens (a plural, or a name with ``max``, ``input``, ``prompt`` …) holds a count, and three
    digits or fewer are no secret."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(COUNTS) == COUNTS and sum(r.summary().values()) == 0


def test_ordinary_yaml_and_prose_with_a_one_word_key_stay() -> None:
    """A one-word key's config line is no secret when its value is a setting, a number, a literal in any case
    (``Token: Optional``), a reference or the key's own name; a quoted key is JSON's, not a config line's
    (``"token": tok``, a short name in code)."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(ORDINARY_YAML) == ORDINARY_YAML and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("ya29.a0AfH6SMBx3kQ9vZtLmN0pQr5StUv7WxYz0123", "a0AfH6SMBx3kQ9vZtLmN0pQr5StUv7WxYz"),
        ("VAULT_ADDR=x; vault login hvs.CAESIabcdefghijklmnopqrstuvwxyz0123", "CAESIabcdefghijklmnopqrstuvwxyz"),
        ("gitlab-runner register --token glrt-abcdefghijklmnopqrst", "abcdefghijklmnopqrst"),
        ("doctl auth init -t dop_v1_" + "ab01" * 16, "ab01" * 16), ("shpat_" + "0a1b" * 8, "0a1b" * 8),
        ("twine upload -p pypi-AgEIcHlwaS5vcmcCJGFiY2RlZjAxLTIzNDU2Nzg5", "AgEIcHlwaS5vcmcCJGFiY2RlZjAx"),
        ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0abcdefghij\n-----END PGP PRIVATE KEY BLOCK-----", "lQOYBF0abcdefghij"),
        ("    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=", "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVkt"),
    ],
)  # fmt: skip
def test_more_token_formats_are_redacted(text: str, secret: str) -> None:
    """Google OAuth access tokens, Vault, GitLab runner, DigitalOcean, Shopify and PyPI tokens, a PGP private key
    block and a kubeconfig's client key went through whole."""
    r = Redactor(environ={}, home="/home/ann")
    assert secret not in r.text(text) and r.summary() == {"key": 1, "env": 0, "email": 0, "home": 0}


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("curl -u bob:hunter2pass https://api.example.com", "hunter2pass"),
        ("curl -s --user 'deploy:S3cr3t!' -X POST https://x", "S3cr3t!"), ("curl --user=ci:tok3n https://x", "tok3n"),
        ("curl -H 'Cookie: sessionid=abcdef0123456789abcdef; theme=dark' https://x", "abcdef0123456789abcdef"),
        ("Set-Cookie: session=eyJ1c2VyIjoxfQ.Zk3x9Q.abcdefghijkl; HttpOnly; Path=/", "Zk3x9Q.abcdefghijkl"),
        ('{"headers": {"Cookie": "sid=s%3AabcdefGHIJ0123"}}', "abcdefGHIJ0123"),
    ],
)  # fmt: skip
def test_curl_user_passwords_and_cookies_are_redacted(text: str, secret: str) -> None:
    """The password of ``curl -u user:password`` and the values of a ``Cookie``/``Set-Cookie`` header (a session
    cookie is a login) went through."""
    r = Redactor(environ={}, home="/home/ann")
    assert secret not in r.text(text) and r.summary() == {"key": 1, "env": 0, "email": 0, "home": 0}


def test_curl_without_a_password_and_cookie_prose_stay() -> None:
    """``curl -u bob`` asks for the password, ``-u "$USER:$PASS"`` names it; a cookie mentioned in prose or code
    holds none."""
    text = ('curl -u bob https://x; curl -u "$USER:$PASS" https://x; curl -u :${TOKEN} x\n'
            "the Cookie: header is set by the browser; headers['Cookie'] = cookie_jar.header()\n")  # fmt: skip
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


APR1 = "$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/"
BCRYPT = "$2y$10$" + "abcdefghijklmnopqrstuv" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ01234"
SHA512 = "$6$rounds=5000$saltsalt$" + "a1B2c3D4./" * 8 + "xyzXYZ"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"bob:{APR1}", "HqJZimcKQFAMYayBlzkrA"), ("ann:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "W6ph5Mm5Pz8GgiULbPgzG37mj9g"),
        (f"$ cat .htpasswd\ndeploy:{BCRYPT}\n", "abcdefghijklmnopqrstuv"), (f"password_hash gave {BCRYPT}", "ABCDEFGHIJKLM"),
        ("olcRootPW: {SSHA}W6ph5Mm5Pz8GgiULbPgzG37mj9gxyz12", "W6ph5Mm5Pz8GgiULbPgzG37mj9g"),
        (f"root:{SHA512}:19000:0:99999:7:::", "a1B2c3D4"), ("root:$6$salt$hash:19000:0:99999:7:::", "$salt$hash"),
        ('{"output": "daemon:*:19000\\nbob:!$y$j9T$abc$defghijk:19000::::::\\n"}', "abc$defghijk"),
        ('network={\n\tssid="home"\n\tpsk="CorrectHorse"\n}', "CorrectHorse"), ("wpa_psk=" + "0f1e" * 16, "0f1e" * 16),
        ("ssh-keygen -t ed25519 -N 'swordfish' -f ~/.ssh/deploy", "swordfish"),
        ('ssh-keygen -p -P OldPass1 -N "NewPass2" -f key', "NewPass2"),
    ],
)  # fmt: skip
def test_password_hashes_psks_and_key_passphrases_are_redacted(text: str, secret: str) -> None:
    """An htpasswd line's hash (``$apr1$``, ``{SHA}``, bcrypt), a shadow line's (``$6$``, yescrypt ``$y$``, locked
    with ``!``), a crypt hash anywhere, a Wi-Fi ``psk`` and the passphrase ``ssh-keygen -N`` takes went through."""
    r = Redactor(environ={}, home="/home/ann")
    assert secret not in r.text(text) and r.summary()["key"] >= 1 and sum(r.summary().values()) == r.summary()["key"]


def test_a_shadow_line_keeps_its_other_fields_and_counts_one_key() -> None:
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(f"root:{SHA512}:19000:0:99999:7:::") == "root:[redacted key]:19000:0:99999:7:::"
    assert r.summary() == {"key": 1, "env": 0, "email": 0, "home": 0}


DOLLARS = """echo "$1:$2" && cp $1$2 $HOME/bin; awk '{print $1$2$3}' f
PATH=/usr/local/bin:$HOME/.local/bin:$PATH
price:$5 a month, or $1$ off; total:$6.50; it costs $2 at most
user:$USER; name:${NAME}; nobody:x:65534:65534:nobody:/nonexistent:/bin/false; daemon:*:19000:0:99999:7:::
ssh-keygen -t ed25519 -N '' -f key; ssh-keygen -N "$PASSPHRASE" -f k; the psk is set in wpa_supplicant.conf
"""


def test_shell_arguments_references_and_prices_are_no_hashes() -> None:
    """A shell's ``$1``, a ``$HOME`` reference, a price, a passwd line without a hash, an empty or referenced
    ``ssh-keygen`` passphrase and prose about a psk stay."""
    r = Redactor(environ={}, home="/nonexistent-home")
    assert r.text(DOLLARS) == DOLLARS and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('network={\n\tpsk="correct horse battery"\n}', ["horse", "battery"]),
        ("ssh-keygen -t ed25519 -N 'my secret pass' -f k", ["secret", "pass'"]),
        ('password = "open sesame now"', ["sesame", "now"]), ("sshpass -p 'fish and chips' ssh bob@h", ["chips"]),
        ('{"cmd": "ssh-keygen -N \\"two words\\" -f k"}', ["words"]), ('{"password": "Open Sesame"}', ["Sesame"]),
        ("deploy --password 'correct horse' --region eu", ["horse"]),
        ('network={\n\tpsk="my home wifi"\n}', ["my", "home", "wifi"]), ('password = "an ok pass"', ["an", "ok pass"]),
        ("DB_PASSWORD='a b c'", ["a b c"]), ('deploy --password "my pass phrase" --region eu', ["my", "phrase"]),
        ('{"cmd": "login --api-key \\"abc\\" now"}', ["abc"]),
    ],
)  # fmt: skip
def test_a_quoted_secret_of_several_words_goes_whole(text: str, words: list[str]) -> None:
    """A quoted passphrase with spaces went only as its first word; the rest of it, to the closing quote, goes too
    (one key), and what follows the quote stays. One whose first word is short (``"my home wifi"``) went whole: the
    value after a key word had to start with a word of three characters (after an option, of six)."""
    r = Redactor(environ={}, home="/home/ann")
    out = r.text(text)
    assert not any(word in out for word in words) and r.summary() == {"key": 1, "env": 0, "email": 0, "home": 0}
    assert out.endswith(text[text.index(words[-1]) + len(words[-1]) :])


def test_a_value_in_json_text_ends_at_its_line_s_escaped_end() -> None:
    """A tool call's arguments are JSON text, which writes a line break or a tab as an escape: the value before it
    took the escape and the next line's first word with it (``API_KEY=[redacted key] hi``: the ``\\n`` and ``echo``
    gone), so the export lost a line and a command. The value now ends there, as at the character itself."""
    r = Redactor(environ={}, home="/home/ann")
    text = ('{"command": "export API_KEY=abc123xyz\\necho hi\\nlogin --password hunter2pw\\nls\\n'
            'sshpass -p swordfish\\tssh h", "c": "Authorization: Bearer abcdefghijklmnop\\r\\nHost: x\\n'
            '[default]\\naws_secret_access_key = abc12\\n"}')  # fmt: skip
    assert r.text(text) == ('{"command": "export API_KEY=[redacted key]\\necho hi\\nlogin --password [redacted key]'
                            '\\nls\\nsshpass -p [redacted key]\\tssh h", "c": "Authorization: Bearer [redacted key]'
                            '\\r\\nHost: x\\n[default]\\naws_secret_access_key = [redacted key]\\n"}')  # fmt: skip
    assert r.summary() == {"key": 5, "env": 0, "email": 0, "home": 0}


def test_a_short_word_after_an_option_an_empty_value_and_a_lexer_s_token_stay() -> None:
    """Unquoted, a value after an option is a secret from six characters (a shorter word is as likely code's name);
    an empty value, a lexer's word under ``token`` and code that only quotes around the key word stay."""
    text = ('token: "x"; psk=""; print("password: " + pw); --password abc1; if password == \'\': login\n'
            "password=pw; token = tok\n")  # fmt: skip
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ('password = "ab"', 'password = "[redacted key]"'), ("secret = 'a' + b", "secret = '[redacted key]' + b"),
        ("login --token 'ab' now", "login --token '[redacted key]' now"), ("PASSWORD=ab\n", "PASSWORD=[redacted key]\n"),
        ("db:\n  password: x\n", "db:\n  password: [redacted key]\n"), ("api_key: 'Q1'", "api_key: '[redacted key]'"),
        ("<password>ab</password>", "<password>[redacted key]</password>"),
        ('var password string = "7"', 'var password string = "[redacted key]"'),
        ("url=${DB_PASSWORD:-ab}", "url=${DB_PASSWORD:-[redacted key]}"),
        ("ALTER USER bob WITH PASSWORD 'ab';", "ALTER USER bob WITH PASSWORD '[redacted key]';"),
        ("define('DB_PASSWORD', 'ab');", "define('DB_PASSWORD', '[redacted key]');"),
        ("password: |\n  ab\nuser: x", "password: |\n  [redacted key]\nuser: x"),
        ('{"cmd": "export TOKEN=\\"Zz\\""}', '{"cmd": "export TOKEN=\\"[redacted key]\\""}'),
    ],
)  # fmt: skip
def test_a_value_of_one_or_two_characters_a_key_names_a_secret_goes(text: str, out: str) -> None:
    """A value of one or two characters stayed wherever it was (``SHORTEST`` was 3): ``password = "ab"`` kept the
    password. It is the key's name that makes a value a secret, not its length: an operator who shares a log with
    ``PASSWORD=ab`` in it has shared the password. Such a value goes wherever a key word names it, quoted, or
    unquoted where it is data (an env file's line, a config file's)."""
    _redacts(text, out)


def test_a_short_value_under_a_json_key_named_for_a_secret_goes_and_a_lexer_s_word_stays() -> None:
    r = Redactor(environ={}, home="/home/ann")
    value = {"password": "ab", "secret": "Q", "api_key": "x1", "token": "ab", "note": "ab"}
    assert r.walk(value) == {**value, "password": "[redacted key]", "secret": "[redacted key]",
                             "api_key": "[redacted key]"}  # fmt: skip
    found, counts = r.aside([value])
    assert found == [{**value, "password": "[redacted key]", "secret": "[redacted key]", "api_key": "[redacted key]"}]
    seen: Seen = {}
    walked = r.walk(value, seen=seen)
    assert r.aside([value], seen=seen) == ([walked], counts)  # taken from what the walk noted: nothing short kept


@pytest.mark.parametrize("value", ["Q", "Abc" + str(1)])
def test_one_string_object_under_a_secret_s_key_and_another_key_is_not_copied_from_the_notes(value: str) -> None:
    """A walk notes each string it redacts by its identity, and ``aside`` copied the notes: one string object under
    ``password`` and under ``note`` (a one-character string is always one object) was noted twice, as hidden and
    as kept, the second note winning, so the copy gave the password back. Such notes are copied no more: the value
    is walked again."""
    r = Redactor(environ={}, home="/home/ann")
    held = {"password": value, "note": value}
    seen: Seen = {}
    assert r.walk(held, seen=seen) == {"password": "[redacted key]", "note": value}
    assert r.aside([held], seen=seen) == ([{"password": "[redacted key]", "note": value}], (1, 0, 0, 0))


def test_a_value_known_only_by_its_shape_still_needs_its_length() -> None:
    """Where no key word names a value, its shape alone says it may be a secret, and a short one would be found in
    ordinary text: an environment secret of two characters is replaced nowhere (``ENV_MIN_NAMED``), nor is the
    password of two a login call takes after its user."""
    text = 'connect ab to cd; server.login("bob", "ab")'
    r = Redactor(environ={"DB_PASSWORD": "ab", "API_TOKEN": "cd"}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "value"),
    [('deploy --password "MY pass phrase" --region eu', "MY pass phrase"), ("login --token 'AB cd ef' now", "AB cd ef")],
)
def test_a_quoted_secret_after_an_option_is_judged_whole_not_by_its_first_word(text: str, value: str) -> None:
    """After an option a quoted value whose first word was a capitalised word (``MY``) was taken for a help text's
    placeholder (``--token TOKEN``) and went through; the whole value, to its closing quote, is judged."""
    r = Redactor(environ={}, home="/home/ann")
    out = r.text(text)
    assert out == text.replace(value, "[redacted key]") and r.summary()["key"] == 1, out


def test_a_quoted_placeholder_after_an_option_stays() -> None:
    text = "usage: login --token 'TOKEN' or --api-key \"API_KEY\"\n"
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


def test_a_quote_that_does_not_close_on_its_line_takes_only_the_first_word() -> None:
    """With no closing quote on its line the value is its first word as before (but after a key named for a
    password, the rest of its line), and an e-mail or a home path in quotes takes nothing after it."""
    r = Redactor(environ={}, home="/home/ann")
    text = "password: 'swordfish is what it was\nand later it's fine\nmail \"ann@example.com now\" or '/home/ann and'"
    assert r.text(text) == ("password: '[redacted key]\nand later it's fine\n"
                            "mail \"[redacted email] now\" or '~ and'")  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        "password: {}\nuser: app", "DB_PASSWORD={}", '{{"cmd": "export PASSWORD={}\\nls"}}', "psk='{}'\n",
        'deploy --password "{}" --region eu', "ssh-keygen -N '{}' -f k",
    ],
)  # fmt: skip
def test_a_passphrase_longer_than_128_bytes_goes_whole(text: str) -> None:
    """The end of a password's line, and the quote closing a quoted value, were looked for at most 128 bytes on
    (b3fc813, to stay linear): a longer passphrase kept its tail (``password: [redacted key]rd word … tailsecret99``).
    Its end is found however far it is."""
    phrase = "word " * 60 + "tailsecret99"
    r = Redactor(environ={}, home="/home/ann")
    out = r.text(text.format(phrase))
    assert "tailsecret99" not in out and r.summary()["key"] == 1, out
    assert out == text.format("[redacted key]"), out


def test_a_long_line_of_values_with_brackets_counts_its_quotes_once() -> None:
    """Whether a bracket in a value closes on its line (``password: ab(cd1234``) counted the ``"`` from the text's
    start for each such value of a line longer than ``COMMAND_REACH``: time growing as the square of the line (a
    670 kB line of them took 28 s). The quotes before a value are counted on from where the last count stopped."""
    from core.export import redact

    scanned: list[int] = []

    class Counted(bytes):  # what each count of the text goes over
        def count(self, sub: bytes, start: int = 0, end: int | None = None) -> int:  # type: ignore[override]
            scanned.append((len(self) if end is None else end) - start)
            return super().count(sub, start, end)

    value = b"password: ab(cd1234) "
    data = Counted(b"x" * 2000 + value * 4000)
    for at in range(2000 + len(b"password: "), len(data), len(value)):
        assert redact._closed(data, at, b"(")
    assert sum(scanned) < 2 * len(data)


class _Bound:
    """How many bytes (or other units) the redactor's work went over, and how many it may: past ``bound`` it raises
    at once, from inside the counted call, so that work grown quadratic fails in about the time a linear run takes
    rather than hold the suite for minutes."""

    def __init__(self, what: str, bound: int) -> None:
        self.what, self.bound, self.count = what, bound, 0

    def add(self, n: int) -> None:
        """Counts ``n`` more (1 at least); an AssertionError when that passes the bound."""
        self.count += n if n > 0 else 1
        if self.count > self.bound:
            raise AssertionError(f"{self.what} passed {self.bound:,} ({self.count:,} so far): not linear any more")


class _CountedMatch:
    """A match whose ``re`` is the counted pattern (the redactor asks ``m.re is _OPTION``)."""

    def __init__(self, match: Any, pattern: _CountedPattern) -> None:
        self._match, self.re = match, pattern

    def __getattr__(self, name: str) -> Any:
        return getattr(self._match, name)


class _CountedPattern:
    """A compiled pattern that adds to ``bound`` what each search goes over: from where it starts to the end of
    what it finds (to its range's end when it finds nothing; a match that fails, 1)."""

    def __init__(self, pattern: Any, bound: _Bound) -> None:
        self._pattern, self._bound = pattern, bound

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pattern, name)

    def __hash__(self) -> int:  # the redactor's tables are keyed by the patterns themselves
        return hash(self._pattern)

    def __eq__(self, other: object) -> bool:
        return other is self or other is self._pattern

    def _found(self, found: Any, start: int, end: int) -> Any:
        self._bound.add((end if found is None else found.end()) - start)
        return None if found is None else _CountedMatch(found, self)

    def search(self, string: Any, pos: int = 0, endpos: int | None = None) -> Any:
        found = self._pattern.search(string, pos) if endpos is None else self._pattern.search(string, pos, endpos)
        return self._found(found, pos, len(string) if endpos is None else min(endpos, len(string)))

    def match(self, string: Any, pos: int = 0, endpos: int | None = None) -> Any:
        found = self._pattern.match(string, pos) if endpos is None else self._pattern.match(string, pos, endpos)
        return self._found(found, pos, pos + 1)

    def fullmatch(self, string: Any, pos: int = 0, endpos: int | None = None) -> Any:
        end = len(string) if endpos is None else min(endpos, len(string))
        return self._found(self._pattern.fullmatch(string, pos, end), pos, end)

    def finditer(self, string: Any, pos: int = 0, endpos: int | None = None) -> Any:
        at, end = pos, len(string) if endpos is None else min(endpos, len(string))
        for found in self._pattern.finditer(string, pos, end):
            self._bound.add(found.end() - at)
            at = found.end()
            yield _CountedMatch(found, self)
        self._bound.add(end - at)

    def findall(self, string: Any, *args: Any, **kwargs: Any) -> Any:
        self._bound.add(len(string))
        return self._pattern.findall(string, *args, **kwargs)

    def sub(self, repl: Any, string: Any, *args: Any, **kwargs: Any) -> Any:
        self._bound.add(len(string))
        return self._pattern.sub(repl, string, *args, **kwargs)

    def split(self, string: Any, *args: Any, **kwargs: Any) -> Any:
        self._bound.add(len(string))
        return self._pattern.split(string, *args, **kwargs)


class _Scanned(bytes):
    """A text's bytes that add to ``bound`` how many bytes each search of them goes over: ``find`` and ``rfind``
    up to what they find (all the range if nothing), ``count`` all its range."""

    bound: _Bound

    def find(self, sub: bytes, start: int = 0, end: int | None = None) -> int:  # type: ignore[override]
        found = super().find(sub, start, end)
        stop = found + len(sub) if found >= 0 else len(self) if end is None else min(end, len(self))
        self.bound.add(stop - start)
        return found

    def rfind(self, sub: bytes, start: int = 0, end: int | None = None) -> int:  # type: ignore[override]
        found = super().rfind(sub, start, end)
        self.bound.add((len(self) if end is None else min(end, len(self))) - (found if found >= 0 else start))
        return found

    def count(self, sub: bytes, start: int = 0, end: int | None = None) -> int:  # type: ignore[override]
        self.bound.add((len(self) if end is None else min(end, len(self))) - start)
        return super().count(sub, start, end)


def _counted_text(monkeypatch: pytest.MonkeyPatch, text: str, times: int) -> str:
    """``text`` as a string whose UTF-8 bytes count each ``find``, ``rfind`` and ``count`` of them, with every
    pattern of the redactor's module counting what it searches (those a function takes as a default stay
    uncounted), all against one bound of ``times`` the text's length."""
    what = f"the bytes the redactor's searches went over ({times} x the text's {len(text):,})"
    bound = _Bound(what, times * len(text))
    proxies: dict[int, _CountedPattern] = {}

    def counted(value: Any) -> Any:
        if isinstance(value, re.Pattern | type(redact._PAIR)):
            return proxies.setdefault(id(value), _CountedPattern(value, bound))
        if type(value) is tuple and any(isinstance(v, re.Pattern | type(redact._PAIR)) for v in value):
            return tuple(map(counted, value))
        if type(value) is dict and any(isinstance(v, re.Pattern | type(redact._PAIR)) for v in value.values()):
            return {k: counted(v) for k, v in value.items()}
        return value

    for name, value in list(vars(redact).items()):
        if (proxy := counted(value)) is not value:
            monkeypatch.setattr(redact, name, proxy)

    class Text(str):  # what the redactor searches: its bytes, counted
        def encode(self, encoding: str = "utf-8", errors: str = "strict") -> bytes:
            data = _Scanned(super().encode(encoding, errors))
            data.bound = bound
            return data

    return Text(text)


@pytest.mark.parametrize(
    ("text", "judged"),
    [("password: a b " * 75000, 1), ("psk='a b " * 30000, 30000)],
    ids=["a line of values", "quoted values none closes"],
)
def test_a_long_line_of_password_values_is_redacted_in_linear_time(
    monkeypatch: pytest.MonkeyPatch, text: str, judged: int
) -> None:
    """Each password value of several words looked for its line's end, and for code, over the whole rest of the
    line, so a line of many (any command's output) took time growing as its square: 112 KB took 63 s. With no bound
    on how far a password's line is looked for, each value of a line of many still looks for its end once: the
    line's end, and the code in it, are found once for all the values of that line. Here a line of 1 MB, and one of
    300 KB of quoted values none of which closes. What is searched is counted, not timed (``_counted_text``): at most
    20 times the text in all (4 and 14 times now; looking for each value's end on would be some 10**10 bytes), and
    no value is judged twice."""
    calls: list[int] = []

    def counted(data: bytes, m: Any) -> bool:
        calls.append(m.start(3))
        return judge(data, m)

    judge = redact._secret_value
    monkeypatch.setattr(redact, "_secret_value", counted)
    counted_text = _counted_text(monkeypatch, text, 20)
    out = Redactor(environ={}, home="/home/ann").text(counted_text)
    if judged == 1:
        assert out == "password: [redacted key] "
    else:
        assert "psk=" in out and "a b" not in out
    assert len(calls) == judged, len(calls)


@pytest.mark.parametrize(
    ("text", "judged"),
    [("password: a b " * 2000, 1), ("password: a b\n" * 50, 50), ('{"c": "' + "password: a b " * 500 + '\\nls"}', 1)],
    ids=["a line", "lines", "json text"],
)
def test_the_values_a_value_that_ends_its_line_holds_are_not_judged_again(
    monkeypatch: pytest.MonkeyPatch, text: str, judged: int
) -> None:
    """Each key word of a line of many was judged (``password: a b`` 75,000 times in a megabyte line, some 6 s of
    CPU), each finding the same end of its line: the value of every key word after one whose value ends its line
    starts and ends inside that one's, which the search now goes on past. A line of its own is judged each."""
    calls = []

    def counted(data: bytes, m: Any) -> bool:
        calls.append(m.start(3))
        return redact._secret_value(data, m)

    monkeypatch.setattr(redact, "_secret_value", counted)
    r = Redactor(environ={}, home="/home/ann")
    monkeypatch.undo()
    assert r.text(text) == Redactor(environ={}, home="/home/ann").text(text) and len(calls) == judged, len(calls)


@pytest.mark.parametrize("text", ["Token: Enter the token you were given.", "secret: Never share this with anyone!"])
def test_prose_after_a_key_word_keeps_its_capitalised_first_word(text: str) -> None:
    """A prompt or a message after a key word not named for a password (``Token: Enter the token you were
    given.``) lost its first word as a secret when that word was capitalised: words of prose to the end of the
    line, among them a word no secret is made of (``your``, ``the``, ``it``), are a sentence."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("password: Eat the red apple", "password: [redacted key]"),
        ("passphrase: Purple Monkey Dishwasher", "passphrase: [redacted key]"),
        ("db:\n  password: Eat the red apple  \n  user: app\n", "db:\n  password: [redacted key]  \n  user: app\n"),
        ("DB_PASSWORD=Eat the red apple\nPORT=5432", "DB_PASSWORD=[redacted key]\nPORT=5432"),
        ("  db_password: No more secrets", "  db_password: [redacted key]"),
        ("psk = my home wifi", "psk = [redacted key]"), ("dbPass: it is in the vault", "dbPass: [redacted key]"),
        ("Your new password: Eat the red apple", "Your new password: [redacted key]"),
        ("password: Please enter your password", "password: [redacted key]"),
        ("passwd: password updated successfully", "passwd: [redacted key]"),
        ("password: 'Eat the red apple", "password: '[redacted key]"),
        ('{"cmd": "export PASSWORD=Eat the red apple", "n": 1}', '{"cmd": "export PASSWORD=[redacted key]", "n": 1}'),
        ('{"content": "password: Eat the red apple\\nuser: app"}', '{"content": "password: [redacted key]\\nuser: app"}'),
        ('"{\\"c\\": \\"password: Eat the red apple\\\\nx\\"}"', '"{\\"c\\": \\"password: [redacted key]\\\\nx\\"}"'),
    ],
)  # fmt: skip
def test_a_password_of_several_words_goes_to_the_end_of_its_line(text: str, out: str) -> None:
    """A value after a key named for a password and ``:`` or ``=`` was read as prose when a word no password is made
    of was among its words (``password: Eat the red apple`` went out whole) and else went as its first word only
    (``passphrase: [redacted key] Monkey Dishwasher``); it is the rest of its line now (to a line break, or a quote
    or a line break as JSON text escapes them), one key, whatever its words."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == out and r.summary() == {"key": 1, "env": 0, "email": 0, "home": 0}


@pytest.mark.parametrize(("text", "secret"), [("password: Hunter two\n", "Hunter"), ("password: Correct horse battery staple", "Correct")])  # fmt: skip
def test_words_after_a_password_that_make_no_sentence_still_go(text: str, secret: str) -> None:
    r = Redactor(environ={}, home="/home/ann")
    assert secret not in r.text(text)


def test_code_and_prose_without_a_key_and_its_sign_stay() -> None:
    """Prose that names a password with no sign after it, and code whose value is a call, an attribute, a literal
    or a short name followed by more code, keep their words."""
    text = """please enter your password
Please enter your password.
The password is in the vault.
password = None if anonymous else read()
password = get_password() or default()
password = pwd or ''
password: Optional[str] = None
password=args.password, user=bob
const { password: pw } = creds; { password: pwd }
PASSWORD=123 TOKEN_TTL=3600
"""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("password = me and you forever", "password = [redacted key]"),
        ("DB_PASSWORD = correct and horse\n", "DB_PASSWORD = [redacted key]\n"),
        ("passphrase = not if you else apple12", "passphrase = [redacted key]"),
        ('{"c": "password = me or you forever\\nx = 1"}', '{"c": "password = [redacted key]\\nx = 1"}'),
    ],
)  # fmt: skip
def test_a_passphrase_of_condition_words_after_a_spaced_equals_goes_whole(text: str, out: str) -> None:
    """After `` = `` any ``and``, ``or``, ``not``, ``if`` or ``else`` on the line made it code, so that only the first
    word was judged (``password = me and you forever`` went out whole, ``me`` being short); it is code now only
    when it reads as a condition and one of its operands is code's own (``_condition``)."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == out and r.summary() == {"key": 1, "env": 0, "email": 0, "home": 0}


def test_a_condition_after_a_spaced_equals_stays() -> None:
    """Code that assigns a condition keeps its words: an operand is a string, a literal, a reference, a dotted or
    snake_case name, or the key's own name."""
    text = """password = pwd or ''
password = password or fallback
password = pwd if ok else None
password = x is not None
password = $pw or $default
passphrase = self.phrase and cached
password = pwd or default_password
"""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0
    escaped = orjson.dumps({"c": text}).decode()
    assert r.text(escaped) == escaped
    _redacts('password = pwd or "x"', 'password = pwd or "[redacted key]"')  # (a literal it may take: the password)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("password=Sup3rSecret", "password=[redacted key]"),
        ("password=MySecret123", "password=[redacted key]"),
        ("client_secret=SUPERsecretKEY", "client_secret=[redacted key]"),
        ("login(password=MySecret123)", "login(password=[redacted key])"),
    ],
)  # fmt: skip
def test_a_password_that_holds_the_key_word_with_digits_or_random_case_goes(text: str, out: str) -> None:
    """``password=Sup3rSecret`` was kept: a value holding the key word (``Secret``) in a name of several words was
    taken for code's variable passed on (``password=userPassword``), digits and all. A name is words without a
    digit; one with digits inside or after them, or cases mixed at random, is a password made to look like one."""
    _redacts(text, out)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("docker login -u bob --password Abcde0.A00 r.io", "docker login -u bob --password [redacted key] r.io"),
        ("password: Summer2024.Fall", "password: [redacted key]"),
        ("tool --api-key Abcd1.Efgh2 run", "tool --api-key [redacted key] run"),
    ],
)  # fmt: skip
def test_a_dotted_password_with_digits_goes(text: str, out: str) -> None:
    """``--password Abcde0.A00`` and ``password: Summer2024.Fall`` were kept: a value of names joined by dots was
    taken for an attribute (``args.api_key``) when each part read as a word, digits after it and all. A name is
    words without a digit, as for a name holding the key word; a dotted value with one is data."""
    _redacts(text, out)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("password: ab(cd1234", "password: [redacted key]"),
        ("DB_PASSWORD = xy[Zw9876\nPORT = 5432", "DB_PASSWORD = [redacted key]\nPORT = 5432"),
        ("api_key: Abc123<def", "api_key: [redacted key]"),
        ('{"c": "password: ab(cd1234\\nls()"}', '{"c": "password: [redacted key]\\nls()"}'),
        ('{"c": "password: ab{cd1234"}', '{"c": "password: [redacted key]"}'),
        ("password: Abcde0[,00", "password: [redacted key]"),
    ],
)  # fmt: skip
def test_a_bracket_inside_a_value_that_closes_nothing_is_the_passwords(text: str, out: str) -> None:
    """``password: ab(cd1234`` was kept: a bracket after a name in a value was taken for a call, an index or a
    type's (``getpass()``, ``Optional[str]``), though nothing closes it on the line (and ``,00`` of
    ``password: Abcde0[,00`` went out, the value not followed past the comma). A bracket that closes nothing there,
    in a JSON string before the string's end, is the password's own character."""
    _redacts(text, out)


def test_a_call_an_index_or_a_type_after_a_key_word_stays() -> None:
    _stays("token = next_token()\npassword: Optional[str] = None\ntoken = response.json()[\"token\"]\n"
           "x = f(password=getpass(prompt))\npassword: Dict<str, str>\n")


def test_a_name_holding_the_key_word_assigned_in_code_stays() -> None:
    _stays("password=userPassword\nself.password = new_password\ntoken=accessToken\napi_key = API_KEY\n"
           '"password": password_hash\n')


def test_a_field_annotated_with_a_token_class_is_no_secret() -> None:
    """A dataclass's or a settings class's field annotated with a class named for a token (``token: AccessToken``,
    ``refresh_token: RefreshToken``) on a line of its own was taken for a YAML password."""
    text = "@dataclass\nclass Login:\n    token: AccessToken\n    refresh_token: RefreshToken\ntoken: AccessToken"
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    "text",
    [
        "api_key=[redacted key]", "password: [redacted key]\n", "Authorization: Bearer [redacted key]",
        "password=[redacted]", 'token = "[redacted key]"', "DB_PASSWORD=[redacted env] and mail [redacted email]",
    ],
)  # fmt: skip
def test_text_that_holds_a_redaction_already_is_not_redacted_again(text: str) -> None:
    """An export of an export, or a log that quotes one: ``api_key=[redacted key]`` became ``api_key=[redacted
    key] key]``, counted as a key found."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


def test_a_secret_after_a_redaction_still_goes() -> None:
    r = Redactor(environ={}, home="/home/ann")
    assert r.text("api_key=[redacted key] password=hunter2pw") == "api_key=[redacted key] password=[redacted key]"


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
def test_the_summary_counts_no_problem_past_those_listed_nor_a_path_not_shown(tmp_path: Path, fmt: str) -> None:
    """The header's counts said more than the file holds: every diagnostic's redaction was counted where the HTML
    lists 50 and the Markdown 5, and the log's path (a home directory) where the HTML never shows it. The counts
    are now those of the redacted texts the file shows: a row, a listed diagnostic, the path where it is shown."""
    lines = BASE.read_bytes().splitlines(keepends=True)
    odd = [orjson.dumps({"type": f"mail{i}@example.com", "seq": "x", "data": 5}) + b"\n" for i in range(60)]
    log = tmp_path / "home" / "s" / "session.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"".join(lines[:10] + odd + lines[10:]))
    out = io.BytesIO()
    doc = export(log, out, fmt, ExportOptions(redactor=Redactor(environ={}, home=str(tmp_path / "home"))))
    text = out.getvalue().decode()
    assert str(tmp_path) not in text
    # each odd event's row (one place, counted once) shows its redacted type twice: as its type and in its summary
    shown = text.count("[redacted email]") + text.count("\\[redacted email\\]")
    assert doc["redaction"]["email"] == shown - (0 if fmt == "md" else 60)
    assert doc["redaction"]["home"] == (0 if fmt == "html" else 1)  # the path: JSON's field, Markdown's commands


@pytest.mark.parametrize(("fmt", "types", "keys"), [("md", "", 1), ("html", "user/", 1), ("json", "user/", 1), ("html", "", 2)])
def test_the_summary_counts_a_secret_in_the_title_the_head_shows(tmp_path: Path, fmt: str, types: str, keys: int) -> None:
    """Every head shows the session's title; the summary counted a key in it only with the title's row, so the
    Markdown (which shows no such row) and a filtered page without it said ``0 key`` above ``[redacted key]``."""
    from core.read.event_filter import EventFilter

    items = [orjson.loads(line) for line in BASE.read_bytes().splitlines()]
    for item in items:
        if item.get("type") == "session/title":
            item["data"]["title"] = "deploy with sk-proj-Zq81xVb2LmN0pQr5StUv7WxYz"
    log = tmp_path / "t.jsonl"
    log.write_bytes(b"\n".join(orjson.dumps(i) for i in items) + b"\n")
    out = io.BytesIO()
    flt = EventFilter.parse(types, "", "", False, "") if types else None
    doc = export(log, out, fmt, ExportOptions(filter=flt, redactor=Redactor(environ={}, home="/nonexistent")))
    assert "Zq81" not in out.getvalue().decode() and "redacted key" in out.getvalue().decode()
    assert doc["redaction"]["key"] == keys


@pytest.mark.parametrize(("fmt", "homes"), [("json", 1), ("html", 1), ("md", 0)])
def test_the_summary_counts_the_working_directory_where_the_head_shows_it(tmp_path: Path, fmt: str, homes: int) -> None:
    """The session's working directory (``/home/bob/proj``) was counted as a home replaced in the Markdown too,
    whose head does not show it."""
    items = [orjson.loads(line) for line in BASE.read_bytes().splitlines()]
    items[0]["cwd"] = "/home/bob/proj"
    log = tmp_path / "t.jsonl"
    log.write_bytes(b"\n".join(orjson.dumps(i) for i in items) + b"\n")
    out = io.BytesIO()
    doc = export(log, out, fmt, ExportOptions(redactor=Redactor(environ={}, home="/home/bob")))
    assert "/home/bob" not in out.getvalue().decode()
    assert doc["redaction"]["home"] == homes


def test_every_event_type_of_the_log_s_vocabulary_is_a_word_of_its_structure() -> None:
    """tapedeck's own event types were written out again by hand in ``WORDS``: one added to the vocabulary would have
    been redacted as text. They are taken from ``core.log.vocabulary`` now, and this keeps them there."""
    assert {*KNOWN_TYPES, *PACKED_ROW_TYPES, *TAPEDECK_TYPES} <= STRUCTURE_WORDS


def test_a_word_of_the_log_s_structure_is_left_as_redacting_it_would_leave_it() -> None:
    r = Redactor(environ={}, home="/home/ann")
    assert [w for w in sorted(STRUCTURE_WORDS) if r.text(w) != w] == [] and r.summary() == dict.fromkeys(KINDS, 0)
    assert r.walk({"type": "x/ann@example.com", "role": "tool", "kind": "/home/ann/k"}) == {
        "type": "x/[redacted email]", "role": "tool", "kind": "~/k"}


@pytest.mark.parametrize(("at", "commands"), [(None, 2), (4, 0)])
def test_the_markdown_counts_the_log_s_path_in_each_command_it_gives(tmp_path: Path, at: int | None, commands: int) -> None:
    """The Markdown names the log's path (its home redacted) in each command it gives: the request's, and one per
    tool result it clips; the summary counted that path once however many commands showed it, or none at all for
    a clipped result's command, and once where no command showed it (a moment before any request). It counts it
    in each command the file holds now (those of the rows the transcript shows)."""
    home = tmp_path / "home" / "bob"
    (home / "s").mkdir(parents=True)
    log = plant(home / "s" / "session.jsonl", "go", "x" * 2_000, "done")
    out = io.BytesIO()
    doc = export(log, out, "md", ExportOptions(at=at, redactor=Redactor(environ={}, home=str(home))))
    text = out.getvalue().decode()
    assert str(home) not in text
    assert text.count("`tapedeck ") == text.count(" ~/s/session.jsonl") == commands
    assert doc["redaction"]["home"] == commands


def test_a_key_of_a_json_object_is_redacted_as_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A damaged or forged log can make anything a key (an e-mail address, an API key, a home): keys were never
    redacted, so an unknown event's summary and a tool call's arguments showed them as they were, in its row and in
    the surface's copy of the call."""
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    key = "sk-ant-api03-" + "A" * 40
    items = [orjson.loads(line) for line in BASE.read_bytes().splitlines()]
    items.append({"type": "x/y", "data": {"ann@example.com": 1, key: {"/home/zed/q": 2}}, "ignorable": True})
    log = tmp_path / "keys.jsonl"
    log.write_bytes(b"\n".join(orjson.dumps(i) for i in items) + b"\n")
    with_arguments(log, {"carl@example.net": "v", "command": "ls"})
    for fmt in ("json", "html"):  # Markdown shows neither
        text = _export(log, fmt, Redactor(environ={}, home="/home/zed")).decode()
        for secret in ("ann@example.com", key, "/home/zed", "carl@example.net"):
            assert secret not in text, (fmt, secret)
        assert "command" in text
    r = Redactor(environ={}, home="/home/zed")
    seen: Seen = {}
    value = {"args": {"carl@example.net": "v"}, "note": "mail bob@example.org"}
    walked = r.walk(value, seen=seen)
    assert walked == {"args": {"[redacted email]": "v"}, "note": "mail [redacted email]"}
    assert r.aside([value["args"]], seen=seen) == ([walked["args"]], (0, 0, 1, 0))


def test_a_key_that_only_names_a_word_an_environment_secret_holds_is_kept(tmp_path: Path) -> None:
    """A secret's variable may hold a word (``DB_PASSWORD=password``, a value ``message`` or ``arguments``): redacted
    in a key too, it took the log's own keys (an event's ``message``, a call's ``arguments``), so the rows lost
    their text and an export ended in a KeyError. A key is a name: such a word stays there (not in a text), while
    a random token an environment secret holds goes from a key as from any text."""
    environ = {"DB_PASSWORD": "message", "API_TOKEN": "arguments", "X_SECRET": "Zq81xVb2Lm"}
    r = Redactor(environ=environ, home="/nonexistent-home")
    value = {"message": {"content": "the message"}, "arguments": 1, "Zq81xVb2Lm": 2}
    assert r.walk(value) == {"message": {"content": "the [redacted env]"}, "arguments": 1, "[redacted env]": 2}
    plain = orjson.loads(_export(BASE, "json", Redactor(environ={}, home="/nonexistent-home")))
    doc = orjson.loads(_export(BASE, "json", r))
    assert [row["summary"] for row in doc["events"]] == [
        row["summary"].replace("message", "[redacted env]").replace("arguments", "[redacted env]")
        for row in plain["events"]
    ]


def test_two_keys_that_redact_to_one_text_are_both_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two keys of one object that redaction makes the same text (two e-mail addresses, a home and ``~``) were one
    key, holding the later's value: the earlier value was gone from the export without a word. Both stay, the later
    numbered, and no number of the export changes (nor an object's size)."""
    r = Redactor(environ={}, home="/nonexistent-home")
    value = {"ann@example.com": 1, "bob@example.com": {"n": 2}, "~": 3, "/home/zed": 4, "[redacted email] (2)": 5}
    assert r.walk(value) == {"[redacted email]": 1, "[redacted email] (2)": {"n": 2}, "~": 3, "~ (2)": 4,
                             "[redacted email] (2) (2)": 5}  # fmt: skip
    monkeypatch.setenv("TAPEDECK_HOME", str(tmp_path / "home"))
    items = [orjson.loads(line) for line in BASE.read_bytes().splitlines()]
    items.append({"type": "x/y", "data": {"ann@example.com": 11, "bob@example.com": 22}, "ignorable": True})
    log = tmp_path / "keys.jsonl"
    log.write_bytes(b"\n".join(orjson.dumps(i) for i in items) + b"\n")
    row = orjson.loads(_export(log, "json", Redactor(environ={}, home="/nonexistent-home")))["events"][-1]
    assert "11" in row["summary"] and "22" in row["summary"], row


def test_many_keys_that_redact_to_one_text_are_numbered_in_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Numbering each key already taken tried (2), (3) … from the start for every one, so an object of many e-mail
    keys (one forged line) took time growing as their square: 8,000 took 11 s, 50,000 would hold an export for
    minutes. Counted, not timed: each key is named twice at most (its number taken, the next), not once for
    each number below it."""
    named = _Bound("the names tried for the keys (2 x their 20,000)", 2 * 20000)

    class Key(str):  # a key redaction made, that counts each name made of it
        def __format__(self, spec: str) -> str:
            named.add(1)
            return super().__format__(spec)

    apart = redact._apart
    monkeypatch.setattr(redact, "_apart", lambda pairs: apart([(Key(k), v) for k, v in pairs]))
    out = Redactor(environ={}, home="/nonexistent-home").walk({f"u{i}@example.com": i for i in range(20000)})
    assert len(out) == 20000 and out["[redacted email] (20000)"] == 19999


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("**Password:** Eat the red apple", "**Password:** [redacted key]"),
        ("- **Password**: hunter2pw\n- **User**: bob", "- **Password**: [redacted key]\n- **User**: bob"),
        ("__Password__: hunter2pw", "__Password__: [redacted key]"), ("*password*: hunter2pw", "*password*: [redacted key]"),
        ("**DB_PASSWORD:** `hunter2pw`", "**DB_PASSWORD:** `[redacted key]`"),
    ],
)  # fmt: skip
def test_a_password_after_a_key_in_markdown_emphasis_goes(text: str, out: str) -> None:
    """A model's answer writes its labels in Markdown's emphasis (``**Password:** hunter2pw``): the stars between the
    key word and its colon, or after the colon, hid the pair, and the password went out."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == out and r.summary() == {"key": 1, "env": 0, "email": 0, "home": 0}
    assert r.walk({"text": text}) == {"text": out}  # the screen lets it through to the patterns


def test_a_masked_password_in_markdown_emphasis_stays() -> None:
    text = "**Password:** ***\n**Password**: `<your password>`\n"
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


def test_many_key_words_far_into_a_text_are_redacted_in_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a key word starts a config file's line was asked by looking back for the line's start as far as the
    text's start, past every line when its text has no escaped line break or quote (a tool's output, read whole):
    2.5 MB of 'token: …' lines took 88 s. Here 10,000 of them after 4 MB of one line; what is searched is counted
    (``_counted_text``): at most 20 times the text (12 now, each line looking back a bounded way; back to the
    text's start from each, some 10**10 bytes)."""
    text = "x" * (4 << 20) + "\n" + "".join(f"line {i} token: Abcdefgh{i}\n" for i in range(10000))
    counted = _counted_text(monkeypatch, text, 20)
    r = Redactor(environ={}, home="/home/ann")
    out = r.text(counted)
    assert r.summary()["key"] == 10000 and out.endswith("line 9999 token: [redacted key]\n")


def test_a_string_under_a_pass_or_pw_key_of_a_json_object_goes_as_its_number_did() -> None:
    """``{"pass": 12345678}`` lost its number as a password, but ``{"pass": "hunter2pw"}`` and ``{"pw": …}`` kept
    their string, in an object and in JSON text alike (a tool call's arguments): those keys are a password's."""
    r = Redactor(environ={}, home="/home/ann")
    value = {"pass": "hunter2pw", "PW": "abc12", "pass_ok": "yes", "bypass": "hunter2pw", "compass": "north west",
             "passes": 3, "pass2": True, "pw_hint": "n/a", "nested": {"Pass": "Eat the red apple"}}  # fmt: skip
    assert r.walk(value) == {**value, "pass": "[redacted key]", "PW": "[redacted key]",
                             "nested": {"Pass": "[redacted key]"}}  # fmt: skip
    text = '{"user": "bob", "pass": "hunter2pw", "pw": "Eat the red apple", "compass": "north"}'
    assert r.text(text) == '{"user": "bob", "pass": "[redacted key]", "pw": "[redacted key]", "compass": "north"}'


def test_many_options_far_into_a_text_are_judged_in_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a -N or -P option is ssh-keygen's was asked by looking back for its command's start (a line break, a
    pipe, ';', '&') as far as the text's start for each of them, so every such option scanned all that came before
    it: 0.9 MB of 'cp -P …' lines took 19 s, growing as the square of the text. Here 10,000 of them after 16 MB of
    one line, then a passphrase change that is redacted as before; what is searched is counted (``_counted_text``):
    at most 4 times the text (2.4 now; back to the text's start from each, some 10**11 bytes)."""
    text = "x" * (16 << 20) + "\n" + "".join(f"cp -P src{i} dst{i}\n" for i in range(10000))
    counted = _counted_text(monkeypatch, text + "ssh-keygen -p -P oldpass1 -N newpass1 -f key\n", 4)
    r = Redactor(environ={}, home="/home/ann")
    out = r.text(counted)
    assert r.summary()["key"] == 2 and out.endswith("ssh-keygen -p -P [redacted key] -N [redacted key] -f key\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [("_auth=_0000000", "_auth=[redacted key]"), ("_authToken=_abcdef1", "_authToken=[redacted key]"),
     ("password: __init__x9", "password: [redacted key]"), ("**Password:** hunter2pw", "**Password:** [redacted key]")],
)  # fmt: skip
def test_a_value_starting_with_an_underscore_is_not_read_as_a_labels_emphasis(text: str, out: str) -> None:
    """af77ef5 let Markdown's emphasis follow a label's colon (``**Password:** …``), which took a value's leading
    ``_`` for it: ``_auth=_0000000`` went out as the number it left (the planted-secret property's case), others
    with their ``_`` shown. Emphasis after the colon is one only when a blank follows it."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == out


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("ALTER USER bob WITH PASSWORD 'hunter2pw';", "ALTER USER bob WITH PASSWORD '[redacted key]';"),
        ("CREATE ROLE app LOGIN PASSWORD 'Eat the red apple'", "CREATE ROLE app LOGIN PASSWORD '[redacted key]'"),
        ("CREATE USER 'x'@'%' IDENTIFIED BY 'hunter2pw';", "CREATE USER 'x'@'%' IDENTIFIED BY '[redacted key]';"),
        ('{"sql": "alter user bob password \\"hunter2pw\\""}', '{"sql": "alter user bob password \\"[redacted key]\\""}'),
        ("the password 'hunter2pw' is too weak", "the password '[redacted key]' is too weak"),
    ],
)  # fmt: skip
def test_a_quoted_password_after_sql_s_password_or_identified_by_goes(text: str, out: str) -> None:
    """SQL gives a password after the word, with no sign between (``ALTER USER … WITH PASSWORD 'hunter2pw'``,
    MySQL's ``IDENTIFIED BY '…'``): no pattern took it, in a tool call's SQL or a log of it."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == out and r.summary() == {"key": 1, "env": 0, "email": 0, "home": 0}
    assert r.walk({"text": text}) == {"text": out}


def test_sql_without_a_quoted_password_stays() -> None:
    text = "ALTER USER bob WITH PASSWORD NULL; -- password '' is empty; password '$PASS' or '<password>'\n"
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("docker login -u bob -p hunter2pw registry.example.com", "docker login -u bob -p [redacted key] registry.example.com"),
        ("podman login --username bob -p 'hunter2pw' quay.io", "podman login --username bob -p '[redacted key]' quay.io"),
        ('{"command": "docker login -p hunter2pw ghcr.io"}', '{"command": "docker login -p [redacted key] ghcr.io"}'),
    ],
)  # fmt: skip
def test_the_password_docker_login_takes_goes(text: str, out: str) -> None:
    """``docker login -p …`` (and podman's) gives the registry's password on the command line: it went out."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == out and r.summary() == {"key": 1, "env": 0, "email": 0, "home": 0}
    assert r.walk({"text": text}) == {"text": out}


def test_docker_options_that_are_no_password_stay() -> None:
    text = "docker run -p 8080:80 nginx; docker login -u bob --password-stdin; docker login -p \"$REGISTRY_PW\" h\n"
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


def test_a_url_s_user_named_root_is_no_home() -> None:
    """``mysql://root@localhost/app`` read as the home ``/root`` after the scheme's first slash: the export showed
    ``mysql:/~@localhost/app`` and counted a home. A URL's user is none; ``/root`` where a path starts still goes."""
    text = "mysql://root@localhost/app and postgres://root:@db/x\n"
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0
    assert r.text("ls /root/.ssh; root:x:0:0:root:/root:/bin/bash") == "ls ~/.ssh; root:x:0:0:root:~:/bin/bash"


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("<password>hunter2pw</password>", "<password>[redacted key]</password>"),
        ("<secret>Welcome2024</secret>", "<secret>[redacted key]</secret>"),
        ("<apiKey>a9f8e7d6c5</apiKey>", "<apiKey>[redacted key]</apiKey>"),
        ('<db:password type="plain">open sesame</db:password>', '<db:password type="plain">[redacted key]</db:password>'),
        ("<client_secret>\n  hunter2pw\n</client_secret>", "<client_secret>\n  [redacted key]\n</client_secret>"),
        ('{"content": "<Password>hunter2pw</Password>\\n"}', '{"content": "<Password>[redacted key]</Password>\\n"}'),
        ("<pwd>4711</pwd>", "<pwd>[redacted key]</pwd>"),
    ],
)  # fmt: skip
def test_the_text_of_an_xml_element_named_for_a_secret_goes(text: str, out: str) -> None:
    """A Maven ``settings.xml``'s ``<password>hunter2pw</password>`` (or ``<secret>``, ``<apiKey>``) went out whole:
    the element's text is the secret, its tags stay."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == out and r.summary() == {"key": 1, "env": 0, "email": 0, "home": 0}
    assert r.walk({"text": text}) == {"text": out}


def test_xml_elements_that_hold_no_secret_stay() -> None:
    """A placeholder, an empty element, a count, a tag that only starts with a key word, unmatched tags."""
    text = ("<password>${env.DB_PASSWORD}</password><secret></secret><max_token>4096</max_token>"
            "<passwordHash>abc</passwordHash><tokens>12</tokens><password>hunter2pw</user>")
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("password: |\n  hunter2secret\n  more words\nuser: app", "password: |\n  [redacted key]\nuser: app"),
        ("db:\n  password: >-\n    Eat the red\n    apple99\n\n  host: db\n", "db:\n  password: >-\n    [redacted key]\n\n  host: db\n"),
        ("- client_secret: |+  # rotated\n\n    s3cr3tValue\n- name: x", "- client_secret: |+  # rotated\n\n    [redacted key]\n- name: x"),
        ("apiKey: >\n  a9f8e7d6c5", "apiKey: >\n  [redacted key]"),
        ('{"content": "password: |\\n  hunter2secret\\n  more\\nuser: app"}', '{"content": "password: |\\n  [redacted key]\\nuser: app"}'),
        ('{"c": "x:\\n  token: |-\\n    ghx7Ab9zz\\n", "n": "password: |\\n  nope"}', '{"c": "x:\\n  token: |-\\n    [redacted key]\\n", "n": "password: |\\n  [redacted key]"}'),
    ],
)  # fmt: skip
def test_a_yaml_block_scalar_under_a_key_named_for_a_secret_goes(text: str, out: str) -> None:
    """A YAML block scalar (``password: |`` or ``>-``, the secret on the lines indented under it) went out whole: no
    value followed the key on its line. Its lines go now, up to the first line no deeper than the key (or, in
    JSON text, the string's end), one key per block; the header and what follows stay."""
    r = Redactor(environ={}, home="/home/ann")
    found = r.text(text)
    assert found == out and r.summary()["key"] == out.count("[redacted key]"), found


def test_yaml_block_scalars_that_hold_no_secret_stay() -> None:
    """A block under another key, one with no line deeper than its key, and a placeholder in one."""
    text = ("description: |\n  the password is rotated weekly\npassword: |\nuser: app\n"
            "token: >-\n  ${{ secrets.TOKEN }}\n")  # fmt: skip
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("<password><![CDATA[hunter2pw]]></password>", "<password><![CDATA[[redacted key]]]></password>"),
        ("<secret>\n  <![CDATA[ s3cr3t<&>value ]]>\n</secret>", "<secret>\n  <![CDATA[[redacted key]]]>\n</secret>"),
        ('{"c": "<apiKey><![CDATA[a9f8]e7d6c5]]></apiKey>"}', '{"c": "<apiKey><![CDATA[[redacted key]]]></apiKey>"}'),
    ],
)  # fmt: skip
def test_a_secret_in_cdata_under_an_element_named_for_one_goes(text: str, out: str) -> None:
    """An element's text written as CDATA (``<password><![CDATA[hunter2pw]]></password>``) went out: the text
    between the tags held ``<`` and ``>``. The section's content goes, its markers and the tags stay."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == out and r.summary()["key"] == 1


def test_cdata_that_holds_no_secret_stays() -> None:
    text = "<password><![CDATA[${env.PW}]]></password><max_token><![CDATA[4096]]></max_token><note><![CDATA[pw]]></note>"
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
         "aws configure set aws_secret_access_key [redacted key]"),
        ("aws configure set default.aws_secret_access_key hunter2pw --profile dev",
         "aws configure set default.aws_secret_access_key [redacted key] --profile dev"),
        ("aws configure set --profile ci aws_session_token IQoJb3JpZ2luX2VjEHcaCXVz",
         "aws configure set --profile ci aws_session_token [redacted key]"),
        ("az login -u bob -p hunter2pw", "az login -u bob -p [redacted key]"),
        ("az login --service-principal -u http://app -p 'my app secret' --tenant t",
         "az login --service-principal -u http://app -p '[redacted key]' --tenant t"),
        ('{"command": "az login -u bob -p hunter2pw && az account show"}',
         '{"command": "az login -u bob -p [redacted key] && az account show"}'),
    ],
)  # fmt: skip
def test_the_secret_aws_configure_set_or_az_login_takes_goes(text: str, out: str) -> None:
    """``aws configure set aws_secret_access_key …`` and ``az login -p …`` went out: no sign between the setting or
    the option and its value, and ``-p`` is no option named for a password. Both go as ``sshpass -p``'s does."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == out and r.summary()["key"] == 1


def test_aws_and_az_commands_without_a_secret_stay() -> None:
    text = ("aws configure set region eu-west-1\naws configure get aws_secret_access_key\naz login -p $AZ_PASSWORD\n"
            "az login --use-device-code\naz vm open-port -p 8080\n")  # fmt: skip
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("PGPASSWORD=x7hunter psql -h db -U app mydb", "PGPASSWORD=[redacted key] psql -h db -U app mydb"),
        ("MYSQL_PWD=hunter2pw mysql -u root app", "MYSQL_PWD=[redacted key] mysql -u root app"),
        ('{"command": "env DB_PASSWORD=hunter2pw ./run.sh --port 8080\\nls"}',
         '{"command": "env DB_PASSWORD=[redacted key] ./run.sh --port 8080\\nls"}'),
    ],
)  # fmt: skip
def test_a_shell_s_variable_before_a_command_hides_its_value_not_the_command(text: str, out: str) -> None:
    """``PGPASSWORD=x psql -h db …`` lost the whole command: a password's value was the rest of its line. An
    assignment with no blank around its ``=`` whose line goes on with a command's options is a shell's, whose value
    ends at the first blank; the command stays."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == out and r.summary()["key"] == 1


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("PGPASSWORD=Hunter2pw psql", "PGPASSWORD=[redacted key] psql"),
        ("PGPASSWORD=Hunter2pw pg_dump app", "PGPASSWORD=[redacted key] pg_dump app"),
        ("MYSQL_PWD=Hunter2pw mysqldump app", "MYSQL_PWD=[redacted key] mysqldump app"),
        ("DB_PASSWORD=Hunter2pw ./run.sh", "DB_PASSWORD=[redacted key] ./run.sh"),
        ("PGPASSWORD=Hunter2pw /usr/bin/psql app", "PGPASSWORD=[redacted key] /usr/bin/psql app"),
        ('{"c": "PGPASSWORD=Hunter2pw psql\\nls"}', '{"c": "PGPASSWORD=[redacted key] psql\\nls"}'),
        ("DB_PASSWORD=Purple psqlx Dishwasher", "DB_PASSWORD=[redacted key]"),
        ("password = Hunter2pw psql", "password = [redacted key]"),
        ("docker run -e POSTGRES_PASSWORD=Hunter2pw postgres", "docker run -e POSTGRES_PASSWORD=[redacted key] postgres"),
        ("podman run --env=DB_PASSWORD=Hunter2pw app:1 sh", "podman run --env=DB_PASSWORD=[redacted key] app:1 sh"),
        ('docker run -e "DB_PASSWORD=Hunter 2pw" app', 'docker run -e "DB_PASSWORD=[redacted key]" app'),
    ],
)  # fmt: skip
def test_a_shell_s_variable_before_a_command_with_no_option_keeps_the_command(text: str, out: str) -> None:
    """``PGPASSWORD=x psql`` lost ``psql``: only a command with options after it ended a password's line at the
    value's first blank. A program that reads such a variable (psql and PostgreSQL's other clients, mysql's,
    redis-cli, sshpass) or a path to one run (``./run.sh``), right after the value with no blank around ``=``, is
    that command too; any other word is still the passphrase's (``Purple psqlx Dishwasher``). So is what follows
    the variable a container's ``-e``/``--env`` option sets, an argument of the shell's (``docker run -e PW=…
    postgres`` hid the image)."""
    _redacts(text, out)


@pytest.mark.parametrize(
    "text",
    [
        "grep password 'config.yml'", 'rg -n password "settings.py"', "grep -rn password: config/",
        'git grep -i passwd: -- "*.yml"', '{"command": "grep -rn password: src/ app.yml\\n"}',
    ],
)  # fmt: skip
def test_a_key_word_a_search_tool_looks_for_has_no_value(text: str) -> None:
    """``grep password 'config.yml'`` hid the file name as SQL's quoted password, ``grep -rn password: config/``
    the directory as the rest of a password's line: the word is the pattern of a search tool (grep, rg, ag, ack,
    git grep), and the next argument is no value of it."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ('grep "password: hunter2pw" app.log', 'grep "password: [redacted key]" app.log'),
        ("grep -c \"the password 'hunter2pw'\" a.log", "grep -c \"the password '[redacted key]'\" a.log"),
        ("grep -q x f && ALTER USER bob WITH PASSWORD 'hunter2pw'", "grep -q x f && ALTER USER bob WITH PASSWORD '[redacted key]'"),
    ],
)  # fmt: skip
def test_a_password_in_a_search_tool_s_pattern_still_goes(text: str, out: str) -> None:
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == out


def test_a_word_in_an_element_named_token_stays() -> None:
    """``<token>return</token>`` (a lexer's or a language tool's output) lost its word: the text of any element named
    for a secret went. Under an element named ``token`` a text of letters only is a word, no credential."""
    text = "<tokens><token>return</token><token>Hello</token><w:token>the end</w:token></tokens>"
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0
    assert r.text("<token>ghx7Ab9zz</token><apiToken>secret</apiToken>") == (
        "<token>[redacted key]</token><apiToken>[redacted key]</apiToken>")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("mongosh -u admin -p hunter2pw --authenticationDatabase admin",
         "mongosh -u admin -p [redacted key] --authenticationDatabase admin"),
        ("sqlcmd -S db -U sa -P hunter2pw -Q 'select 1'", "sqlcmd -S db -U sa -P [redacted key] -Q 'select 1'"),
        ("ldapsearch -x -D cn=admin -w hunter2pw -b dc=x", "ldapsearch -x -D cn=admin -w [redacted key] -b dc=x"),
        ("openssl enc -aes256 -pass pass:hunter2pw -in f", "openssl enc -aes256 -pass pass:[redacted key] -in f"),
        ("openssl pkcs12 -export -passout pass:hunter2pw -out k.p12", "openssl pkcs12 -export -passout pass:[redacted key] -out k.p12"),
        ("keytool -genkey -alias a -storepass hunter2pw -keypass hunter2pw",
         "keytool -genkey -alias a -storepass [redacted key] -keypass [redacted key]"),
        ("zip -P hunter2pw a.zip f", "zip -P [redacted key] a.zip f"), ("unzip -P hunter2pw a.zip", "unzip -P [redacted key] a.zip"),
        ("7z a -phunter2pw x.7z f", "7z a -p[redacted key] x.7z f"),
        ("smbclient //h/s -U bob%hunter2pw", "smbclient //h/s -U bob%[redacted key]"),
        ('{"command": "mongo -u a -p hunter2pw db\\nls"}', '{"command": "mongo -u a -p [redacted key] db\\nls"}'),
    ],
)  # fmt: skip
def test_the_password_more_commands_take_on_their_command_line_goes(text: str, out: str) -> None:
    """The password of mongosh/mongo ``-p``, sqlcmd ``-P``, ldapsearch ``-w``, openssl's ``pass:``, keytool's
    ``-storepass``/``-keypass``, zip's ``-P``, 7-Zip's ``-p…`` and smbclient's ``-U user%…`` went out: none is an
    option named for a password. Each goes as ``sshpass -p``'s does."""
    r = Redactor(environ={}, home="/home/ann")
    found = r.text(text)
    assert found == out and r.summary()["key"] == out.count("[redacted key]"), found


def test_those_commands_without_a_password_on_their_line_stay() -> None:
    text = ("mongosh -u admin -p\nsqlcmd -S db -P $SA_PASSWORD\nldapsearch -x -W -b dc=x\n"
            "openssl enc -aes256 -pass env:PW -in f\nkeytool -list -storepass:env STOREPASS\nzip -r a.zip dir\n"
            "gzip -P x\n7z x a.7z\nsmbclient -L h -U bob\n")  # fmt: skip
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("define( 'DB_PASSWORD', 'hunter2pw' );", "define( 'DB_PASSWORD', '[redacted key]' );"),
        ("define('AUTH_KEY', 'x8#kP2!m Qz<y');", "define('AUTH_KEY', '[redacted key]');"),
        ("os.environ['DB_PASSWORD'] = 'hunter2pw'", "os.environ['DB_PASSWORD'] = '[redacted key]'"),
        ('settings["api_key"] = "a9f8e7d6c5"', 'settings["api_key"] = "[redacted key]"'),
        ('os.environ.setdefault("DB_PASSWORD", "hunter2pw")', 'os.environ.setdefault("DB_PASSWORD", "[redacted key]")'),
        ('{"code": "ENV[\\"SECRET_TOKEN\\"] = \\"hunter2pw\\"\\n"}', '{"code": "ENV[\\"SECRET_TOKEN\\"] = \\"[redacted key]\\"\\n"}'),
    ],
)  # fmt: skip
def test_a_quoted_value_given_to_a_quoted_name_for_a_secret_goes(text: str, out: str) -> None:
    """WordPress's ``define( 'DB_PASSWORD', 'hunter2pw' );``, ``os.environ['DB_PASSWORD'] = '…'`` and
    ``settings["api_key"] = "…"`` went out: the name is quoted and no ``:`` or ``=`` follows it. A quoted value
    assigned to a quoted name for a secret, or given after a constant's (``define``, ``setdefault``), goes."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == out and r.summary()["key"] == 1


def test_quoted_names_for_a_secret_with_no_secret_given_stay() -> None:
    text = ("""s.replace("token", "TOKEN_RE"); d["password"] = ""; define('DB_PASSWORD', getenv('DB_PASSWORD'));\n"""
            """os.environ["API_KEY"] = "${API_KEY}"; cfg["max_token"] = "4096"; kwargs.pop("password", "none")\n"""
            """required = ["API_KEY", "DB_PASSWORD", 'AUTH_KEY', 'NONCE_SALT']\n""")
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("Server=db;User Id=sa;Pwd=Xk3pLm9q;Database=app;", "Server=db;User Id=sa;Pwd=[redacted key];Database=app;"),
        ("Driver={ODBC};Uid=sa; PWD=Xk3pLm9q", "Driver={ODBC};Uid=sa; PWD=[redacted key]"),
        ("Server=db;Uid=sa;Pwd=MyPassword", "Server=db;Uid=sa;Pwd=[redacted key]"),
        ('{"dsn": "Server=db;Uid=sa;pwd=Xk3pLm9q;"}', '{"dsn": "Server=db;Uid=sa;pwd=[redacted key];"}'),
    ],
)  # fmt: skip
def test_the_pwd_of_a_connection_string_goes(text: str, out: str) -> None:
    """An ODBC or ADO.NET connection string's ``Pwd=…`` went out: ``Pwd`` alone is no key word (``pwd`` is a
    command). After the ``;`` that ends a connection string's previous field it is one."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == out and r.summary()["key"] == 1


def test_pwd_outside_a_connection_string_stays() -> None:
    text = "cd /srv/app;pwd\necho $PWD; ls\nPWD=/srv/app make\nServer=db;Uid=sa;Pwd=$DB_PASSWORD;\n"
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ('$db_pass = "Xk3pLm9q";', '$db_pass = "[redacted key]";'),
        ("$pass = 'two words';", "$pass = '[redacted key]';"),
        ("$mysql_pwd='Xk3pLm9q';", "$mysql_pwd='[redacted key]';"),
        ('{"code": "$db_pass = \\"Xk3pLm9q\\";"}', '{"code": "$db_pass = \\"[redacted key]\\";"}'),
    ],
)  # fmt: skip
def test_a_php_variable_named_for_a_password_goes(text: str, out: str) -> None:
    """PHP's ``$db_pass = "…"`` went out: ``pass`` after ``_`` in lower case is no key word. A PHP variable whose
    name is or ends in ``pass``, ``pw`` or ``pwd`` is one."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == out and r.summary()["key"] == 1


def test_php_code_that_names_a_password_stays() -> None:
    text = "$db_pass = $_POST['pass'];\n$pass = md5($input);\n$db_pass = DB_PASS;\n$bypass = 'yes please';\n"
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("SECRET_KEY_BASE=9f8e7d6c5b4a3928", "SECRET_KEY_BASE=[redacted key]"),
        ("  secret_key_base: Xk3pLm9q", "  secret_key_base: [redacted key]"),
        ('{"cmd": "export SIGNING_KEY_BASE=\\"Xk3pLm9q\\""}', '{"cmd": "export SIGNING_KEY_BASE=\\"[redacted key]\\""}'),
        ("config.secretKeyBase = 'Xk3pLm9q'", "config.secretKeyBase = '[redacted key]'"),
    ],
)  # fmt: skip
def test_a_key_base_goes(text: str, out: str) -> None:
    """Rails' and Phoenix's ``SECRET_KEY_BASE=…`` went out: the name goes on after ``KEY``. A name ending in
    ``_KEY_BASE`` (``keyBase``) is one."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == out and r.summary()["key"] == 1


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("htpasswd -b /etc/nginx/.htpasswd bob Hunter2pw", "htpasswd -b /etc/nginx/.htpasswd bob [redacted key]"),
        ("htpasswd -cbB .htpasswd bob 'two words'", "htpasswd -cbB .htpasswd bob '[redacted key]'"),
        ("htpasswd -c -b .htpasswd bob Hunter2pw && ls", "htpasswd -c -b .htpasswd bob [redacted key] && ls"),
        ("htpasswd -nb bob Hunter2pw", "htpasswd -nb bob [redacted key]"),
        ("htpasswd -n -b bob Hunter2pw", "htpasswd -n -b bob [redacted key]"),
        ("htpasswd -b -n -B bob Hunter2pw", "htpasswd -b -n -B bob [redacted key]"),
        ("htpasswd -b -C 12 .htpasswd bob Hunter2pw", "htpasswd -b -C 12 .htpasswd bob [redacted key]"),
        ("htpasswd -bBC12 f bob Hunter2pw", "htpasswd -bBC12 f bob [redacted key]"),
        ("htpasswd -B -r 9 -c -b f bob 'two words'", "htpasswd -B -r 9 -c -b f bob '[redacted key]'"),
        ('{"c": "ls\\nhtpasswd -n -b bob Hunter2pw"}', '{"c": "ls\\nhtpasswd -n -b bob [redacted key]"}'),
        ('{"command": "htpasswd -b .htpasswd \\"bob\\" \\"Hunter2pw\\""}',
         '{"command": "htpasswd -b .htpasswd \\"bob\\" \\"[redacted key]\\""}'),
    ],
)  # fmt: skip
def test_the_password_htpasswd_takes_goes(text: str, out: str) -> None:
    """``htpasswd -b FILE user PW`` (``-nb user PW``) went out: the password is a bare argument after the user's.
    So it did with ``-n`` and ``-b`` apart (``-n -b bob PW``, whose user was taken for the file) and with an option's
    value before the arguments (``-C 12``, whose value was taken for the file)."""
    r = Redactor(environ={}, home="/home/ann")
    found = r.text(text)
    assert found == out and r.summary()["key"] == 1, found


def test_htpasswd_asking_for_the_password_stays() -> None:
    text = ("htpasswd -c .htpasswd bob\nhtpasswd -D .htpasswd bob\nhtpasswd -b .htpasswd bob $PW\n"
            "htpasswd -n -B bob\nhtpasswd -c -C 12 .htpasswd bob\n")
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("rabbitmqctl add_user bob Hunter2pw", "rabbitmqctl add_user bob [redacted key]"),
        ("sudo rabbitmqctl -n rabbit@h change_password bob 'two words'",
         "sudo rabbitmqctl -n rabbit@h change_password bob '[redacted key]'"),
        ("rabbitmqctl authenticate_user bob Hunter2pw; ls", "rabbitmqctl authenticate_user bob [redacted key]; ls"),
        ('{"command": "rabbitmqctl add_user \\"bob\\" \\"Hunter2pw\\""}',
         '{"command": "rabbitmqctl add_user \\"bob\\" \\"[redacted key]\\""}'),
    ],
)  # fmt: skip
def test_the_password_rabbitmqctl_takes_goes(text: str, out: str) -> None:
    """``rabbitmqctl add_user bob PW`` (``change_password``, ``authenticate_user``) went out: the password is a bare
    argument after the user's."""
    r = Redactor(environ={}, home="/home/ann")
    found = r.text(text)
    assert found == out and r.summary()["key"] == 1, found


def test_rabbitmqctl_without_a_password_stays() -> None:
    text = "rabbitmqctl add_user bob $RABBIT_PW\nrabbitmqctl delete_user bob\nrabbitmqctl list_users\n"
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("net use Z: \\\\srv\\share /user:bob Hunter2pw", "net use Z: \\\\srv\\share /user:bob [redacted key]"),
        ("NET USE \\\\srv\\ipc$ /USER:CORP\\bob Hunter2pw /persistent:no",
         "NET USE \\\\srv\\ipc$ /USER:CORP\\bob [redacted key] /persistent:no"),
        ('{"command": "net use Z: \\\\\\\\srv\\\\share /user:CORP\\\\bob \\"two words\\""}',
         '{"command": "net use Z: \\\\\\\\srv\\\\share /user:CORP\\\\bob \\"[redacted key]\\""}'),
        ("net use \\\\srv\\share Hunter2pw /user:bob", "net use \\\\srv\\share [redacted key] /user:bob"),
        ("net use * \\\\srv\\share Hunter2pw", "net use * \\\\srv\\share [redacted key]"),
        ('net use Z: "\\\\srv\\my share" Hunter2pw /persistent:no',
         'net use Z: "\\\\srv\\my share" [redacted key] /persistent:no'),
        ("NET USE Z: %SHARE% Hunter2pw", "NET USE Z: %SHARE% [redacted key]"),
        ('{"c": "dir\\nnet use \\\\\\\\srv\\\\share Hunter2pw"}', '{"c": "dir\\nnet use \\\\\\\\srv\\\\share [redacted key]"}'),
        ('{"command": "net use \\\\\\\\srv\\\\share Hunter2pw /user:bob"}',
         '{"command": "net use \\\\\\\\srv\\\\share [redacted key] /user:bob"}'),
    ],
)  # fmt: skip
def test_the_password_net_use_takes_goes(text: str, out: str) -> None:
    """Windows' ``net use … /user:bob PW`` went out: the password is a bare argument after the user's. So did
    ``net use \\\\srv\\share PW /user:bob``, the password right after the share, before any switch: it is the
    first argument after the share that is no switch."""
    r = Redactor(environ={}, home="/home/ann")
    found = r.text(text)
    assert found == out and r.summary()["key"] == 1, found


def test_net_use_without_a_password_stays() -> None:
    text = ("net use Z: \\\\srv\\share /user:bob /persistent:no\nnet use Z: \\\\srv\\share /user:bob *\nnet use\n"
            "net use Z: \\\\srv\\share\nnet use Z: /delete\nnet use \\\\srv\\share * /user:bob\n")
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("docker login -u bob -pHunter2pw", "docker login -u bob -p[redacted key]"),
        ("mariadb-dump -u root -pHunter2pw db", "mariadb-dump -u root -p[redacted key] db"),
        ("mysqladmin -u root -pOld1pw password 'two words'", "mysqladmin -u root -p[redacted key] password '[redacted key]'"),
        ("redis-cli -h h --pass Hunter2pw ping", "redis-cli -h h --pass [redacted key] ping"),
        ("openssl pkcs12 -export -password pass:Hunter2pw -in c", "openssl pkcs12 -export -password pass:[redacted key] -in c"),
        ("openssl enc -d -aes256 -k Hunter2pw -in f", "openssl enc -d -aes256 -k [redacted key] -in f"),
        ("sqlplus -s scott/Hunter2pw", "sqlplus -s scott/[redacted key]"),
        ("expdp userid=scott/Hunter2pw dumpfile=x", "expdp userid=scott/[redacted key] dumpfile=x"),
        ("NET USER bob Hunter2pw /add", "NET USER bob [redacted key] /add"),
        ("nmcli dev wifi connect Home password 'two words'", "nmcli dev wifi connect Home password '[redacted key]'"),
        ("nmcli con modify x wifi-sec.psk Hunter2pw", "nmcli con modify x wifi-sec.psk [redacted key]"),
        ("wpa_passphrase Home Hunter2pw", "wpa_passphrase Home [redacted key]"),
        ('{"command": "wpa_passphrase Home \\"Hunter2pw\\""}', '{"command": "wpa_passphrase Home \\"[redacted key]\\""}'),
    ],
)  # fmt: skip
def test_more_command_lines_that_take_a_password_let_it_go(text: str, out: str) -> None:
    """Command lines that take a password went out: docker's ``-p`` glued to it, MariaDB's clients, ``mysqladmin
    password NEW``, ``redis-cli --pass``, openssl's ``-password pass:`` and ``enc -k``, Oracle's ``user/password``
    (sqlplus, rman, expdp), Windows' ``net user bob PW``, nmcli's ``password``/``wifi-sec.psk`` and
    ``wpa_passphrase SSID PW``."""
    r = Redactor(environ={}, home="/home/ann")
    found = r.text(text)
    assert found == out and r.summary()["key"] == out.count("[redacted key]"), found


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ('{"c": "ls\\nzip -e -P Hunter2pw a.zip f"}', '{"c": "ls\\n' + 'zip -e -P [redacted key] a.zip f"}'),
        ("unrar x -pHunter2pw a.rar", "unrar x -p[redacted key] a.rar"),
        ("x=1;0unrar x -pHunter2pw a.rar", "x=1;0unrar x -p[redacted key] a.rar"),
        ("0bcp t out f -P Hunter2pw", "0bcp t out f -P [redacted key]"),
        ("lftp -u bob,Hunter2pw ftp.example.com", "lftp -u bob,[redacted key] ftp.example.com"),
        ("twine upload -u bob -p Hunter2pw dist/*", "twine upload -u bob -p [redacted key] dist/*"),
        ("cf login -u bob -p Hunter2pw", "cf login -u bob -p [redacted key]"),
        ("snowsql -a acct -u bob -p Hunter2pw", "snowsql -a acct -u bob -p [redacted key]"),
        ("rabbitmqadmin -u bob -p Hunter2pw list queues", "rabbitmqadmin -u bob -p [redacted key] list queues"),
        ("ncftpput -u bob -p Hunter2pw h /x f", "ncftpput -u bob -p [redacted key] h /x f"),
        ("mosquitto_pub -u bob -P Hunter2pw -t x", "mosquitto_pub -u bob -P [redacted key] -t x"),
        ("bcp t out f -U sa -P Hunter2pw", "bcp t out f -U sa -P [redacted key]"),
        ("isql -U sa -P Hunter2pw", "isql -U sa -P [redacted key]"),
    ],
)  # fmt: skip
def test_the_password_of_archivers_uploaders_and_clients_goes(text: str, out: str) -> None:
    """zip's ``-P`` went out after a line break JSON text escapes (``ls\\nzip``: no word starts there), and so did
    RAR's ``-p…``, ``lftp -u user,…``, the ``-p …`` of twine, ``cf login``, snowsql, rabbitmqadmin and ncftp, and the
    ``-P …`` of mosquitto_pub, bcp and isql."""
    r = Redactor(environ={}, home="/home/ann")
    found = r.text(text)
    assert found == out and r.summary()["key"] == 1, found


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("echo Hunter2pw | docker login -u bob --password-stdin", "echo [redacted key] | docker login -u bob --password-stdin"),
        ('echo -n "two words" | podman login quay.io --password-stdin', 'echo -n "[redacted key]" | podman login quay.io --password-stdin'),
        ("printf '%s' Hunter2pw | helm registry login r.io --password-stdin", "printf '%s' [redacted key] | helm registry login r.io --password-stdin"),
        ('{"c": "ls\\nprintf \\"%s\\\\n\\" Hunter2pw | docker login --password-stdin"}',
         '{"c": "ls\\nprintf \\"%s\\\\n\\" [redacted key] | docker login --password-stdin"}'),
    ],
)  # fmt: skip
def test_a_password_echoed_into_a_registry_login_goes(text: str, out: str) -> None:
    """``echo PW | docker login --password-stdin`` (printf's too, podman's, helm's) let the password out: the login
    reads it from the pipe, whose writer names it."""
    r = Redactor(environ={}, home="/home/ann")
    found = r.text(text)
    assert found == out and r.summary()["key"] == 1, found


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("http -a bob:Hunter2pw api.example.com", "http -a bob:[redacted key] api.example.com"),
        ("https POST x.io --auth=bob:Hunter2pw a=1", "https POST x.io --auth=bob:[redacted key] a=1"),
        ('{"c": "ls\\nhttp --auth \\"bob:Hunter2pw\\" x.io"}', '{"c": "ls\\nhttp --auth \\"bob:[redacted key]\\" x.io"}'),
        ("influx -username bob -password Hunter2pw -host db", "influx -username bob -password [redacted key] -host db"),
        ("influx -password=Hunter2pw", "influx -password=[redacted key]"),
        ("ldappasswd -x -D cn=admin -W -s Hunter2pw uid=bob", "ldappasswd -x -D cn=admin -W -s [redacted key] uid=bob"),
        ("ldappasswd -x -a Hunter2pw -S uid=bob", "ldappasswd -x -a [redacted key] -S uid=bob"),
    ],
)  # fmt: skip
def test_the_password_of_httpie_influx_and_ldappasswd_goes(text: str, out: str) -> None:
    """httpie's ``http -a user:…`` (``--auth``, ``https``), influx's ``-password …`` and the new (``-s``) or old
    (``-a``) password of ``ldappasswd`` went out."""
    r = Redactor(environ={}, home="/home/ann")
    found = r.text(text)
    assert found == out and r.summary()["key"] == 1, found


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("smbclient //h/s Hunter2pw -U bob", "smbclient //h/s [redacted key] -U bob"),
        ("smbclient -U bob -W dom //h/s Hunter2pw", "smbclient -U bob -W dom //h/s [redacted key]"),
        ('smbclient "//h/my share" "two words" -U bob', 'smbclient "//h/my share" "[redacted key]" -U bob'),
        ('{"c": "ls\\nsmbclient \\\\\\\\h\\\\s Hunter2pw -U bob"}',
         '{"c": "ls\\nsmbclient \\\\\\\\h\\\\s [redacted key] -U bob"}'),
    ],
)  # fmt: skip
def test_the_password_after_smbclients_service_goes(text: str, out: str) -> None:
    """``smbclient //h/s PW -U bob`` let the password out: it is the first argument after the service, as with
    ``net use``, when no option or redirection takes that place."""
    r = Redactor(environ={}, home="/home/ann")
    found = r.text(text)
    assert found == out and r.summary()["key"] == 1, found


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("echo 'bob:Hunter2pw' | chpasswd", "echo 'bob:[redacted key]' | chpasswd"),
        ('{"c": "ls\\nprintf \\"%s\\\\n\\" bob:Hunter2pw | sudo chpasswd"}',
         '{"c": "ls\\nprintf \\"%s\\\\n\\" bob:[redacted key] | sudo chpasswd"}'),
        ("mc alias set s3 https://s3.x.io AKIAEXAMPLE Hunter2pw", "mc alias set s3 https://s3.x.io AKIAEXAMPLE [redacted key]"),
        ("mc config host add m http://m:9000 minio Hunter2pw", "mc config host add m http://m:9000 minio [redacted key]"),
        ("neo4j-admin set-initial-password Hunter2pw", "neo4j-admin set-initial-password [redacted key]"),
        ("neo4j-admin dbms set-initial-password Hunter2pw", "neo4j-admin dbms set-initial-password [redacted key]"),
        ("useradd -m -p Hunter2pw bob", "useradd -m -p [redacted key] bob"),
        ("usermod -p Hunter2pw bob", "usermod -p [redacted key] bob"),
    ],
)  # fmt: skip
def test_the_password_an_account_or_store_is_given_goes(text: str, out: str) -> None:
    """``echo 'bob:PW' | chpasswd``, ``mc alias set NAME URL KEY SECRET``, ``neo4j-admin set-initial-password PW``
    and ``useradd -p PW`` (usermod's) let the password out."""
    r = Redactor(environ={}, home="/home/ann")
    found = r.text(text)
    assert found == out and r.summary()["key"] == 1, found


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ('curl -u "bob:two words" https://x', 'curl -u "bob:[redacted key]" https://x'),
        ("http -a 'bob:two words' x.io", "http -a 'bob:[redacted key]' x.io"),
        ('smbclient //h/s -U "bob%two words"', 'smbclient //h/s -U "bob%[redacted key]"'),
        ("lftp -u 'bob,two words' ftp.x", "lftp -u 'bob,[redacted key]' ftp.x"),
        ("echo 'bob:two words' | chpasswd", "echo 'bob:[redacted key]' | chpasswd"),
        ('{"c": "curl -u \\"bob:two words\\" x"}', '{"c": "curl -u \\"bob:[redacted key]\\" x"}'),
    ],
)  # fmt: skip
def test_a_quoted_password_after_its_user_goes_whole(text: str, out: str) -> None:
    """``curl -u "bob:two words"`` let all but the first word out: the quote opens before the user, not before the
    password, as openssl's opens before ``pass:``."""
    r = Redactor(environ={}, home="/home/ann")
    found = r.text(text)
    assert found == out and r.summary()["key"] == 1, found


def test_those_command_lines_without_a_password_stay() -> None:
    text = ("net user\nnet user bob\nnet user bob /domain\nnet user bob *\nsqlplus / as sysdba\nsqlplus scott\n"
            "mysqladmin -u root -p password $NEWPW\ndocker login -u bob --password-stdin\nmysqladmin status\n"
            "wpa_passphrase Home\nopenssl enc -aes256 -kfile f\nnmcli dev wifi connect Home --ask\n"
            "echo the password is set\nrar a -p a.rar f\nlftp -u bob ftp.x\nlibrary -pfoo\ncf login -u bob\n"
            'echo "$PW" | docker login -u bob --password-stdin\ncat pw.txt | docker login --password-stdin\n'
            "http -a bob x.io\nhttp -a $U:$PW x.io\nsee http://x.io -a b:c\nssh-keygen -a 100 -f k\nldappasswd -S -W\n"
            "rsync -a src/ h:dst\ninflux -username bob\nsmbclient //h/s -N\nsmbclient //h/s <cmds\n"
            "smbclient //h/s 2>/dev/null\nsmbclient -L //h -U bob\nsmbclient //h/s $PW -U bob\n"
            "echo bob | chpasswd\necho 'bob:$PW' | chpasswd\nmc alias set s3 https://x\nmc alias ls\nuseradd -m bob\n"
            'useradd -p "$(openssl passwd -6 "$PW")" bob\nneo4j-admin set-initial-password\n')
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == text and sum(r.summary().values()) == 0


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("openssl rsa -passin 'pass:two words' -in k.pem", "openssl rsa -passin 'pass:[redacted key]' -in k.pem"),
        ('openssl enc -d -pass "pass:Eat the red apple" -in f', 'openssl enc -d -pass "pass:[redacted key]" -in f'),
        ('{"command": "openssl rsa -passin \\"pass:two words\\" -in k.pem"}',
         '{"command": "openssl rsa -passin \\"pass:[redacted key]\\" -in k.pem"}'),
    ],
)  # fmt: skip
def test_openssls_quoted_pass_goes_whole(text: str, out: str) -> None:
    """openssl's ``-passin 'pass:two words'`` let all but the first word out: the quote opens before ``pass:``, not
    before the value. The value goes to that quote's close, as any quoted one does."""
    r = Redactor(environ={}, home="/home/ann")
    found = r.text(text)
    assert found == out and r.summary()["key"] == 1, found


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("chpasswd <<< 'bob:Hunter2pw'", "chpasswd <<< 'bob:[redacted key]'"),
        ("sudo chpasswd <<<bob:Hunter2pw", "sudo chpasswd <<<bob:[redacted key]"),
        ('chpasswd -c SHA512 <<< "bob:two words"', 'chpasswd -c SHA512 <<< "bob:[redacted key]"'),
        ("chpasswd <<EOF\nbob:Hunter2pw\nEOF\nls", "chpasswd <<EOF\nbob:[redacted key]\nEOF\nls"),
        ("sudo chpasswd << 'END'\n\nbob:two words\nann:Other1pw\nEND", "sudo chpasswd << 'END'\n\nbob:[redacted key]\nEND"),
        ("cat <<EOF | sudo chpasswd\nbob:Hunter2pw\nEOF", "cat <<EOF | sudo chpasswd\nbob:[redacted key]\nEOF"),
        ('{"c": "chpasswd <<-EOF\\n\\tbob:Hunter2pw\\n\\tEOF\\nid"}', '{"c": "chpasswd <<-EOF\\n\\tbob:[redacted key]\\n\\tEOF\\nid"}'),
        ('{"c": "chpasswd <<EOF\\nbob:Hunter2pw"}', '{"c": "chpasswd <<EOF\\nbob:[redacted key]"}'),
    ],
)  # fmt: skip
def test_the_password_a_here_string_or_document_gives_chpasswd_goes(text: str, out: str) -> None:
    """``chpasswd <<< 'bob:PW'`` and a here-document's ``bob:PW`` lines (``chpasswd <<EOF``, ``cat <<EOF |
    chpasswd``) let the password out: only ``echo 'bob:PW' | chpasswd`` was known. A document's lines go from the
    first password to its last line."""
    _redacts(text, out)


def test_a_text_of_many_chpasswd_documents_is_redacted_in_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each here-document reads on to its delimiter: with none, one that ran on over every later one took time
    growing as the square of their number (8,000 took 73 s). A line holding another document's ``<<`` ends it.
    What is searched is counted (``_counted_text``): at most twice the text (once now)."""
    text = _counted_text(monkeypatch, "chpasswd <<EOF x:y\nbob:pw\n" * 20000, 2)
    out = Redactor(environ={}, home="/home/ann").text(text)
    assert out.count("bob:[redacted key]") == 20000 and "bob:pw" not in out


def test_chpasswd_given_no_password_stays() -> None:
    _stays("chpasswd < users.txt\nchpasswd <<< \"$CREDS\"\nchpasswd <<< 'bob:$PW'\nchpasswd <<EOF\n$U:$PW\nEOF\n"
           "cat <<EOF > notes.txt\nbob:not a password\nEOF\nchpasswd <<EOF\nEOF\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("http -A bearer -a Tok3nValue99 pie.dev/bearer", "http -A bearer -a [redacted key] pie.dev/bearer"),
        ("https --auth-type=bearer --auth Tok3nValue99 x.io", "https --auth-type=bearer --auth [redacted key] x.io"),
        ("http --auth-type bearer --auth='Tok3nValue99' x.io", "http --auth-type bearer --auth='[redacted key]' x.io"),
        ("http -a Tok3nValue99 -A bearer x.io", "http -a [redacted key] -A bearer x.io"),
        ('{"c": "http -A bearer -a \\"Tok3nValue99\\" x.io"}', '{"c": "http -A bearer -a \\"[redacted key]\\" x.io"}'),
    ],
)  # fmt: skip
def test_the_token_httpies_bearer_auth_takes_goes(text: str, out: str) -> None:
    """``http -A bearer -a TOKEN`` let the token out: only ``-a user:password`` was known, and ``-a`` without a
    ``:`` asks for a password, but with the bearer scheme it is the token itself."""
    _redacts(text, out)


def test_httpie_given_no_token_stays() -> None:
    _stays("http -a bob x.io\nhttp -A digest -a bob x.io\nhttp -A bearer -a $TOKEN x.io\nhttp -A bearer x.io\n"
           "http -a bob x.io | grep -A bearer\nhttp -a bob x.io\necho -A bearer\n")


def test_a_word_of_prose_after_a_share_or_user_is_no_password() -> None:
    """``smbclient //srv/share to list the files`` lost ``to``, and ``net use \\\\srv\\share with …`` its ``with``: the
    argument after the service (a ``net user``'s user) was taken for a password whatever came after it. A word of
    lower-case letters there is one only when the command ends after it or an option follows."""
    _stays("smbclient -U bob //srv/share to list the files\nRun smbclient //srv/share with the password you got.\n"
           "net use \\\\srv\\share to map the drive\nnet user bob to see the account\n"
           '{"c": "smbclient //srv/share from the shell\\nls"}\n')


@pytest.mark.parametrize(
    ("text", "out", "keys"),
    [
        ("smbclient //srv/share secret -U bob", "smbclient //srv/share [redacted key] -U bob", 1),
        ("smbclient //srv/share secret", "smbclient //srv/share [redacted key]", 1),
        ('{"c": "smbclient //srv/share secret\\nls"}', '{"c": "smbclient //srv/share [redacted key]\\nls"}', 1),
        ("net use \\\\srv\\share secret /user:bob", "net use \\\\srv\\share [redacted key] /user:bob", 1),
        ("net user bob secret | more", "net user bob [redacted key] | more", 1),
        ("smbclient //srv/share Hunter2pw to list", "smbclient //srv/share [redacted key] to list", 1),
        ("smbclient //srv/share 'two words' to list", "smbclient //srv/share '[redacted key]' to list", 1),
        ("smbclient //h/s -U bob%-Secret1pw", "smbclient //h/s -U bob%[redacted key]", 1),
        ("smbclient //h/s Hunter2pw -U bob%Other1pw", "smbclient //h/s [redacted key] -U bob%[redacted key]", 2),
    ],
)  # fmt: skip
def test_a_password_after_a_share_or_user_still_goes(text: str, out: str, keys: int) -> None:
    """A password after the share (or ``net user``'s user) still goes: a word of lower-case letters where the command
    ends or an option follows, any other word or a quoted one wherever it stands. And smbclient's ``-U bob%PW`` goes
    whatever the password starts with, beside a password after the service: ``-U bob%-PW`` was judged as a password
    after the service (``-`` there is an option), and with both, the first rule to match hid the other."""
    _redacts(text, out, keys)


def test_prose_about_a_default_or_machine_password_is_no_netrc_entry() -> None:
    """``The default password is changeme`` lost its ``is``, as a netrc's ``default password …`` entry, and
    ``xdefault password …`` too (no word began there); ``Reset the machine account password in AD`` its ``in``. An
    entry with no ``login``, ``account`` or ``port`` pair is judged as a ``password …`` line of its own is."""
    _stays("The default password is changeme.\nxdefault password Abc123xyz\nReset the machine account password in AD.\n"
           "By default password logins are off\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("default password Hunter2pw", "default password [redacted key]"),
        ("cat ~/.netrc\ndefault password swordfish", "cat ~/.netrc\ndefault password [redacted key]"),
        ("default login x password y", "default login x password [redacted key]"),
        ("machine h login bob password Pw1secret\\\\nnext line", "machine h login bob password [redacted key]\\\\nnext line"),
        ("machine h\\\\n  login bob\\\\n  password Pw1secret\\\\nmachine g", "machine h\\\\n  login bob\\\\n  password [redacted key]\\\\nmachine g"),
        ("cat .netrc\\\\npassword Pw1secret\\\\nnext", "cat .netrc\\\\npassword [redacted key]\\\\nnext"),
    ],
)  # fmt: skip
def test_a_netrc_password_goes_and_the_next_line_stays(text: str, out: str) -> None:
    """A netrc password went on over a line break JSON text of JSON text writes (``\\\\n``: a backslash escaped
    before the ``n``), so the next line's first word went with it, and such an entry, or such a line of its own, was
    not found at all; ``default password …`` with no pair is still an entry where the password is no word of prose
    or the text is about a netrc file, and ``default login x password y`` lets only ``y`` go."""
    _redacts(text, out)


def test_a_text_of_many_password_lines_of_prose_is_redacted_in_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ``password …`` line of prose (``password expired``, prose's ``default password is …``) looked for a
    netrc file's name over the whole text to judge its word, so a text of many took time growing as their square:
    680 KB of such lines took 115 s. The text is looked at once for all of them.
    What is searched is counted (``_counted_text``): 150 times the text at most (99 now: each line looks back for
    its command's start, ``COMMAND_REACH`` bytes at most; the whole text for each, some 10**10 bytes)."""
    text = "\npassword expired\nx" * 15000 + "\nthe default password is set" * 5000
    counted = _counted_text(monkeypatch, "cat .netrc" + text, 150)  # its bound holds both texts
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(type(counted)(text)) == text and r.text(counted).count("[redacted key]") == 20000


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("$ grep -h password ~/.netrc\npassword Abc1secret\npassword Def2secret\npassword Ghi3secret\n",
         "$ grep -h password ~/.netrc\npassword [redacted key]\npassword [redacted key]\npassword [redacted key]\n"),
        ('{"out": "password Abc1secret\\npassword Def2secret"}', '{"out": "password [redacted key]\\npassword [redacted key]"}'),
    ],
)  # fmt: skip
def test_netrc_password_lines_one_after_another_all_go(text: str, out: str) -> None:
    """Of netrc password lines one after another (``grep password ~/.netrc``), every second one went out: the match
    of one took the line break that ends it, which the next one's line starts with."""
    _redacts(text, out, out.count("[redacted key]"))


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("docker login -u bob --password-stdin <<< 'Hunter2pw'", "docker login -u bob --password-stdin <<< '[redacted key]'"),
        ("podman login --password-stdin -u bob r.io <<<Hunter2pw", "podman login --password-stdin -u bob r.io <<<[redacted key]"),
        ("gh auth login --with-token <<< Tok3nValue99", "gh auth login --with-token <<< [redacted key]"),
        ("echo Tok3nValue99 | gh auth login --with-token", "echo [redacted key] | gh auth login --with-token"),
        ("echo 'Hunter2pw' | sudo -S apt-get install x", "echo '[redacted key]' | sudo -S apt-get install x"),
        ("sudo -u bob -S ls /srv <<< Hunter2pw", "sudo -u bob -S ls /srv <<< [redacted key]"),
        ("echo Hunter2pw | sudo passwd --stdin bob", "echo [redacted key] | sudo passwd --stdin bob"),
        ('{"c": "gh auth login --with-token <<< \\"Tok3nValue99\\""}', '{"c": "gh auth login --with-token <<< \\"[redacted key]\\""}'),
    ],
)  # fmt: skip
def test_the_secret_a_command_reads_from_a_here_string_or_an_echo_goes(text: str, out: str) -> None:
    """A password or token given on standard input let itself out: a here-string into ``docker login
    --password-stdin`` (only ``echo … |`` was known), and either into ``gh auth login --with-token``, ``sudo -S`` and
    ``passwd --stdin``, which read theirs so."""
    _redacts(text, out)


def test_commands_reading_no_secret_from_stdin_stay() -> None:
    _stays("gh auth login --with-token < token.txt\necho $TOKEN | gh auth login --with-token\nsudo -S ls <<< \"$PW\"\n"
           "echo hello | sudo tee /etc/motd\necho hello | sudo ls -S\ndocker login --password-stdin < pw.txt\n"
           "echo bob | passwd --status\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("openssl passwd -6 Hunter2pw", "openssl passwd -6 [redacted key]"),
        ("openssl passwd -1 -salt xyz 'two words'", "openssl passwd -1 -salt xyz '[redacted key]'"),
        ('useradd -p "$(openssl passwd -6 Hunter2pw)" bob', 'useradd -p "$(openssl passwd -6 [redacted key])" bob'),
        ("mkpasswd -m sha-512 Hunter2pw", "mkpasswd -m sha-512 [redacted key]"),
        ("mkpasswd --method=yescrypt -R 5 Hunter2pw saltsalt", "mkpasswd --method=yescrypt -R 5 [redacted key] saltsalt"),
        ("openssl passwd -6 -stdin <<< Hunter2pw", "openssl passwd -6 -stdin <<< [redacted key]"),
        ("echo Hunter2pw | mkpasswd -s -m sha-512", "echo [redacted key] | mkpasswd -s -m sha-512"),
    ],
)  # fmt: skip
def test_the_password_a_hash_is_made_of_goes(text: str, out: str) -> None:
    """``openssl passwd -6 PW`` and ``mkpasswd -m sha-512 PW``, which an agent runs to make a hash for ``useradd -p``
    or a config, let the password out: it is their argument after their options, or their standard input with
    ``-stdin`` (``-s``)."""
    _redacts(text, out)


def test_hashing_commands_given_no_password_stay() -> None:
    _stays("openssl passwd -6\nopenssl passwd -6 -salt xyz\nopenssl passwd -6 -stdin < pw.txt\nopenssl passwd -6 \"$PW\"\n"
           "mkpasswd -m sha-512\nmkpasswd -m help\nmkpasswd -s\nopenssl passwd -stdin -6\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("mcli alias set m http://h:9000 minioadmin Sk3cretValue", "mcli alias set m http://h:9000 minioadmin [redacted key]"),
        ("mc alias set --insecure m http://h:9000 ak Sk3cretValue", "mc alias set --insecure m http://h:9000 ak [redacted key]"),
        ("mc --insecure alias set m http://h ak Sk3cretValue", "mc --insecure alias set m http://h ak [redacted key]"),
        ("mc alias set --api S3v4 m http://h ak Sk3cretValue", "mc alias set --api S3v4 m http://h ak [redacted key]"),
        ("mc admin user add myminio ann Sk3cretValue", "mc admin user add myminio ann [redacted key]"),
    ],
)  # fmt: skip
def test_the_secret_key_more_mc_lines_give_goes(text: str, out: str) -> None:
    """``mc alias set`` with an option before its arguments (``--insecure``, ``--api S3v4``, or mc's own before
    ``alias``), MinIO's client under the name ``mcli``, and ``mc admin user add ALIAS USER SECRET`` let the secret
    key out: the access key before it names the account, as a URL's user does, and stays."""
    _redacts(text, out)


def test_mc_lines_with_no_secret_stay() -> None:
    _stays("mc admin user list myminio\nmc admin user add myminio ann\nmc alias set --insecure m http://h\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("nuget push a.nupkg -ApiKey oy2kq7xv9wz -Source https://nuget.x/v3", "nuget push a.nupkg -ApiKey [redacted key] -Source https://nuget.x/v3"),
        ("Invoke-Sqlcmd -ServerInstance db -Username sa -Password Hunter2pw", "Invoke-Sqlcmd -ServerInstance db -Username sa -Password [redacted key]"),
        ("java -jar tool.jar -token Tok3nValue99 -v", "java -jar tool.jar -token [redacted key] -v"),
        ('{"c": "deploy -secret \\"two words\\""}', '{"c": "deploy -secret \\"[redacted key]\\""}'),
        ("--Password Hunter2pw", "--Password [redacted key]"),
        ("0--api-key Tok3nValue99", "0--api-key [redacted key]"),
    ],
)  # fmt: skip
def test_the_value_of_a_single_dash_option_named_for_a_secret_goes(text: str, out: str) -> None:
    """``-ApiKey KEY`` (nuget, PowerShell's cmdlets), ``-Password PW`` and Java tools' ``-token T`` went out: only an
    option of two dashes in lower case (``--api-key``) was known."""
    _redacts(text, out)


def test_single_dash_words_that_name_a_secret_stay() -> None:
    _stays("reset-your-password please\nthe anti-token policy is strict\nGet-Thing -Token $tok\nrun -token_count 42\n"
           "help: -password PASSWORD  the password to use\nx = a -token\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("SSHPASS=Hunter2pw sshpass -e ssh bob@h", "SSHPASS=[redacted key] sshpass -e ssh bob@h"),
        ("export SSHPASS='Hunter2pw'", "export SSHPASS='[redacted key]'"),
        ("cqlsh -u cassandra -p Hunter2pw db1", "cqlsh -u cassandra -p [redacted key] db1"),
        ("psexec \\\\srv -u bob -p Hunter2pw cmd", "psexec \\\\srv -u bob -p [redacted key] cmd"),
        ("rdesktop -u bob -p Hunter2pw srv", "rdesktop -u bob -p [redacted key] srv"),
        ("xfreerdp /u:bob /p:Hunter2pw /v:srv", "xfreerdp /u:bob /p:[redacted key] /v:srv"),
        ("cmdkey /add:srv /user:bob /pass:Hunter2pw", "cmdkey /add:srv /user:bob /pass:[redacted key]"),
    ],
)  # fmt: skip
def test_the_password_of_remote_shells_and_desktops_goes(text: str, out: str) -> None:
    """``sshpass -e``'s ``SSHPASS=…`` (no ``_`` before its ``PASS``), cqlsh's ``-p``, psexec's and rdesktop's ``-p``,
    FreeRDP's ``/p:`` and cmdkey's ``/pass:`` let the password out."""
    _redacts(text, out)


def test_remote_shells_and_desktops_given_no_password_stay() -> None:
    _stays("sshpass -e ssh bob@h\nSSHPASS=$PW sshpass -e ssh h\ncqlsh -u cassandra db1\nrdesktop -u bob srv\n"
           "xfreerdp /u:bob /v:srv\ncmdkey /list\n")


@pytest.mark.parametrize(
    ("text", "out", "keys"),
    [
        ('echo -e "Hunter2pw\\nHunter2pw" | passwd', 'echo -e "[redacted key]" | passwd', 1),
        ("echo -e 'Hunter2pw\\nHunter2pw' | sudo passwd bob", "echo -e '[redacted key]' | sudo passwd bob", 1),
        ('{"c": "echo -e \\"Hunter2pw\\\\nHunter2pw\\" | passwd"}', '{"c": "echo -e \\"[redacted key]\\" | passwd"}', 1),
        ("(echo Hunter2pw; echo Hunter2pw) | smbpasswd -s", "(echo [redacted key]; echo [redacted key]) | smbpasswd -s", 2),
        ("(echo Hunter2pw; echo Hunter2pw) | sudo smbpasswd -a -s bob",
         "(echo [redacted key]; echo [redacted key]) | sudo smbpasswd -a -s bob", 2),
        ("{ echo Hunter2pw; echo Hunter2pw; } | passwd --stdin bob",
         "{ echo [redacted key]; echo [redacted key]; } | passwd --stdin bob", 2),
        ("echo Hunter2pw | docker secret create db_pw -", "echo [redacted key] | docker secret create db_pw -", 1),
        ("printf '%s' Hunter2pw | podman secret create db_pw -", "printf '%s' [redacted key] | podman secret create db_pw -", 1),
    ],
)  # fmt: skip
def test_every_copy_of_a_password_piped_to_a_command_goes(text: str, out: str, keys: int) -> None:
    """``echo -e "PW\\nPW" | passwd`` let the second copy out (the value stopped at the shell's ``\\n``), and plain
    ``passwd``, ``smbpasswd -s`` and ``docker secret create N -`` were no readers of a piped password; the second
    ``echo`` of ``(echo PW; echo PW) | smbpasswd -s`` was never looked at."""
    _redacts(text, out, keys)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("doctl auth init -t Hunter2pw", "doctl auth init -t [redacted key]"),
        ("doctl auth init --context work -t Hunter2pw", "doctl auth init --context work -t [redacted key]"),
        ("bw unlock Hunter2pw", "bw unlock [redacted key]"),
        ("bw unlock 'two words' --raw", "bw unlock '[redacted key]' --raw"),
        ("bw login bob@x.io Hunter2pw", "bw login [redacted email] [redacted key]"),
        ("vault login s.AbCdEfGh12345678ijKLmnop", "vault login s.[redacted key]"),
        ("vault login -no-print s.XXXXXXXX", "vault login -no-print s.[redacted key]"),
        ('{"c": "vault login \\"s.AbCdEfGh12345678\\""}', '{"c": "vault login \\"s.[redacted key]\\""}'),
        ("ftp -n h <<EOF\nuser bob Hunter2pw\nls\nEOF", "ftp -n h <<EOF\nuser bob [redacted key]\nls\nEOF"),
        ("ftp -inv <<'END'\nopen ftp.x.io\n  user bob Hunter2pw\nbye\nEND",
         "ftp -inv <<'END'\nopen ftp.x.io\n  user bob [redacted key]\nbye\nEND"),
        ('{"c": "ftp -n h <<EOF\\nuser bob Hunter2pw\\nEOF"}', '{"c": "ftp -n h <<EOF\\nuser bob [redacted key]\\nEOF"}'),
    ],
)  # fmt: skip
def test_the_token_or_password_of_cloud_vault_and_ftp_logins_goes(text: str, out: str) -> None:
    """``doctl auth init -t TOKEN``, ``bw unlock PW`` (``bw login EMAIL PW``), an old-format ``vault login s.…`` (no
    ``hvs.``) and the ``user bob PW`` line of an ``ftp`` here-document let the secret out."""
    r = Redactor(environ={}, home="/home/ann")
    found = r.text(text)
    assert found == out and r.summary()["key"] == 1, found


def test_those_logins_and_pipes_without_a_password_stay() -> None:
    _stays("doctl auth init\ndoctl auth init -t $DO_TOKEN\nbw unlock\nbw unlock --passwordenv BW_PW\nbw unlock $PW\n"
           "bw unlock to get a session key\nvault login\nvault login -method=github\nvault login $VAULT_TOKEN\n"
           "docker secret create db_pw ./pw.txt\necho done | docker secret ls\nftp -n h <<EOF\nuser bob\nls\nEOF\n"
           "echo $PW | passwd --stdin bob\n(echo $PW; echo $PW) | smbpasswd -s\nthe user bob is here\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ('printf "%s\\n" Hunter2pw Hunter2pw | passwd --stdin bob', 'printf "%s\\n" [redacted key] | passwd --stdin bob'),
        ("printf '%s\\n' 'Hunter2pw' 'Hunter2pw' | smbpasswd -s -a bob",
         "printf '%s\\n' '[redacted key]' | smbpasswd -s -a bob"),
        ("echo correct horse battery | docker login -u bob --password-stdin",
         "echo [redacted key] | docker login -u bob --password-stdin"),
        ("echo Hunter2pw | gpg --batch --passphrase-fd 0 -d f.gpg", "echo [redacted key] | gpg --batch --passphrase-fd 0 -d f.gpg"),
        ("echo -n Hunter2pw | cryptsetup luksOpen /dev/sdb1 data -", "echo -n [redacted key] | cryptsetup luksOpen /dev/sdb1 data -"),
        ("echo Hunter2pw | openssl enc -d -aes256 -pass stdin -in f", "echo [redacted key] | openssl enc -d -aes256 -pass stdin -in f"),
        ("echo s.AbCdEf12345678 | vault login -", "echo [redacted key] | vault login -"),
    ],
)  # fmt: skip
def test_all_the_text_echoed_into_a_reader_of_a_secret_goes(text: str, out: str) -> None:
    """``printf '%s\\n' PW PW | passwd --stdin`` let every argument after the first out (all of them are the
    command's standard input), and gpg's ``--passphrase-fd 0``, cryptsetup, openssl's ``-pass stdin`` and ``vault
    login -`` were no readers of a piped secret."""
    _redacts(text, out)


def test_what_is_piped_into_those_readers_with_no_secret_stays() -> None:
    _stays("echo $PW | gpg --batch --passphrase-fd 0 -d f\ngpg --passphrase-fd 0 < pw.txt\necho hi | gpg -e -r bob\n"
           "echo $PW | cryptsetup luksOpen /dev/sdb1 data\necho $TOKEN | vault login -\necho ok | vault status\n"
           "echo hi 2>/dev/null | tee f\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("echo -e 'Hunter2pw\\nHunter2pw' | passwd bob 2>/dev/null", "echo -e '[redacted key]' | passwd bob 2>/dev/null"),
        ("echo -e 'Hunter2pw\\nHunter2pw' | passwd >/dev/null", "echo -e '[redacted key]' | passwd >/dev/null"),
        ("passwd bob <<< 'Hunter2pw'", "passwd bob <<< '[redacted key]'"),
        ("sudo passwd <<< Hunter2pw", "sudo passwd <<< [redacted key]"),
    ],
)  # fmt: skip
def test_the_password_given_to_passwd_with_a_redirection_or_a_here_string_goes(text: str, out: str) -> None:
    """``echo PW | passwd bob 2>/dev/null`` and ``passwd bob <<< PW`` let the password out: plain ``passwd`` read it
    only where its command ended after the user."""
    _redacts(text, out)


@pytest.mark.parametrize(
    ("text", "out", "keys"),
    [
        ("echo $'Hunter2pw\\nHunter2pw' | passwd", "echo $'[redacted key]' | passwd", 1),
        ("passwd bob <<< $'Hunter2pw\\nHunter2pw'", "passwd bob <<< $'[redacted key]'", 1),
        ("yes Hunter2pw | passwd bob", "yes [redacted key] | passwd bob", 1),
        ("(echo bob:Hunter2pw; echo ann:Hunter3pw) | chpasswd", "(echo bob:[redacted key]; echo ann:[redacted key]) | chpasswd", 2),
        ("ftp -n h << EOF\nquote USER bob\nquote PASS Hunter2pw\nEOF", "ftp -n h << EOF\nquote USER bob\nquote PASS [redacted key]\nEOF", 1),
        ("doctl auth init -t=Hunter2pw", "doctl auth init -t=[redacted key]", 1),
    ],
)  # fmt: skip
def test_a_password_in_ansi_quotes_repeated_or_in_a_group_goes(text: str, out: str, keys: int) -> None:
    """``$'PW\\nPW'`` (ANSI-C quoting, taken for a reference), ``yes PW | passwd``, the second line of ``(echo
    bob:PW; echo ann:PW) | chpasswd``, ftp's ``quote PASS PW`` and doctl's ``-t=TOKEN`` (its ``=`` replaced with
    it) let the password out or cut it badly."""
    _redacts(text, out, keys)


def test_references_after_a_dollar_and_a_bare_yes_stay() -> None:
    _stays("echo $PW | passwd --stdin bob\necho \"$PW\" | passwd\nyes | passwd -l bob\n(echo $U:$PW; echo ann:$PW2) | chpasswd\n")


def test_an_ftp_here_document_in_json_text_of_json_text_gives_no_password() -> None:
    """A tool's JSON output quoting a tool call's arguments writes each line break of an ``ftp`` here-document as
    ``\\\\n``, which the ``user`` line's search did not read as one: the password went out."""
    text = orjson.dumps({"c": orjson.dumps({"c": "ftp -n h <<'EOF'\nopen h\nuser bob Hunter2pw\nEOF"}).decode()}).decode()
    _redacts(text, text.replace("Hunter2pw", "[redacted key]"))


@pytest.mark.parametrize(
    ("text", "out", "keys"),
    [
        ("(echo Hunter1pw; echo Hunter2pw; echo Hunter3pw) | passwd",
         "(echo [redacted key]; echo [redacted key]; echo [redacted key]) | passwd", 3),
        ("{ echo Old1pw; sleep 1; echo New2pw; echo New2pw; } | sudo smbpasswd -s",
         "{ echo [redacted key]; sleep 1; echo [redacted key]; echo [redacted key]; } | sudo smbpasswd -s", 3),
        ("(echo bob:Hunter1pw; echo ann:Hunter2pw; echo cy:Hunter3pw) | chpasswd",
         "(echo bob:[redacted key]; echo ann:[redacted key]; echo cy:[redacted key]) | chpasswd", 3),
        ('{"c": "(echo Hunter1pw; echo Hunter2pw; echo Hunter3pw) | passwd"}',
         '{"c": "(echo [redacted key]; echo [redacted key]; echo [redacted key]) | passwd"}', 3),
    ],
)  # fmt: skip
def test_every_line_of_a_group_piped_into_a_reader_of_a_password_goes(text: str, out: str, keys: int) -> None:
    """``(echo A; echo B; echo C) | passwd`` let ``B`` out: only the group's first and last ``echo`` were looked at,
    though every line it feeds the reader is a password (chpasswd's too)."""
    _redacts(text, out, keys)


@pytest.mark.parametrize(
    ("text", "out", "keys"),
    [
        ("(echo Hunter1pw\necho Hunter2pw) | passwd", "(echo [redacted key]\necho [redacted key]) | passwd", 2),
        ("(echo Hunter1pw\necho Hunter2pw\necho Hunter3pw) | passwd",
         "(echo [redacted key]\necho [redacted key]\necho [redacted key]) | passwd", 3),
        ("{ echo Hunter1pw\n  echo Hunter2pw\n} | sudo smbpasswd -s",
         "{ echo [redacted key]\n  echo [redacted key]\n} | sudo smbpasswd -s", 2),
        ('{"c": "(echo Hunter1pw\\n  echo Hunter2pw\\n  echo Hunter3pw) | passwd"}',
         '{"c": "(echo [redacted key]\\n  echo [redacted key]\\n  echo [redacted key]) | passwd"}', 3),
    ],
)  # fmt: skip
def test_a_group_of_echoes_on_separate_lines_piped_into_a_reader_keeps_no_password(
    text: str, out: str, keys: int
) -> None:
    """``(echo A`` newline ``echo B) | passwd`` let ``A`` out (and every ``echo`` between the first and the last): a
    group's commands were read up to a line break only, and only ``;`` or ``&&`` began its next ``echo``."""
    _redacts(text, out, keys)


@pytest.mark.parametrize(
    ("text", "out", "keys"),
    [
        ('(echo "Pa)ss1pw"; echo Hunter2pw) | passwd', '(echo "[redacted key]"; echo [redacted key]) | passwd', 2),
        ("(echo Hunter0pw; echo 'Pa)ss1pw'; echo Hunter2pw) | passwd",
         "(echo [redacted key]; echo '[redacted key]'; echo [redacted key]) | passwd", 3),
        ('{"c": "(echo \\"Pa)ss1pw\\"; echo Hunter2pw) | passwd"}',
         '{"c": "(echo \\"[redacted key]\\"; echo [redacted key]) | passwd"}', 2),
    ],
)  # fmt: skip
def test_a_bracket_in_a_quoted_echo_of_a_piped_group_closes_nothing(text: str, out: str, keys: int) -> None:
    """``(echo "Pa)ss"; echo X) | passwd`` let ``Pa)ss`` out: the ``)`` in its quotes was read as the group's end,
    which no pipe followed (and an ``echo`` before it lost its password the same way)."""
    _redacts(text, out, keys)


@pytest.mark.parametrize(
    ("text", "out", "keys"),
    [
        ('{"c": "(echo Hunter1pw\\necho Hunter2pw) | passwd"}',
         '{"c": "(echo [redacted key]\\necho [redacted key]) | passwd"}', 2),
        ('{"c": "(echo Hunter1pw\\necho -n Hunter2pw\\nprintf Hunter3pw) | sudo smbpasswd -s"}',
         '{"c": "(echo [redacted key]\\necho -n [redacted key]\\nprintf [redacted key]) | sudo smbpasswd -s"}', 3),
        ('{"c": "echo Hunter1pw\\necho Hunter2pw | passwd"}', '{"c": "echo [redacted key]\\necho [redacted key] | passwd"}', 2),
        ('{"c": "{\\"c\\": \\"(echo Hunter1pw\\\\necho Hunter2pw) | passwd\\"}"}',
         '{"c": "{\\"c\\": \\"(echo [redacted key]\\\\necho [redacted key]) | passwd\\"}"}', 2),
        ("echo -e 'Hunter1pw\\necho Hunter2pw' | passwd", "echo -e '[redacted key]' | passwd", 1),
    ],
)  # fmt: skip
def test_the_next_echo_after_a_line_break_json_text_writes_stays_in_view(text: str, out: str, keys: int) -> None:
    """In JSON text with no indent, ``(echo A\\necho B) | passwd`` hid ``echo B`` with the passwords: the shell's
    ``\\n`` that joins an ``echo -e`` value's lines also joined the next command. Every password still goes; an
    ``echo`` the line break begins stays, but where a quote holds it (``echo -e 'A\\necho B'``: one password)."""
    _redacts(text, out, keys)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("(echo Hunter1pw || true; echo Hunter2pw) | passwd", "(echo [redacted key] || true; echo [redacted key]) | passwd"),
        ("(false || echo Hunter1pw; echo Hunter2pw) | passwd", "(false || echo [redacted key]; echo [redacted key]) | passwd"),
        ('{"c": "(echo Hunter1pw||echo Hunter3pw; echo Hunter2pw) | sudo -S ls"}',
         '{"c": "(echo [redacted key]||echo [redacted key]; echo [redacted key]) | sudo -S ls"}'),
    ],
)  # fmt: skip
def test_an_or_in_a_group_piped_into_a_reader_ends_an_echo(text: str, out: str) -> None:
    """``(echo PW || true; echo PW) | passwd`` let the first password out, and ``(false || echo PW; …)`` the one
    after ``||``: a group's rest went on over ``;`` and ``&&`` alone, so ``||`` ended it before its bracket, and only
    those began a next ``echo``. ``||`` joins a group's commands as ``&&`` does."""
    _redacts(text, out, text.count("Hunter"))


def test_echoes_on_separate_lines_piped_nowhere_stay() -> None:
    _stays("echo Hunter1pw\necho Hunter2pw\nls | passwd\n(echo Hunter1pw\necho Hunter2pw) | tee out.txt\n")


def test_a_line_of_many_echoes_in_one_group_is_redacted_in_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ``echo`` of a group looks on to the group's end for the reader it is piped into: a group of many, or a
    line of many ``; echo`` with no group, looking there from each took time growing as the square of their number.
    What is searched is counted (``_counted_text``): at most 3 times the texts (1.5 now)."""
    group, line = "(echo x" + "; echo Hunter2pw" * 30000 + ") | passwd", "; echo x" * 30000
    counted = _counted_text(monkeypatch, group + line, 3)  # its bound holds both texts
    r = Redactor(environ={}, home="/home/ann")
    out = r.text(type(counted)(group))
    assert out.count("echo [redacted key]") == 30001 and "Hunter2pw" not in out
    assert r.text(type(counted)(line)) == line


def test_a_long_run_of_backslashes_in_an_echoed_password_is_redacted_in_linear_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An echoed password is cut around each ``\\n`` of JSON text that an ``echo`` follows (00a852e): the pattern
    that looks for one tried a run of backslashes again from each of them, time growing as the square of the run
    (40,000 in ``echo -e a…b | passwd`` took 1.7 s, in JSON text 5.4 s; 200,000 over two minutes). What is searched
    is counted (``_counted_text``): at most twice the texts (once now); the pattern's own backtracking within one
    search is not seen there."""
    echoed, json_text = "echo -e a" + "\\" * 200000 + "b | passwd", '{"c": "echo a' + "\\\\" * 200000 + 'b | passwd"}'
    counted = _counted_text(monkeypatch, echoed + json_text, 2)  # its bound holds both texts
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(type(counted)(echoed)) == "echo -e [redacted key] | passwd"
    assert r.text(type(counted)(json_text)) == '{"c": "echo [redacted key] | passwd"}'


@pytest.mark.parametrize(
    ("middle", "out"),
    [("\\necho -n -e -n" * 5000, "\\necho -n -e [redacted key]" * 4999 + "\\necho -n -e -n [redacted key]"),
     ("\\necho" + " -n" * 20000 + "x", "\\necho" + " -n" * 19999 + " [redacted key]"),
     ("\\necho -" + "n" * 60000 + "x", "\\necho [redacted key]"),
     ("\\necho" + " " * 60000 + "B", "\\necho" + " " * 60000 + "[redacted key]"),
     ("\\necho\\nprintf" * 5000, "\\nprintf [redacted key]")],
    ids=["echoes with options", "options none ends", "a long option", "blanks", "echoes with none"],
)  # fmt: skip
def test_the_echoes_inside_an_echoed_password_are_found_in_linear_time(
    monkeypatch: pytest.MonkeyPatch, middle: str, out: str
) -> None:
    """Inside an echoed password, each ``\\n`` of JSON text that an ``echo`` and its options follow is the next
    command's (``_NEXT_ECHO``, ``_echoed_lines``), looked for over the password once: 60 kB of such echoes, their
    options (none closed by a blank), one long option or a run of blanks are searched once. What is searched is
    counted (``_counted_text``): at most 3 times the text (1 to 2.1 now). The pattern is Python's: a search's own
    backtracking no count sees, but it has none to do beyond its own try: a try starts only at a run's first
    backslash, and each repeat stops at a character it cannot take (``-`` after blanks, a blank after ``[neE]``), so
    a failed try goes back over what it read, once."""
    text = '{"c": "(echo A' + middle + ' B) | passwd"}'
    counted = _counted_text(monkeypatch, text, 3)  # (before the redactor: it takes the counted patterns)
    found = Redactor(environ={}, home="/home/ann").text(counted)
    assert found == '{"c": "(echo [redacted key]' + out + ') | passwd"}', found[-200:]


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("echo Hunter2pw 2>/dev/null | passwd", "echo [redacted key] 2>/dev/null | passwd"),
        ("echo 'Hunter2pw' 2>/dev/null | passwd bob", "echo '[redacted key]' 2>/dev/null | passwd bob"),
        ("echo correct horse 2>>err.log | docker login -u bob --password-stdin",
         "echo [redacted key] 2>>err.log | docker login -u bob --password-stdin"),
        ('{"c": "echo \\"Hunter2pw\\" 2>/dev/null | sudo -S ls"}', '{"c": "echo \\"[redacted key]\\" 2>/dev/null | sudo -S ls"}'),
        ("(echo Hunter1pw 2>/dev/null; echo Hunter2pw 2>/dev/null) | passwd",
         "(echo [redacted key] 2>/dev/null; echo [redacted key] 2>/dev/null) | passwd"),
        ("echo bob:Hunter2pw 2>/dev/null | chpasswd", "echo bob:[redacted key] 2>/dev/null | chpasswd"),
        ("echo Hunter2pw 42 | passwd", "echo [redacted key] | passwd"),
    ],
)  # fmt: skip
def test_a_redirection_after_an_echoed_password_keeps_its_file_descriptor(text: str, out: str) -> None:
    """``echo PW 2>/dev/null | passwd`` hid the ``2`` of the redirection with the password (and a quote's close
    with it): the echoed words ran on to the ``>``; a last word of digits a ``<`` or ``>`` follows is the file
    descriptor it redirects."""
    _redacts(text, out, text.count("Hunter") + text.count("horse"))


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("x=$(mysql -pHunter2pw)", "x=$(mysql -p[redacted key])"),
        ("v=`mysql -uroot -pHunter2pw`", "v=`mysql -uroot -p[redacted key]`"),
        ("t=$(redis-cli -a Hunter2pw)", "t=$(redis-cli -a [redacted key])"),
        ("mysql -pHunter2pw<dump.sql", "mysql -p[redacted key]<dump.sql"),
        ("echo $(passwd bob <<< Hunter2pw)", "echo $(passwd bob <<< [redacted key])"),
        ("(ssh-keygen -y -f k -P Hunter2pw)", "(ssh-keygen -y -f k -P [redacted key])"),
        ('{"c": "x=$(curl -s -u bob:Hunter2pw)"}', '{"c": "x=$(curl -s -u bob:[redacted key])"}'),
        ("(bw unlock Hunter2pw)", "(bw unlock [redacted key])"),
        ("mysql -p'Ab)cd<9' db", "mysql -p'[redacted key]' db"),
    ],
)  # fmt: skip
def test_a_password_on_a_command_line_ends_where_the_shell_ends_its_word(text: str, out: str) -> None:
    """``$(mysql -pPW)`` hid the ``)`` that closes the substitution with the password (a backquote, a ``<``
    redirection too): an unquoted word ends at the shell's metacharacters, a quoted one at its closing quote."""
    _redacts(text, out)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("bw unlock --raw Hunter2pw", "bw unlock --raw [redacted key]"),
        ("export BW_SESSION=$(bw unlock --raw --nointeraction Hunter2pw)",
         "export BW_SESSION=$(bw unlock --raw --nointeraction [redacted key])"),
        ("bw --pretty unlock --check 'two words'", "bw --pretty unlock --check '[redacted key]'"),
        ("bw login --method 0 --code 123456 bob --raw Hunter2pw", "bw login --method 0 --code 123456 bob --raw [redacted key]"),
        ('{"c": "bw unlock --raw \\"Hunter2pw\\""}', '{"c": "bw unlock --raw \\"[redacted key]\\""}'),
        ("bw unlock Welcome", "bw unlock [redacted key]"),
        ("bw unlock Welcome --raw", "bw unlock [redacted key] --raw"),
    ],
)  # fmt: skip
def test_the_password_after_bw_unlock_and_its_options_goes(text: str, out: str) -> None:
    """``bw unlock --raw PW`` let the password out: only a password right after ``unlock`` (or after ``login``'s
    e-mail) was looked for, not after options."""
    _redacts(text, out)


def test_a_capitalised_word_of_prose_after_a_command_is_no_password() -> None:
    """``run bw unlock When asked, type it`` lost its ``When``: a word of letters there is a password only where the
    command ends or an option follows, capitalised or not, as ``smbclient //srv/share to list`` keeps its ``to``."""
    _stays("Run bw unlock When asked, type your master password.\nbw unlock --raw Then copy the key.\n"
           "Run smbclient //srv/share With the password you got.\nnet user bob Then log in.\n"
           "bw unlock --passwordenv BW_PW\nbw unlock --passwordfile pw.txt --raw\nbw login --apikey\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("mysql --password=Hunter2pw db", "mysql --password=[redacted key] db"),
        ("mysqldump -u root --password=Hunter2pw app > app.sql", "mysqldump -u root --password=[redacted key] app > app.sql"),
        ("tool --db-password=Hunter2pw --verbose run", "tool --db-password=[redacted key] --verbose run"),
        ('{"c": "mysql --password=Hunter2pw db\\nls"}', '{"c": "mysql --password=[redacted key] db\\nls"}'),
        ('mysql --password="two words" db', 'mysql --password="[redacted key]" db'),
        ("password=me and you forever", "password=[redacted key]"),
    ],
)  # fmt: skip
def test_the_value_of_a_password_option_with_an_equals_ends_at_its_word(text: str, out: str) -> None:
    """``mysql --password=PW db`` hid ``db`` and the rest of the line with the password, which after a key named for
    a password may be a passphrase of several words; an option's unquoted value is one word of the shell's, so it
    ends at the first blank (a key without the option's dash still takes its line)."""
    _redacts(text, out)


def _twice(text: str) -> str:
    """``text`` as JSON text of JSON text writes it: a tool's JSON output quoting a tool call's arguments."""
    return orjson.dumps({"c": orjson.dumps({"c": text}).decode()}).decode()


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("chpasswd <<EOF\nbob:Hunter2pw\nann:Other2pw\nEOF\nls", "chpasswd <<EOF\nbob:[redacted key]\nEOF\nls"),
        ("cat <<'EOF' | sudo chpasswd\nbob:Hunter2pw\nEOF\nls", "cat <<'EOF' | sudo chpasswd\nbob:[redacted key]\nEOF\nls"),
        ('chpasswd <<"EOF"\nbob:Hunter2pw\nEOF', 'chpasswd <<"EOF"\nbob:[redacted key]\nEOF'),
        ("ftp -n h <<\"EOF\"\nuser bob Hunter2pw\nbye\nEOF", "ftp -n h <<\"EOF\"\nuser bob [redacted key]\nbye\nEOF"),
    ],
)  # fmt: skip
def test_a_document_in_json_text_of_json_text_keeps_every_byte_but_its_secret(text: str, out: str) -> None:
    """A here-document whose line breaks JSON text of JSON text writes as ``\\\\n`` lost a
    backslash of the line break after its last password, which went with it, or let its password out (``cat <<'EOF'
    | chpasswd``, a quoted delimiter): a line break was read with an odd number of backslashes only, the stray one
    taken for the delimiter's quote."""
    _redacts(_twice(text), _twice(out))


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ('mysql -u root -p"Hunter2pw" db', 'mysql -u root -p"[redacted key]" db'),
        ('sshpass -p "Hunter2pw" ssh h', 'sshpass -p "[redacted key]" ssh h'),
        ('curl -u "bob:two words" x.io', 'curl -u "bob:[redacted key]" x.io'),
        ('echo "Hunter2pw" | docker login -u bob --password-stdin', 'echo "[redacted key]" | docker login -u bob --password-stdin'),
        ('chpasswd <<< "bob:Hunter2pw"', 'chpasswd <<< "bob:[redacted key]"'),
        ('passwd bob <<< "Hunter2pw"', 'passwd bob <<< "[redacted key]"'),
        ('bw unlock "Hunter2pw"', 'bw unlock "[redacted key]"'),
        ('htpasswd -b f bob "Hunter2pw"', 'htpasswd -b f bob "[redacted key]"'),
        ('ssh-keygen -N "two words" -f k', 'ssh-keygen -N "[redacted key]" -f k'),
        ('openssl passwd -6 "Hunter2pw"', 'openssl passwd -6 "[redacted key]"'),
        ('--password "two words"', '--password "[redacted key]"'),
        ('password = "two words"', 'password = "[redacted key]"'),
        ('{"password": "Hunter2pw", "user": "bob"}', '{"password": "[redacted key]", "user": "bob"}'),
        ("IDENTIFIED BY \"Hunter2pw\"", "IDENTIFIED BY \"[redacted key]\""),
        ('os.environ["DB_PASSWORD"] = "Hunter2pw"', 'os.environ["DB_PASSWORD"] = "[redacted key]"'),
        ('Authorization: "token abcdefgh12345678"', 'Authorization: "token [redacted key]"'),
        ("db:\n  password: |\n    two words\n  user: app", "db:\n  password: |\n    [redacted key]\n  user: app"),
    ],
)  # fmt: skip
def test_a_quoted_secret_in_json_text_of_json_text_goes_and_its_quotes_stay(text: str, out: str) -> None:
    """JSON text of JSON text (a tool's JSON output quoting a tool call's arguments) writes a quote as ``\\\\\\"``:
    a pattern read one backslash before a quote at most, and a value an escaped backslash, so the value came out as
    two backslashes (replaced, and the text's escapes broken with them) and the password after them stayed; a
    line break written ``\\\\n`` ran on into the value too (a YAML block's ``|`` went with its lines). The screen
    lets such a string through to the patterns (``walk``)."""
    _redacts(_twice(text), _twice(out))
    assert Redactor(environ={}, home="/home/ann").walk({"c": _twice(text)}) == {"c": _twice(out)}


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("t=$(echo Hunter2pw | vault login -)", "t=$(echo [redacted key] | vault login -)"),
        ("echo Hunter2pw | vault login -; vault status", "echo [redacted key] | vault login -; vault status"),
        ("Run `echo Hunter2pw | vault login -` first", "Run `echo [redacted key] | vault login -` first"),
        ("Run `Connect-Thing -Password Hunter2pw` first", "Run `Connect-Thing -Password [redacted key]` first"),
        ("Use `-ApiKey Hunter2pw`.", "Use `-ApiKey [redacted key]`."),
        ("pass --password `Hunter2pw` to it", "pass --password `[redacted key]` to it"),
    ],
)  # fmt: skip
def test_a_secret_a_command_in_a_substitution_or_a_code_span_takes_goes(text: str, out: str) -> None:
    """``$(echo PW | vault login -)`` and ``echo PW | vault login -; …`` let the token out (vault's ``-`` was read
    only before a blank or the text's end), and so did a one-dash option right after a Markdown code span's
    backquote (`` `-Password PW` ``), which also took the closing backquote with its value."""
    _redacts(text, out)


@pytest.mark.parametrize(
    ("text", "out", "keys"),
    [
        ("echo Hunter2pw 2>&1 | passwd", "echo [redacted key] 2>&1 | passwd", 1),
        ("printf '%s\\n' Hunter2pw Hunter2pw 2>&1 | passwd --stdin bob", "printf '%s\\n' [redacted key] 2>&1 | passwd --stdin bob", 1),
        ("(echo Hunter1pw && echo Hunter2pw) | passwd", "(echo [redacted key] && echo [redacted key]) | passwd", 2),
        ("(echo bob:Hunter1pw && echo ann:Hunter2pw) | chpasswd", "(echo bob:[redacted key] && echo ann:[redacted key]) | chpasswd", 2),
        ("echo Hunter2pw | gh auth login --with-token 2>/dev/null", "echo [redacted key] | gh auth login --with-token 2>/dev/null", 1),
    ],
)  # fmt: skip
def test_an_ampersand_that_joins_or_redirects_keeps_the_echoed_password_in_view(text: str, out: str, keys: int) -> None:
    """``echo PW 2>&1 | passwd`` and the first ``echo`` of ``(echo PW && echo PW) | passwd`` let the password out
    (an ``&`` was read as the end of the command, though ``>&`` redirects and ``&&`` joins a group's commands), and
    ``--with-token 2>/dev/null`` took the redirection for the token."""
    _redacts(text, out, keys)


def test_an_echo_whose_output_goes_elsewhere_stays() -> None:
    _stays("echo Hunter2pw && ls | passwd\necho Hunter2pw & cat f | passwd\necho done 2>&1 | tee log\n")


@pytest.mark.parametrize(
    "text",
    [
        "(echo Hunter1pw; echo Hunter2pw) 2>/dev/null | passwd",
        "(echo Hunter1pw; echo Hunter2pw) 2>&1 | passwd",
        "{ echo Hunter1pw && echo Hunter2pw; } 2> /dev/null | sudo smbpasswd -s",
        "(echo bob:Hunter1pw; echo ann:Hunter2pw) 2>/dev/null | chpasswd",
    ],
)
def test_a_redirection_after_a_group_piped_into_a_reader_keeps_no_password(text: str) -> None:
    """A redirection between a group's closing bracket and its pipe into the reader ('(echo A; echo B) 2>/dev/null |
    passwd') let the group's first password out: its echo looked for the pipe right after the bracket, where the
    others (read as an echo piped on its own) did not."""
    _redacts(text, text.replace("Hunter1pw", "[redacted key]").replace("Hunter2pw", "[redacted key]"), 2)


def test_a_group_with_a_redirection_piped_elsewhere_keeps_its_words() -> None:
    _stays("(echo Hunter1pw; echo Hunter2pw) 2>/dev/null | tee out.txt")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("Set `DB_PASSWORD=Hunter2pw` in .env", "Set `DB_PASSWORD=[redacted key]` in .env"),
        ("use `password: Hunter2pw` there", "use `password: [redacted key]` there"),
        ("password: `Hunter2pw`", "password: `[redacted key]`"),
        ("`password: Eat the red apple` was the old one", "`password: [redacted key]` was the old one"),
        ('{"c": "Set `DB_PASSWORD=Hunter2pw` in .env"}', '{"c": "Set `DB_PASSWORD=[redacted key]` in .env"}'),
        ("**Password:** `Hunter2pw`", "**Password:** `[redacted key]`"),
    ],
)  # fmt: skip
def test_a_value_in_a_markdown_code_span_ends_at_its_backquote(text: str, out: str) -> None:
    """``Set `DB_PASSWORD=PW` in .env`` hid the closing backquote and the rest of the sentence with the password
    (the value of a key named for a password runs to its line's end), and ``password: `PW` `` its backquotes: a
    model's prose writes commands and settings in code spans, which a backquote closes."""
    _redacts(text, out)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("curl -su bob:Hunter2pw x.io", "curl -su bob:[redacted key] x.io"),
        ("curl -sSku bob:Hunter2pw https://x.io", "curl -sSku bob:[redacted key] https://x.io"),
        ('curl -fsSLu "bob:two words" x.io', 'curl -fsSLu "bob:[redacted key]" x.io'),
        ('{"c": "curl -ku bob:Hunter2pw x.io"}', '{"c": "curl -ku bob:[redacted key] x.io"}'),
    ],
)  # fmt: skip
def test_curls_user_after_flags_run_together_gives_its_password(text: str, out: str) -> None:
    """``curl -su bob:PW`` (``-sSku``, ``-fsSLu``) let the password out: only ``-u`` on its own was read, though
    curl takes flags run together, the last of them taking the value."""
    _redacts(text, out)


def test_curls_flags_that_take_a_value_are_no_user() -> None:
    _stays("curl -Hu:x x.io\ncurl -ou:x x.io\ncurl -su bob x.io\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("curl -U bob:Hunter2pw -x proxy:3128 x.io", "curl -U bob:[redacted key] -x proxy:3128 x.io"),
        ("curl -sU 'bob:two words' x.io", "curl -sU 'bob:[redacted key]' x.io"),
        ("curl --proxy-user bob:Hunter2pw x.io", "curl --proxy-user bob:[redacted key] x.io"),
        ('{"c": "curl --proxy-user=bob:Hunter2pw x.io"}', '{"c": "curl --proxy-user=bob:[redacted key] x.io"}'),
    ],
)  # fmt: skip
def test_curls_proxy_user_gives_its_password(text: str, out: str) -> None:
    """``curl -U bob:PW`` and ``--proxy-user bob:PW`` (the proxy's credentials, written as ``-u`` writes the
    server's) let the password out: only ``-u`` and ``--user`` were read."""
    _redacts(text, out)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("npm config set //registry.npmjs.org/:_authToken 5f8a3c2e-1b4d-4e6f-9a7c-2d3e4f5a6b7c",
         "npm config set //registry.npmjs.org/:_authToken [redacted key]"),
        ("npm set //npm.pkg.github.com/:_authToken 'abcdef123456' --location project",
         "npm set //npm.pkg.github.com/:_authToken '[redacted key]' --location project"),
        ("npm config set _auth YWxpY2U6c2VjcmV0", "npm config set _auth [redacted key]"),
        ("pnpm config set //r.example.com/:_password SGVsbG8x", "pnpm config set //r.example.com/:_password [redacted key]"),
        ("yarn config set npmAuthToken 5f8a3c2e1b4d4e6f", "yarn config set npmAuthToken [redacted key]"),
        ('{"c": "npm config set //registry.npmjs.org/:_authToken abcdef123456 && npm publish"}',
         '{"c": "npm config set //registry.npmjs.org/:_authToken [redacted key] && npm publish"}'),
    ],
)  # fmt: skip
def test_an_npm_credential_set_on_the_command_line_goes(text: str, out: str) -> None:
    """``npm config set //registry/:_authToken TOKEN`` (``npm set``, pnpm's, ``_auth``, ``_password``, yarn's
    ``npmAuthToken``), how CI scripts give npm a token, kept the token: an npm config line's key was read only
    before its ``=`` (``.npmrc``'s ``_authToken=…``), and a token of no known format has no shape of its own."""
    _redacts(text, out)


def test_an_npm_setting_or_a_reference_set_on_the_command_line_stays() -> None:
    _stays("npm config set //registry.npmjs.org/:_authToken $NPM_TOKEN\nnpm config set registry https://r.example.com\n"
           "yarn config set npmAuthToken ${NPM_TOKEN}\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ('npm config set "//registry.npmjs.org/:_authToken" 5f8a3c2e-1b4d-4e6f-9a7c-2d3e4f5a6b7c',
         'npm config set "//registry.npmjs.org/:_authToken" [redacted key]'),
        ("npm set '//npm.pkg.github.com/:_authToken' 'abcdef123456'",
         "npm set '//npm.pkg.github.com/:_authToken' '[redacted key]'"),
        ('yarn config set "npmAuthToken" 5f8a3c2e1b4d4e6f', 'yarn config set "npmAuthToken" [redacted key]'),
        ('{"c": "npm config set \\"//r.example.com/:_authToken\\" abcdef123456"}',
         '{"c": "npm config set \\"//r.example.com/:_authToken\\" [redacted key]"}'),
    ],
)  # fmt: skip
def test_an_npm_credential_set_under_a_quoted_key_goes(text: str, out: str) -> None:
    """a8582a66 took the credential after an npm config key given to ``config set`` only when the key was bare: a
    script quoting it (``npm config set "//registry/:_authToken" TOKEN``, as scripts that build the key from a
    variable do) kept a token of no known format whole."""
    _redacts(text, out)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("echo 2>/dev/null Hunter2pw | passwd", "echo 2>/dev/null [redacted key] | passwd"),
        ("echo -n 2> err.log 'Hunter2pw' | docker login -u bob --password-stdin",
         "echo -n 2> err.log '[redacted key]' | docker login -u bob --password-stdin"),
        ('{"c": "echo 2>&1 Hunter2pw | sudo -S ls"}', '{"c": "echo 2>&1 [redacted key] | sudo -S ls"}'),
    ],
)  # fmt: skip
def test_a_redirection_before_an_echoed_password_is_no_part_of_it(text: str, out: str) -> None:
    """``echo 2>/dev/null PW | passwd`` replaced the ``2`` of the redirection and let the password out: the echoed
    value was read from the first word after ``echo``'s options, a redirection's descriptor."""
    _redacts(text, out)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("nmcli radio wifi on, then mcli alias set m http://h:9000 AKID Sup3rKey99 and nmcli dev wifi connect S "
         "password Wifi1234", "nmcli radio wifi on, then mcli alias set m http://h:9000 AKID [redacted key] and nmcli "
         "dev wifi connect S password [redacted key]"),
        ('{"c": "mysql -u root db\\ncurl -u bob:Hunter2pw x.io\\nmysql -pSecret99 db"}',
         '{"c": "mysql -u root db\\ncurl -u bob:[redacted key] x.io\\nmysql -p[redacted key] db"}'),
    ],
)  # fmt: skip
def test_every_commands_password_on_a_line_goes(text: str, out: str) -> None:
    """The commands that take a password were one pattern: a command's match ran from its name to its password over
    another command's, whose password (``mc alias set … KEY``, ``curl -u bob:PW``) was then never looked for."""
    _redacts(text, out, keys=2)


_ESCAPED_QUOTE = ('password = "a b\\"c9x"', 'password = "[redacted key]"')
_ESCAPED_BACKSLASH = ('password = "a b\\\\" then more words', 'password = "[redacted key]" then more words')


def _as_json(pair: tuple[str, str], times: int) -> tuple[str, str]:
    """Both texts of ``pair`` written ``times`` times as a JSON string."""
    for _ in range(times):
        pair = (orjson.dumps(pair[0]).decode(), orjson.dumps(pair[1]).decode())
    return pair


@pytest.mark.parametrize("times", [0, 1, 2])
def test_a_quoted_value_goes_on_past_a_quote_escaped_in_it(times: int) -> None:
    """A quoted value of several words ended at the first of its quotes, one a backslash escapes too (``password =
    "a b\\"c"`` kept ``c"``), also as JSON text, and JSON text of JSON text, write it. A backslash escaped before the
    closing quote (``"a b\\\\"``) escapes no quote: there the value ends, as before."""
    _redacts(*_as_json(_ESCAPED_QUOTE, times))
    _redacts(*_as_json(_ESCAPED_BACKSLASH, times))


def test_a_quoted_file_of_several_words_given_to_bitwarden_is_no_password() -> None:
    """``bw unlock --passwordfile "pw file.txt"`` replaced ``file.txt``: the option's value was read to the first
    blank, and the rest of the quoted name taken for the password after it."""
    text = "bw unlock --passwordfile \"pw file.txt\"\nbw unlock --passwordfile 'pw file.txt' --raw\n"
    _stays(text)
    _stays(orjson.dumps(text).decode())


def test_every_positional_password_on_a_line_goes() -> None:
    """The commands that take a password as a bare argument were one pattern too: smbclient's match ran from its
    name over ``net user bob PW`` to its own password, and ``PW`` was never looked for."""
    _redacts('{"c": "smbclient -L h\\nnet user bob Pw1234x /add\\nsmbclient //h/s Secret9x"}',
             '{"c": "smbclient -L h\\nnet user bob [redacted key] /add\\nsmbclient //h/s [redacted key]"}', keys=2)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("sshpass -p 'Hunter2pw\\' ssh h 'ls'", "sshpass -p '[redacted key]' ssh h 'ls'"),
        ("mysql --password 'Hunter2pw\\' then 'x y'", "mysql --password '[redacted key]' then 'x y'"),
        ("curl -u 'bob:Hunter2pw\\' https://x.io -d 'a b'", "curl -u 'bob:[redacted key]' https://x.io -d 'a b'"),
        ("echo 'Hunter2pw\\' | passwd", "echo '[redacted key]' | passwd"),
        ('{"c": "sshpass -p \'Hunter2pw\\\\\' ssh h \'ls\'"}', '{"c": "sshpass -p \'[redacted key]\' ssh h \'ls\'"}'),
        ("echo $'Hunter\\'2pw x' | passwd", "echo $'[redacted key]' | passwd"),
        ("password = 'Hunter\\'2pw' and more", "password = '[redacted key]' and more"),
    ],
)  # fmt: skip
def test_a_backslash_in_a_shells_single_quotes_escapes_nothing(text: str, out: str) -> None:
    """``sshpass -p 'PW\\' ssh h 'ls'`` hid `` ssh h `` too: a command's single-quoted value went on past a ``'``
    after a backslash, though a shell ends it at the next ``'`` whatever comes before (and ``echo 'PW\\'`` left the
    backslash, part of the password, in view). In bash's ``$'…'`` and in code (``password = 'a\\'b'``) a backslash
    does escape the quote: those values go on past it, as before."""
    _redacts(text, out)


@pytest.mark.parametrize(
    ("text", "out", "keys"),
    [
        ("(echo Hunter1pw; echo don't) | passwd", "(echo [redacted key]; echo [redacted key]) | passwd", 2),
        ("echo it's4me | passwd", "echo [redacted key] | passwd", 1),
        ("sshpass -p don't4me ssh h", "sshpass -p [redacted key] ssh h", 1),
        ("echo Hunter'2 pw'x | passwd", "echo [redacted key] | passwd", 1),
        ('{"c": "sshpass -p Hunter\\"2 pw\\"x ssh h"}', '{"c": "sshpass -p [redacted key] ssh h"}', 1),
        ("echo a 'b c' | passwd", "echo [redacted key] | passwd", 1),
        ("echo a 'b c'd | passwd", "echo [redacted key] | passwd", 1),
        ('sshpass -p Hunter"2 pw"x ssh h', "sshpass -p [redacted key] ssh h", 1),
        ('echo Hunter"2 pw"x | passwd', "echo [redacted key] | passwd", 1),
        ('mysql -pHunter"2 pw"x db', "mysql -p[redacted key] db", 1),
        ('{"c": "sshpass -p Hunter2pw", "d": "x y"}', '{"c": "sshpass -p [redacted key]", "d": "x y"}', 1),
    ],
)  # fmt: skip
def test_a_quote_inside_a_commands_word_goes_with_it(text: str, out: str, keys: int) -> None:
    """``(echo X; echo don't) | passwd`` gave ``[redacted key]'t``: a command's unquoted password ended at a quote
    inside its word, which a shell reads as opening a quoted part of the same word (``Hunter'2 pw'x`` is one
    word), and a reader as an apostrophe when nothing closes it on the line (``don't``). Either way it is the
    password's: the word goes on to that quote's close and past it, or, unclosed, over the apostrophe. A bare
    ``"`` in text let ``"2 pw"x`` of ``sshpass -p Hunter"2 pw"x`` out (it was taken for the end of a JSON string
    however the line read), and ``echo a 'b c' | passwd`` left the quote that closes the value's own in view."""
    _redacts(text, out, keys)


@pytest.mark.parametrize("head", ["a" * 2000 + " ", "cd /srv/app\\n"], ids=["long-line", "next-line"])
@pytest.mark.parametrize("command", ["sshpass -p Hunter2pw", "mysql -pHunter2pw", "echo Hunter2pw | passwd"])
def test_a_json_strings_end_is_no_quote_of_the_password(head: str, command: str) -> None:
    """0f71d486 takes a bare ``"`` after a command's password for one it opens inside its word when the line holds
    an even number of ``"`` before the value. In JSON text (a bash call's arguments, a tool's JSON output) whose
    string began before the line did (after a ``\\n`` of the string) or more than 1,024 bytes back, the string's
    closing quote was counted so, and the redaction ran on over ``", "d`` to the next quote, the next key with it."""
    text = '{"c": "' + head + f'{command}", "d": "x y"}}'
    _redacts(text, text.replace("Hunter2pw", "[redacted key]"))


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("mysql --password hunter2,xyzzy db", "mysql --password [redacted key] db"),
        ("gh auth login --with-token abc,defghij", "gh auth login --with-token [redacted key]"),
        ("Connect-X -Password abc,defghi -Force", "Connect-X -Password [redacted key] -Force"),
        ("tool --api-key aB3]dE5}xY9 run", "tool --api-key [redacted key] run"),
        ('{"c": "mysql --password hunter2,xyzzy db"}', '{"c": "mysql --password [redacted key] db"}'),
        ("--password hunter2, then", "--password [redacted key], then"),
    ],
)  # fmt: skip
def test_a_comma_or_bracket_inside_an_options_value_ends_nothing(text: str, out: str) -> None:
    """``mysql --password hunter2,xyzzy db`` let ``,xyzzy`` out, and ``--with-token abc,defghij`` all of it (``abc``
    alone is too short to judge): an option's value ended at a comma, ``]`` or ``}``, which a shell's word holds.
    One at the value's end stays outside it (``--password hunter2, then``, a help text's ``[--token TOKEN]``)."""
    _redacts(text, out)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("mysql -u root --password=Abc,def1;ls", "mysql -u root --password=[redacted key];ls"),
        ("mysql --password=ab]cdefg db", "mysql --password=[redacted key] db"),
        ('{"c": "tool --api-key=Abc,de}f1 run"}', '{"c": "tool --api-key=[redacted key] run"}'),
    ],
)  # fmt: skip
def test_a_comma_or_bracket_inside_an_options_value_after_its_equals_ends_nothing(text: str, out: str) -> None:
    """``mysql --password=Abc,def1`` went out whole: after ``=`` an option's value is a pair's (``_PAIR``), which ended
    at the comma, and ``Abc`` alone was too short to judge; ``--password Abc,def1`` was redacted whole. The shell's
    word goes on past ``,]}`` after ``=`` too (and ends at ``;``, as a shell's word does)."""
    _redacts(text, out)


def test_an_options_placeholder_before_a_comma_or_bracket_stays() -> None:
    _stays("usage: tool [--token TOKEN] [-k API_KEY]\n  -t TOKEN, --token TOKEN, --api-key API_KEY,  the key\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("DB_PASSWORD=aB3)dE5xx", "DB_PASSWORD=[redacted key]"),
        ("DB_PASSWORD=aB3,dE5xx\nPORT=5432", "DB_PASSWORD=[redacted key]\nPORT=5432"),
        ("export API_TOKEN=abcdef;ghijklmn", "export API_TOKEN=[redacted key]"),
        ("password: aB3;dE5xzzz", "password: [redacted key]"),
        ("  api_key: aB3,dE5xzzz", "  api_key: [redacted key]"),
        ("psk=aB3]dE5xx", "psk=[redacted key]"),
        ('{"c": "DB_PASSWORD=aB3)dE5xx\\nls"}', '{"c": "DB_PASSWORD=[redacted key]\\nls"}'),
        ("DB_PASSWORD=aB3cdef;PORT=5432", "DB_PASSWORD=[redacted key];PORT=5432"),
        ("mount -o username=bob,password=hunter2pw,uid=1000 //h/s /mnt",
         "mount -o username=bob,password=[redacted key],uid=1000 //h/s /mnt"),
        ("Server=db;Uid=sa;Pwd=aB3cdef;Database=app", "Server=db;Uid=sa;Pwd=[redacted key];Database=app"),
    ],
)  # fmt: skip
def test_punctuation_inside_an_env_or_config_value_ends_nothing(text: str, out: str) -> None:
    """``DB_PASSWORD=aB3)dE5xx`` let ``)dE5xx`` out, and ``password: aB3;dE5xzzz`` all of it (``aB3`` alone too short
    to judge): a value after a key word ended at ``,;)]}``, which in code close or part what holds it, but on an env
    file's or a config file's line are the value's own characters. There the value goes on past them, but to the
    next key (``;PORT=5432``, a mount's ``,uid=1000``)."""
    _redacts(text, out)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("password: aB3;dE5 more words", "password: [redacted key]"),
        ("passphrase = x9,Eat the red apple\nuser = bob", "passphrase = [redacted key]\nuser = bob"),
        ('{"c": "password: aB3;dE5 more words\\nls"}', '{"c": "password: [redacted key]\\nls"}'),
        ("DB_PASSWORD=aB3)dE5 psql -h db", "DB_PASSWORD=[redacted key] psql -h db"),
    ],
)  # fmt: skip
def test_a_passphrase_with_punctuation_in_its_first_word_goes_to_its_lines_end(text: str, out: str) -> None:
    """``password: aB3;dE5 more words`` went out whole: the words after a password's first word were looked for
    where ``_PAIR``'s value stopped, at the ``;``, so the line's rest was never the password's, and ``aB3`` alone was
    too short to judge. They are now looked for after the first word's punctuation inside it."""
    _redacts(text, out)


@pytest.mark.parametrize("text", ["DB_PASSWORD={}\nPORT=5432", "password: {}\nuser: bob", '{{"c": "API_TOKEN={}\\nls"}}'])
def test_a_long_value_with_punctuation_inside_it_goes_whole(text: str) -> None:
    """A comma-joined value longer than 256 bytes (a key list, a generated secret) let its rest out: the value was
    followed over punctuation inside it 256 bytes on at most, then cut there."""
    value = ",".join(f"aB3dE{i}x" for i in range(200))
    _redacts(text.format(value), text.format("[redacted key]"))


def test_punctuation_after_a_key_words_value_in_code_stays() -> None:
    _stays("x={password:e,username:t}\nr = login(password=password_hash).json()\nf(token=tok,x)\n"
           "  password: pw,\n  token: getToken(),\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("postgres://app:p@ss@db/app", "postgres://app:%5Bredacted%20key%5D@db/app"),
        ("mongodb://bob:a@b.com@db.example.com:27017/x", "mongodb://bob:%5Bredacted%20key%5D@db.example.com:27017/x"),
        ('{"url": "redis://:Pa@ss@w0rd@cache:6379"}', '{"url": "redis://:%5Bredacted%20key%5D@cache:6379"}'),
        ("https://u:pw@api.example.com?email=bob@example.com",
         "https://u:%5Bredacted%20key%5D@api.example.com?email=[redacted email]"),
        ("https://u:p#ss@h.io/x", "https://u:%5Bredacted%20key%5D@h.io/x"),
    ],
)  # fmt: skip
def test_a_urls_password_goes_to_the_last_at_sign_before_its_host(text: str, out: str) -> None:
    """``postgres://app:p@ss@db/app`` let ``ss`` out: a URL's password ended at its first ``@``, where a URL reader
    (urllib, libpq) ends the user's part at the last one before the path, query or fragment, so an ``@`` a password
    holds unencoded is the password's."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == out, r.text(text)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("https:\\/\\/user:Sup3rPass@host\\/x", "https:\\/\\/user:%5Bredacted%20key%5D@host\\/x"),
        ('{"url":"postgres:\\/\\/app:p@ss@db\\/app"}', '{"url":"postgres:\\/\\/app:%5Bredacted%20key%5D@db\\/app"}'),
        ("redis:\\\\\\/\\\\\\/:Sup3rPass@cache:6379", "redis:\\\\\\/\\\\\\/:%5Bredacted%20key%5D@cache:6379"),
        ("https://user:@host/", "https://user:@host/"),
    ],
)  # fmt: skip
def test_a_urls_password_goes_where_json_text_escapes_its_slashes(text: str, out: str) -> None:
    """``https:\\/\\/user:Sup3rPass@host\\/`` (JSON text as PHP writes it, and JSON text of it) kept its password:
    a URL's credentials were looked for after ``://`` only, though an escaped slash is one JSON text may write (a
    home directory's ``\\/home\\/`` was found so). A blank password has nothing to replace."""
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text) == out and r.summary()["key"] == out.count("%5Bredacted"), r.text(text)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ('password := "{}"', 'password := "[redacted key]"'), ("apiKey := `{}`", "apiKey := `[redacted key]`"),
        ("'password' => '{}',", "'password' => '[redacted key]',"),
        ('$cfg = ["api_key" => "{}", "user" => "bob"];', '$cfg = ["api_key" => "[redacted key]", "user" => "bob"];'),
    ],
)  # fmt: skip
def test_a_secret_go_or_a_php_array_assigns_goes(text: str, out: str) -> None:
    """Go's ``password := "Sup3r…"`` and a PHP array's (or a Ruby hash's) ``'password' => 'Sup3r…'`` kept the
    secret (found by a property of assignment shapes over random secrets): a key word's sign was ``:`` or ``=``
    alone. ``:=`` is one now, and so is ``=>`` after a quoted key (a bare one is as likely an arrow function's
    parameter: ``tokens.map(token => 'Bearer ' + token)`` stays)."""
    secret = "Sup3rSecretValue9"
    _redacts(text.format(secret), out)
    _in_json_text(text.format(secret), out)
    _stays("tokens.map(token => 'Bearer ' + token)\nif password == 'abcdef' {}\n")


@pytest.mark.parametrize(
    "text",
    ["https:\\/\\/u:Sup3rPass@h\\/ " * 2500, "http:" + "\\" * 60000 + "//u:Sup3rPass@h and http:\\/" + "\\" * 60000 + "/u:Sup3rPass@h"],
    ids=["escaped URLs", "runs of backslashes"],
)  # fmt: skip
def test_urls_with_escaped_slashes_are_redacted_in_linear_time(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """A URL's ``//`` may be written with backslashes before each slash (``_KEY_FORMATS``, RE2's; ``_URL_HEAD`` on what
    that found): 60 kB of such URLs, or runs of 60,000 backslashes there, are searched once or twice. What is searched is
    counted (``_counted_text``): at most 3 times the text (1.5 and 2 now)."""
    counted = _counted_text(monkeypatch, text, 3)  # (before the redactor: it takes the counted patterns)
    out = Redactor(environ={}, home="/home/ann").text(counted)
    assert "Sup3rPass" not in out and out.count("%5Bredacted%20key%5D") == text.count("Sup3rPass")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("amqp://guest:gu est@h", "amqp://guest:%5Bredacted%20key%5D@h"),
        ("AMQP_URL=amqp://guest:gu est two@rabbit:5672/vh", "AMQP_URL=amqp://guest:%5Bredacted%20key%5D@rabbit:5672/vh"),
        ('{"u": "postgres://app:my pass@db/app"}', '{"u": "postgres://app:%5Bredacted%20key%5D@db/app"}'),
    ],
)  # fmt: skip
def test_a_urls_password_with_a_space_in_it_goes(text: str, out: str) -> None:
    """``amqp://guest:gu est@h`` let ``gu est`` out: a URL's password ended at a blank, where a URL reader (urllib)
    takes a space in it as the password's own."""
    _redacts(text, out)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("DB_PASSWORD=Abc\\ 123x", "DB_PASSWORD=[redacted key]"),
        ("export API_TOKEN=Ab\\ cd\\ 99x && ls", "export API_TOKEN=[redacted key] && ls"),
        ("echo Abc\\ 12x | passwd --stdin bob", "echo [redacted key] | passwd --stdin bob"),
        ("sshpass -p Abc\\ 12x ssh h", "sshpass -p [redacted key] ssh h"),
        ('{"c": "DB_PASSWORD=Abc\\\\ 123x\\nls"}', '{"c": "DB_PASSWORD=[redacted key]\\nls"}'),
        ('secret: Abcdef12"xyz', "secret: [redacted key]"), ("secret: Abcdef12'xyz\n", "secret: [redacted key]\n"),
        ('the api_key=Abcdef12"xy9 is set', "the api_key=[redacted key] is set"),
        ('{"c": "secret: Abcdef12\\"xyz\\nls"}', '{"c": "secret: [redacted key]\\nls"}'),
        ('password: Abc def12"xyz', "password: [redacted key]"), ("DB_PASSWORD=ab;\"cd1x", "DB_PASSWORD=[redacted key]"),
        ('{"a": "token: abc123xy", "b": 1}', '{"a": "token: [redacted key]", "b": 1}'),
        ("TOKEN=`Abc def123xyz`", "TOKEN=`[redacted key]`"), ("TOKEN=``Abcdef123xyz``", "TOKEN=``[redacted key]``"),
        ("API_TOKEN=`Abcdef1`23xyz`", "API_TOKEN=`[redacted key]`"), ("password: Abc`def12", "password: [redacted key]"),
        ("the token: `Abc def123` here", "the token: `[redacted key]` here"),
        ("tool --api-key `Abc def12` run", "tool --api-key `[redacted key]` run"),
        ('{"c": "TOKEN=`Abc def123`\\nls"}', '{"c": "TOKEN=`[redacted key]`\\nls"}'),
        ("DB_PASSWORD=Ab{}00xy", "DB_PASSWORD=[redacted key]"), ("password: Ab{}00xy", "password: [redacted key]"),
        ("api_key=Ab{}00xyzz", "api_key=[redacted key]"), ("the token: Ab(x)9zz and", "the token: [redacted key] and"),
        ("export API_TOKEN=Abcd[1]2x", "export API_TOKEN=[redacted key]"),
        ("postgres://app:pa'ss@db/app", "postgres://app:%5Bredacted%20key%5D@db/app"),
        ('{"c": "psql \\"postgres://app:Ab\'cd9\'x@db\\""}', '{"c": "psql \\"postgres://app:%5Bredacted%20key%5D@db\\""}'),
    ],
)  # fmt: skip
def test_a_value_with_an_escaped_blank_a_quote_a_backquote_or_a_bracket_inside_goes_whole(text: str, out: str) -> None:
    """Each of these let part of its secret out, or all of it: ``DB_PASSWORD=Abc\\ 123x`` kept `` 123x`` (a value
    ended at a blank a shell's backslash escapes); ``secret: Abcdef12"xyz`` kept ``"xyz`` (a value ended at any
    quote, inside it too); ``TOKEN=`Abc def123xyz` `` kept ``def123xyz`` and ``password: Abc`def12`` all of it (a
    backquote after the sign was no quote, one inside the value ended it); ``password: Ab{}00xy`` all of it (a
    name and a bracket closed later read as code, which never writes a letter or digit right after its close);
    ``postgres://app:pa'ss@db`` all of it (a URL's password stopped at a quote)."""
    _redacts(text, out)


def test_code_and_quotes_that_close_around_a_value_stay() -> None:
    """A quote that a blank or punctuation follows closes one around a value (also around a URL); code's string
    with its prefix, a call, an index or a type, and backquoted prose or code stay."""
    _stays('token = f"{prefix}{x}"\nsecret = rb"\\d+"\ntoken: `Enter the token`\nSet `DB_PASSWORD` in .env\n'
           "--token `next_token(a, b)`\ntoken = getToken()\npassword: Optional[str] = None\n"
           "x={password:e,username:t}\ntoken: next(it).x\nx = ['http://h:8080','ann_at_x'] and 'http://h:8080' or 'b@c'\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("echo a 'b c'd e | passwd", "echo [redacted key] | passwd"),
        ('(echo x"y z"w v; echo q) | passwd bob', "(echo [redacted key]; echo [redacted key]) | passwd bob"),
        ("printf '%s=%s\\n' DB_PASSWORD PW9secretx > .env", "printf '%s=%s\\n' DB_PASSWORD [redacted key] > .env"),
        ("printf '%s: \"%s\"\\n' password 'Abc def9' API_TOKEN t0k3nx",
         "printf '%s: \"%s\"\\n' password '[redacted key]' API_TOKEN [redacted key]"),
    ],
)  # fmt: skip
def test_an_echoed_word_with_a_quote_inside_and_a_key_printf_is_given_keep_no_secret(text: str, out: str) -> None:
    """``echo a 'b c'd e | passwd`` let ``e`` out: the echoed words stopped at a quote inside one, and the word's rest
    was taken but not the words after. ``printf '%s=%s\\n' DB_PASSWORD PW`` let ``PW`` out: only a key the format
    names was looked for, not one an argument gives."""
    _redacts(text, out, keys=out.count(R))
    r = Redactor(environ={}, home="/home/ann")
    assert r.walk({"c": text}) == {"c": out}  # the screen lets it through to the patterns
    _stays("echo hi 'there you' | tee f\nprintf '%s=%s\\n' USER bob HOME /srv\nprintf '%s %s\\n' password hunter2x\n")


@pytest.mark.parametrize(
    ("text", "out", "host"),
    [
        ("postgres://app:Secr3tPw@db:5432/app", "postgres://app:%5Bredacted%20key%5D@db:5432/app", "db"),
        ("https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.com/x", "https://%5Bredacted%20key%5D@github.com/x",
         "github.com"),
        ("https://oauth2:glpat-abcdefghijklmnopqrstu@gitlab.com/g/r.git",
         "https://oauth2:%5Bredacted%20key%5D@gitlab.com/g/r.git", "gitlab.com"),
        ("see http://samuel:pw1234@example.com:8000/x", "see http://samuel:%5Bredacted%20key%5D@example.com:8000/x",
         "example.com"),
    ],
)  # fmt: skip
def test_a_replacement_in_a_urls_user_part_leaves_a_url_that_parses(text: str, out: str, host: str) -> None:
    """``postgres://app:[redacted key]@db`` made ``urlsplit`` raise (``'redacted key' does not appear to be an IPv4
    or IPv6 address``: a ``[`` in a URL's user part reads as an IPv6 host's), and a token as a URL's user took the
    host with it (``https://[redacted key]/x``, read as an e-mail address). The replacement is percent-encoded
    there, the host kept, and an export of the export replaces nothing again."""
    _redacts(text, out)
    url = urlsplit(out.rpartition(" ")[2])
    assert url.hostname == host and "redacted" not in url.hostname and "Secr3t" not in out
    assert unquote(url.password or url.username or "") == "[redacted key]"
    _stays(out)


def test_a_port_or_a_link_before_an_at_sign_is_no_password_with_a_space() -> None:
    _stays("Listening on http://localhost:3000 and mail the admin\nredis://cache:6379: refused; try user@host\n"
           "see [x](http://h:port) by @ann\nhttp://example.com: it is at @bob\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("https://b.s3.amazonaws.com/k?X-Amz-Date=20240101T000000Z&X-Amz-SignedHeaders=host"
         "&X-Amz-Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024",
         "https://b.s3.amazonaws.com/k?X-Amz-Date=20240101T000000Z&X-Amz-SignedHeaders=host&X-Amz-Signature=[redacted key]"),
        ("https://a.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig=AbCdEf%2BgHiJkLmNoPqRsTu%3D&x=1",
         "https://a.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig=[redacted key]&x=1"),
        ("https://storage.googleapis.com/b/o?X-Goog-Signature=0a1b2c3d4e5f60718293a4b5c6d7e8f9",
         "https://storage.googleapis.com/b/o?X-Goog-Signature=[redacted key]"),
        ('{"u": "https://x.cloudfront.net/a?Expires=1\\u0026Signature=AbCdEf~GhIjKl-MnOpQr__\\u0026Key-Pair-Id=K2J"}',
         '{"u": "https://x.cloudfront.net/a?Expires=1\\u0026Signature=[redacted key]\\u0026Key-Pair-Id=K2J"}'),
    ],
)  # fmt: skip
def test_the_signature_of_a_signed_url_goes(text: str, out: str) -> None:
    """A presigned S3 or GCS URL, an Azure SAS or a CloudFront signed URL let its signature out, which lets anyone
    holding the URL read (or write) the object until it expires: a credential, as a URL's password is."""
    _redacts(text, out)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("https://h.io/x?token=SECRETabc123xyz&x=1", "https://h.io/x?token=[redacted key]&x=1"),
        ('curl "https://api.h.io/v1?api_key=Abc123Xyz789&page=2#top"',
         'curl "https://api.h.io/v1?api_key=[redacted key]&page=2#top"'),
        ('{"u": "https://h.io/x?a=1\\u0026access_token=Abc123Xyz789\\u0026x=1"}',
         '{"u": "https://h.io/x?a=1\\u0026access_token=[redacted key]\\u0026x=1"}'),
        ("curl -d 'user=bob&password=Hunter2pw&remember=1' h.io", "curl -d 'user=bob&password=[redacted key]&remember=1' h.io"),
        ("https://h.io/?password=Hunter2pw&x=1 and more words", "https://h.io/?password=[redacted key]&x=1 and more words"),
        ("https://h.io/?client_secret=Abc123Xyz789#frag", "https://h.io/?client_secret=[redacted key]#frag"),
        ("see <https://h.io/?token=Abc123Xyz789>.", "see <https://h.io/?token=[redacted key]>."),
    ],
)  # fmt: skip
def test_a_secret_in_a_url_query_goes_alone(text: str, out: str) -> None:
    """``?token=SECRET&x=1`` hid ``&x=1`` too (and a password's value after ``?password=`` the rest of its line): a
    value after a key word went on past the ``&`` that starts a URL query's next parameter (or a form's), and past
    the ``#`` of its fragment, which a value there holds only encoded. It now ends there."""
    _redacts(text, out)


def test_a_short_or_named_signature_stays() -> None:
    _stays("?sig=abc&Signature=none\nsee the X-Amz-Signature= parameter\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("gh secret set DB_PASSWORD --body Hunter2pw", "gh secret set DB_PASSWORD --body [redacted key]"),
        ("gh secret set DB_PASSWORD -b'Hunter 2pw' --repo o/r", "gh secret set DB_PASSWORD -b'[redacted key]' --repo o/r"),
        ("echo Hunter2pw | gh secret set DB_PASSWORD", "echo [redacted key] | gh secret set DB_PASSWORD"),
        ("vercel env add DB_PASSWORD production <<< Hunter2pw", "vercel env add DB_PASSWORD production <<< [redacted key]"),
        ("az keyvault secret set --vault-name v --name db --value Hunter2pw",
         "az keyvault secret set --vault-name v --name db --value [redacted key]"),
        ("aws ssm put-parameter --name /db/pw --value Hunter2pw --type SecureString",
         "aws ssm put-parameter --name /db/pw --value [redacted key] --type SecureString"),
        ('aws secretsmanager create-secret --name db --secret-string "Hunter 2pw"',
         'aws secretsmanager create-secret --name db --secret-string "[redacted key]"'),
        ("kubectl create secret generic db --from-literal=user=admin1 --from-literal=pw=Hunter2pw",
         "kubectl create secret generic db --from-literal=user=[redacted key] --from-literal=pw=[redacted key]"),
    ],
)  # fmt: skip
def test_the_value_a_command_stores_as_a_secret_goes(text: str, out: str) -> None:
    """``gh secret set NAME --body PW`` (or PW on its standard input), ``vercel env add``, ``az keyvault secret set
    --value``, ``aws ssm put-parameter --value``, ``aws secretsmanager … --secret-string`` and ``kubectl create
    secret … --from-literal=KEY=VALUE`` let the value out: each stores what it is given as a secret, whatever its
    name (``pw``, ``user``), so what it is given is one."""
    _redacts(text, out, keys=out.count("[redacted key]"))


@pytest.mark.parametrize(
    ("text", "out", "keys"),
    [
        ('printf "password=%s\\n" Hunter2pw > .env', 'printf "password=%s\\n" [redacted key] > .env', 1),
        ('printf "password=%s\\n" PW > .env', 'printf "password=%s\\n" [redacted key] > .env', 1),
        ("printf 'user=%s\\nDB_PASSWORD=%s\\n' bob 'Hunter 2pw' >> .env",
         "printf 'user=%s\\nDB_PASSWORD=%s\\n' bob '[redacted key]' >> .env", 1),
        ('printf "password=%s\\n" A1b2c3 B4d5e6', 'printf "password=%s\\n" [redacted key] [redacted key]', 2),
        ('printf -v line "100%% token: %s" abc123xyz', 'printf -v line "100%% token: %s" [redacted key]', 1),
        ("printf 'password=\"%s\"\\n' Hunter2pw > .env", "printf 'password=\"%s\"\\n' [redacted key] > .env", 1),
        ('printf "password=\'%s\'" Hunter2pw', 'printf "password=\'%s\'" [redacted key]', 1),
        ('{"c": "printf \\"password=%s\\\\n\\" Hunter2pw > .env"}', '{"c": "printf \\"password=%s\\\\n\\" [redacted key] > .env"}', 1),
    ],
)  # fmt: skip
def test_the_argument_printf_writes_after_a_key_named_for_a_secret_goes(text: str, out: str, keys: int) -> None:
    """``printf "password=%s\\n" PW > .env`` let ``PW`` out: the pair in the format holds a conversion, no secret,
    and the argument that fills it stood alone. Each argument that fills a conversion the format gives a key named
    for a secret goes (the format is used again for more arguments, as printf does); the others stay."""
    _redacts(text, out, keys)


@pytest.mark.parametrize(
    ("text", "out", "keys"),
    [
        ("printf -- 'password=%s\\n' Hunter2pw > .env", "printf -- 'password=%s\\n' [redacted key] > .env", 1),
        ('printf -v line -- "token: %s" abc123xyz', 'printf -v line -- "token: %s" [redacted key]', 1),
    ],
)  # fmt: skip
def test_the_argument_printf_writes_after_its_options_end_goes(text: str, out: str, keys: int) -> None:
    """``printf -- 'password=%s' PW`` let ``PW`` out: only ``-v NAME`` was taken before the format, and the ``--``
    that ends printf's options (scripts write it before a format that may start with ``-``) hid the format."""
    _redacts(text, out, keys)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("printf 'a=%*s password=%s\\n' 5 x Hunter2pw", "printf 'a=%*s password=%s\\n' 5 x [redacted key]"),
        ("printf 'password=%.*s\\n' 9 Hunter2pwXYZ", "printf 'password=%.*s\\n' 9 [redacted key]"),
        ("printf 'password=%*.*s' 12 9 Hunter2pw", "printf 'password=%*.*s' 12 9 [redacted key]"),
    ],
)  # fmt: skip
def test_printf_s_star_width_takes_an_argument_of_its_own(text: str, out: str) -> None:
    """A ``*`` in a conversion's width or precision takes the argument before the one the conversion writes:
    ``printf 'a=%*s password=%s' 5 x PW`` let ``PW`` out and hid ``x``, each argument counted as one conversion's."""
    _redacts(text, out, 1)


def test_printf_giving_a_secret_s_key_no_value_stays() -> None:
    _stays("printf 'DB_PASSWORD=%s\\nDB_USER=%s\\n' \"$PW\" bob\nprintf '%s\\n' hello world\n"
           "printf 'user=%s\\n' bob > .env\n")


def test_those_secret_stores_given_no_value_stay() -> None:
    _stays("gh secret set DB_PASSWORD\ngh secret list\nkubectl create secret generic db --from-file=pw.txt\n"
           "az keyvault secret show --name db\naws ssm put-parameter --name /x --value $PW\n")


# Secrets in the shapes a share holds them, punctuation inside them: each comes out replaced where it stood and
# nothing else changes, so the text still reads as its format reads it (a URL its parts, a shell line its words, a
# config file its lines, the JSON text of a tool call's arguments its value)
R = "[redacted key]"
RU = "%5Bredacted%20key%5D"  # the same, in a URL's user part (``[`` there reads as an IPv6 host's)


def _secret(punctuation: str) -> st.SearchStrategy[str]:
    """A generated secret of eight characters or more: a letter first, a letter and a digit in it, ``punctuation``
    inside, alphanumeric last."""
    return st.tuples(
        st.from_regex(r"[A-Za-z][a-z]{4,6}[0-9]{1,2}", fullmatch=True),
        st.text(alphabet=ALNUM + punctuation, max_size=10),
        st.text(alphabet=ALNUM, min_size=2, max_size=3),
    ).map("".join)


URL_PARTS = st.tuples(
    st.sampled_from(["postgres", "mysql", "amqp", "redis", "mongodb", "https"]),
    st.from_regex(r"[a-z][a-z0-9_]{0,7}(?:@[a-z]{1,6}(?:\.[a-z]{2,3})?)?", fullmatch=True),  # ``ann@x.io``: ``@`` in it
    st.sampled_from(["db", "db.internal:5432", "10.0.0.7:6379", "rabbit.example.com"]),
    st.sampled_from(["", "/", "/app", "/app?sslmode=require", "/v1/x#top"]),
)
URL_QUERY = st.tuples(
    st.sampled_from(["token", "access_token", "api_key", "client_secret", "password", "X_API_TOKEN"]),
    st.sampled_from(["?", "?page=2&", "?a=1\\u0026"]), st.sampled_from(["", "&page=2", "#frag", "&x=1&y=2"]),
)  # fmt: skip


@settings(max_examples=CASES, deadline=None)
@example(parts=("ftp", "ann@example.com", "host", ""), password="pw12345x", query=("token", "?", ""), value="abcdef12x",
         around="{}")  # fmt: skip
@given(parts=URL_PARTS, password=_secret("!$&'()*+,;=-._~"), query=URL_QUERY, value=_secret("-._~+"),
       around=st.sampled_from(["{}", "DATABASE_URL={}", 'url = "{}"', "curl -s '{}' | jq .", "see <{}>."]))  # fmt: skip
def test_a_secret_in_a_url_goes_and_the_url_keeps_its_parts(
    parts: tuple[str, str, str, str], password: str, query: tuple[str, str, str], value: str, around: str
) -> None:
    """A URL's password (``+,;=()'`` inside too) and a query's secret go alone: scheme, user, host, path, the other
    parameters and what surrounds the URL stay, also in the JSON text of a tool call's arguments. A user part
    holding an ``@`` (``ftp://ann@x.io:pw@h``: the last ``@`` ends it, as URL readers take it) let the password out;
    it goes with the password now."""
    scheme, user, host, rest = parts
    key, before, after = query
    url = f"{scheme}://{user}:{password}@{host}{rest}"
    queried = f"https://{host}/x{before}{key}={value}{after}"
    assume(url.count(password) == 1 and queried.count(value) == 1)
    assume(not re.search(r"'[,;)]", password))  # a quote that closes one around the URL (``'http://h:80', …``)
    userinfo = f"{user}:{RU}" if "@" not in user else RU
    for text, out in ((url, f"{scheme}://{userinfo}@{host}{rest}"), (queried, f"https://{host}/x{before}{key}={R}{after}")):
        text, out = around.format(text), around.format(out)
        _redacts(text, out)
        _in_json_text(text, out)
    # a URL reader reads the same query, and the same URL but for its password, which reads as the replacement's
    assert urlsplit(queried.replace(value, R)).query == urlsplit(queried).query.replace(value, R)
    parsed, redacted = urlsplit(url), urlsplit(url.replace(f"{user}:{password}", userinfo))
    assert (redacted.hostname, redacted.port) == (parsed.hostname, parsed.port) and parsed.password == password
    assert (unquote(redacted.password or ""), redacted.username) == (R, user) if "@" not in user else (
        redacted.password, unquote(redacted.username or "")) == (None, R)


SHELL_LINES = st.sampled_from([
    "sshpass -p {} ssh bob@h", "mysql -u root -p{} app", "docker login -u bob --password {} r.io",
    "echo {} | passwd --stdin bob", "redis-cli -h cache -a {} ping", "curl -sS -u bob:{} https://h.io/x",
    "PGPASSWORD={} psql -h db -U app", "export DB_PASSWORD={}", "htpasswd -b .htpasswd bob {}",
    "openssl enc -d -pass pass:{} -in f", "tool --api-key {} run", "echo {} | docker login -u bob --password-stdin",
    "printf 'password=%s\\n' {} > .env",
])  # fmt: skip


@settings(max_examples=CASES, deadline=None)
@given(line=SHELL_LINES, secret=_secret("!%+,._~-@:=]}^"), spaced=_secret("!%+,._~-@:=]}^ "),
       quote=st.sampled_from(["", "'", '"', "\\"]), after=st.sampled_from(["", " 2>/dev/null", " && echo ok", "; ls", " | tee log"]))  # fmt: skip
def test_a_secret_on_a_shell_line_goes_and_the_line_keeps_its_words(
    line: str, secret: str, spaced: str, quote: str, after: str
) -> None:
    """A command's password (quoted with blanks, with its blanks escaped by a backslash, or a word with punctuation
    inside) goes alone, whatever follows the command: a shell reads the same words, and the JSON text of a tool
    call's arguments still parses."""
    secret = spaced if quote else secret  # a blank only inside quotes, or escaped
    assume(not NEXT_KEY.search(secret))
    assume(quote or "=" not in secret or "printf" not in line)
    written = secret.replace(" ", "\\ ") if quote == "\\" else f"{quote}{secret}{quote}"
    text = line.format(written) + after
    out = line.format(R if quote == "\\" else f"{quote}{R}{quote}") + after
    assume(text.count(secret.partition(" ")[0]) == 1)
    _redacts(text, out)
    # a shell reads the same words, the secret's in its place (``[redacted key]`` unquoted is two words of its own)
    assert " ".join(shlex.split(out)) == " ".join(word.replace(secret, R) for word in shlex.split(text))
    _in_json_text(text, out)


# an echoed word: letters and digits with a quoted part glued to them, which may hold a blank (``a'b c'd``)
ECHOED_WORDS = st.lists(st.tuples(
    st.from_regex(r"[A-Za-z0-9]{1,6}", fullmatch=True), st.sampled_from(["", "'", '"']),
    st.from_regex(r"[A-Za-z0-9]{1,4}(?: [A-Za-z0-9]{1,4})?", fullmatch=True), st.from_regex(r"[A-Za-z0-9]{0,3}", fullmatch=True),
).map(lambda t: f"{t[0]}{t[1]}{t[2]}{t[1]}{t[3]}" if t[1] else f"{t[0]}{t[2].replace(' ', '')}{t[3]}"),
    min_size=1, max_size=4)  # fmt: skip


@settings(max_examples=CASES, deadline=None)
@given(words=ECHOED_WORDS, reader=st.sampled_from(["passwd", "passwd --stdin bob", "sudo -S ls", "chpasswd",
                                                   "docker login -u bob --password-stdin r.io"]),
       key=st.sampled_from(["DB_PASSWORD", "api_key", "GITHUB_TOKEN", "password"]),
       value=st.from_regex(r"[A-Za-z][A-Za-z0-9]{5,11}|'[A-Za-z0-9]{3,6} [A-Za-z0-9]{3,6}'", fullmatch=True))  # fmt: skip
def test_every_word_echoed_into_a_reader_and_the_value_printf_writes_for_a_key_goes(
    words: list[str], reader: str, key: str, value: str
) -> None:
    """No part of what ``echo`` pipes into a reader of passwords survives, a quote inside a word too (``echo a 'b
    c'd e | passwd`` kept ``e``), nor the value ``printf`` writes after a key its argument names (``printf
    '%s=%s\\n' DB_PASSWORD PW`` kept ``PW``); the commands' own words stay."""
    if reader == "chpasswd":
        words = ["bob:" + "".join(words)]
    head, tail = "echo " + ("bob:" if reader == "chpasswd" else ""), f" | {reader}"
    out = Redactor(environ={}, home="/home/ann").text(" ".join(["echo", *words]) + tail)
    assert out.startswith(head) and out.endswith(tail), out
    assert not re.search(r"[A-Za-z0-9]", out[len(head) : -len(tail)].replace(R, "")), out
    line = f"printf '%s=%s\\n' {key} {value} > .env"
    out = Redactor(environ={}, home="/home/ann").text(line)
    assert out == line.replace(value.strip("'"), R), out
    _in_json_text(line, out)


CONFIG_LINES = st.sampled_from([
    "password: {}", "DB_PASSWORD={}", "  api_key: {}", "client_secret = {}", "export API_TOKEN={}", "psk={}",
    "- db_password: {}", "SECRET_KEY_BASE={}", "passphrase = {}", "REDIS_AUTH={}", "export API_TOKEN=`{}`",
    "  api_key: `{}`",
])  # fmt: skip
OTHER_LINES = st.lists(st.sampled_from(["user: bob", "port: 5432", "# settings", "host=db.internal", "", "  - a,b"]),
                       max_size=3)  # fmt: skip


@settings(max_examples=CASES, deadline=None)
@given(line=CONFIG_LINES, secret=_secret("!#%+,;()[]{}^_~-@\"'"), before=OTHER_LINES, after=OTHER_LINES,
       words=st.sampled_from(["", " more words", " the red apple"]))  # fmt: skip
def test_a_secret_on_a_config_line_goes_and_the_file_keeps_its_lines(
    line: str, secret: str, before: list[str], after: list[str], words: str
) -> None:
    """A value after a key word on an env or config file's line (``,;)]}#`` and quotes inside it, a password's words
    after it) goes alone: every other line, and the key and its sign, stay."""
    words = words if "pass" in line.lower() else ""  # the words a password's line goes on with are the password's
    assume(not _reads_as_a_call(secret))
    assume(not re.search(INNER_QUOTE_CLOSES, secret))  # a quote that punctuation follows closes one around the value
    text = "\n".join([*before, line.format(secret + words), *after])
    out = "\n".join([*before, line.format(R), *after])
    assume(text.count(secret) == 1)
    _redacts(text, out)
    assert [ln.partition(R)[0] for ln in out.splitlines()] == [ln.partition(secret)[0] for ln in text.splitlines()]
    _in_json_text(text, out)


def _reads_as_a_call(value: str) -> bool:
    """True when ``value`` starts as code's call, index or type does (``getToken()``, ``Optional[str]``): a name and
    a bracket after it that closes later, no letter or digit right after its close (``Ab{}00`` is no code)."""
    m = re.match(r"[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)*([(\[{<])", value)
    close = -1 if m is None else value.find({"(": ")", "[": "]", "{": "}", "<": ">"}[m.group(1)], m.end())
    return close >= 0 and not value[close + 1 : close + 2].isalnum()


# a quote inside a value that punctuation follows, which closes a quote around the value (``"token: abc",``)
INNER_QUOTE_CLOSES = r"[\"'`][\s\"'`,;\\)\]}.:!?<>/&|]"
# a next key's shape, which ends a value with punctuation inside it there by design (``DB_PASSWORD=pw;PORT=5432``)
NEXT_KEY = re.compile(r"[,;)\]}]+[A-Za-z_][\w.-]*[ \t]*[=:]")


def _in_json_text(text: str, out: str) -> None:
    """``text`` as a tool call's arguments hold it, JSON text in a string, redacts to ``out`` so held: the JSON text
    still parses, to ``out``."""
    r = Redactor(environ={}, home="/home/ann")
    redacted = r.text(orjson.dumps({"command": text}).decode())
    assert orjson.loads(redacted) == {"command": out}, redacted


CODE_VALUES = st.sampled_from([
    ("password = 'abc' if x else '{}'", "password = '[redacted key]' if x else '[redacted key]'"),
    ('token = os.environ.get("API_TOKEN") or "{}"', 'token = os.environ.get("API_TOKEN") or "[redacted key]"'),
    ('const apiKey = ok ? "" : "{}";', 'const apiKey = ok ? "" : "[redacted key]";'),
    ("token = b'{}'", "token = b'[redacted key]'"), ('SECRET_KEY = rb"{}"', 'SECRET_KEY = rb"[redacted key]"'),
    ("x = {{'password': u'{}', 'user': 'bob'}}", "x = {{'password': u'[redacted key]', 'user': 'bob'}}"),
    ("f(password=x or '{}')", "f(password=x or '[redacted key]')"),
    ('connect(host, token=tok or "{}")', 'connect(host, token=tok or "[redacted key]")'),
    ("{{password: cond ? 'a' : '{}'}}", "{{password: cond ? 'a' : '[redacted key]'}}"),
    ("const cfg = {{\n  apiKey: ok ? key : '{}',\n}};", "const cfg = {{\n  apiKey: ok ? key : '[redacted key]',\n}};"),
    ("password: str = os.environ.get('P') if c else '{}'", "password: str = os.environ.get('P') if c else '[redacted key]'"),
    ("password: str = '{}'", "password: str = '[redacted key]'"),
    ('let apiKey: string | undefined = ok ? undefined : "{}";',
     'let apiKey: string | undefined = ok ? undefined : "[redacted key]";'),
    ("    token: Optional[str]='{}'", "    token: Optional[str]='[redacted key]'"),
])  # fmt: skip
CODE_THAT_STAYS = st.sampled_from([
    'token = get("{}") or default', "password = x if mode == '{}' else y", 'api_key = cfg["{}"]',
    'secret = rb"^\\d+{}$"', 'token = f"{{a}}{}"', "first_pass = 'abc' if x else '{}'",
    "f(password=get('{}'))", "f(password=x if mode == '{}' else y)", "\"password={{x or '{}'}}\"",
    "def f(password: str = getpass('{}')):", "{{token: t, label: '{}'}}", "f(first_pass=x or '{}')",
])  # fmt: skip


@settings(max_examples=CASES, deadline=None)
@given(value=CODE_VALUES, code=CODE_THAT_STAYS, secret=_secret("-._~"))
def test_every_literal_a_secret_s_name_is_assigned_goes_and_code_stays(
    value: tuple[str, str], code: str, secret: str
) -> None:
    """``password = 'abc' if x else 'Sup3rSecret'`` let its second literal out (only the first was judged), and
    ``token = b'abc12345xyz'`` all of it (a prefixed literal read as code). Each literal the expression may take
    goes, a ``b``/``r``/``u`` literal too; a literal compared or passed to a call or an index, a raw pattern, an
    f-string and a name that is no password's stay. So also after a call's keyword argument, an object literal's
    bare key and a typed name (``f(password=x or 'Sup3r')``, ``{password: c ? 'a' : 'Sup3r'}``, ``password: str =
    … if c else 'Sup3r'``), which let the literal out: only `` = `` or a quoted key's ``:`` was read as code's."""
    text, out = value
    _redacts(text.format(secret), out.format(), keys=out.count(R))
    _in_json_text(text.format(secret), out.format())
    _stays(code.format(secret))


@pytest.mark.parametrize(
    ("unit", "times"),
    [("f(token=x or 'Abcdef12', ", 25), ("{token:c ? 'a' : 'Abcdef12', ", 15),
     ("token:a[b[c]d]|" + "a[]|" * 56 + "x  token:str|None=x or 'Abcdef12'; ", 60),
     ('token = "EOF"; {"token": "IDENT"}, ', 20), ('token = "' + "ab_cd " * 10000 + '"', 10),
     ("'token' => 'Abcdef12', token := \"Abcdef12\"; ", 20)],
    ids=["keyword arguments", "object keys", "typed names", "lexer words", "a long lexer word", "arrows and :="],
)  # fmt: skip
def test_a_long_line_of_keys_in_code_is_redacted_in_linear_time(
    monkeypatch: pytest.MonkeyPatch, unit: str, times: int
) -> None:
    """The literals after a keyword argument, an object literal's bare key and a typed name are looked for past
    the key (``_expression_start``): what the key's name follows (a bounded slice of the text) and a type's
    annotation (``_ANNOTATION``, in ``ANNOTATION_MAX`` bytes; brackets that nest once and hold no ``|``, so one
    reading only: ``a[]|a[]|…`` would take exponential time were ``]`` and ``|`` allowed inside); and a value under
    ``token`` is read once more, whether it is a lexer's word (``_lexer_word``). A line of 60 kB of such keys (or one
    value of 60 kB): what is searched is counted (``_counted_text``), at most ``times`` the text (14, 9, 43, 13, 7
    and 10 now); the annotation's own backtracking no count sees, but exponential it would not end."""
    keys = max(1, 60_000 // len(unit))
    counted = _counted_text(monkeypatch, unit * keys, times)  # (before the redactor: it takes the counted patterns)
    out = Redactor(environ={}, home="/home/ann").text(counted)
    assert out.count(R) >= keys if "Abcdef12" in unit else out == unit * keys
    assert "Abcdef12" not in out


LEXER_WORDS = st.sampled_from(["EOF", "IDENT", "STRING_LITERAL", "return", "end of file", "LPAREN", "string"])
LEXER_LINES = st.sampled_from([
    'token = "{}"', "self.token = '{}'", "token: {}", "if ok:\n    token = x or '{}'", '{{"token": "{}", "line": 3}}',
    "<token>{}</token>", "f(token='{}')",
])  # fmt: skip


@settings(max_examples=CASES, deadline=None)
@given(word=LEXER_WORDS, line=LEXER_LINES)
def test_a_lexers_word_under_a_key_named_token_stays(word: str, line: str) -> None:
    """``token = "EOF"`` lost its ``EOF``: any value from three characters under a key named for a secret went. A
    key named ``token`` alone is a lexer's or a parser's word too, and a credential is random: under it a name made
    of one case (``EOF``, ``IDENT``, ``STRING_LITERAL``, ``return``: a constant's name or a keyword) stays, in code, in
    a JSON object and in JSON text, as ``<token>return</token>`` did already; ``token: MyPassword`` still goes."""
    text = line.format(word)
    _stays(text)
    _stays(orjson.dumps({"command": text}).decode())
    r = Redactor(environ={}, home="/home/ann")
    assert r.walk({"token": word, "tokens": [{"token": word}]}) == {"token": word, "tokens": [{"token": word}]}


def test_a_random_or_a_named_tokens_short_value_and_a_short_password_still_go() -> None:
    """What ``_lexer_word`` keeps is a word under ``token`` alone: a digit or a run of letters no word makes goes
    there, and any value of three characters or more under a token a word names, or under another key."""
    _redacts('token = "abc12"\ntoken = "xKqTzP"\napi_token = "EOF"\nGITHUB_TOKEN=IDENT\npassword = "abc"\n'
             "<apiToken>secret</apiToken>\ntoken: MyPassword\n",
             'token = "[redacted key]"\ntoken = "[redacted key]"\napi_token = "[redacted key]"\n'
             'GITHUB_TOKEN=[redacted key]\npassword = "[redacted key]"\n<apiToken>[redacted key]</apiToken>\n'
             "token: [redacted key]\n", keys=7)
    r = Redactor(environ={}, home="/home/ann")
    assert r.walk({"token": "qZx9", "accessToken": "EOF"}) == {"token": R, "accessToken": R}


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("password = os.getenv('P', '{}')", "password = os.getenv('P', '[redacted key]')"),
        ('token = os.environ.get("T", "{}")', 'token = os.environ.get("T", "[redacted key]")'),
        ("api_key = ENV.fetch('API_KEY', '{}')", "api_key = ENV.fetch('API_KEY', '[redacted key]')"),
        ('String password = System.getProperty("db.pw", "{}");', 'String password = System.getProperty("db.pw", "[redacted key]");'),
        ("f(password=os.getenv('P', '{}'))", "f(password=os.getenv('P', '[redacted key]'))"),
    ],
)  # fmt: skip
def test_a_default_a_secret_s_name_may_be_given_by_a_call_goes(text: str, out: str) -> None:
    """``password = os.getenv('P', 'Sup3r')`` kept its default: a literal inside a call's brackets was read as
    code's (``get("API_TOKEN")`` names a variable), though a call that looks a value up takes its other arguments
    as the default it gives (``getenv``, ``get``, ``fetch``, ``getProperty``, ``getOrDefault``, ``setdefault``).
    The first argument, the name looked up, stays, and so does a literal in any other call."""
    secret = "Sup3rSecret9"
    _redacts(text.format(secret), out)
    _in_json_text(text.format(secret), out)
    _stays(f"password = os.getenv('{secret}')\ntoken = s.replace('x', '{secret}')\napi_key = get(key, fmt('{secret}'))\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ('var password string = "{}"', 'var password string = "[redacted key]"'),
        ("const apiKey string = `{}`", "const apiKey string = `[redacted key]`"),
        ("\tvar dbPassword = \"{}\"", "\tvar dbPassword = \"[redacted key]\""),
        (':password => "{}"', ':password => "[redacted key]"'),
        ("{{ :api_key => '{}', :user => 'bob' }}", "{{ :api_key => '[redacted key]', :user => 'bob' }}"),
        ('User.create(password: "{}")', 'User.create(password: "[redacted key]")'),
        ("password = '''{}'''", "password = '''[redacted key]'''"),
        ('API_TOKEN = """{}"""', 'API_TOKEN = """[redacted key]"""'),
        ('<add key="Password" value="{}"/>', '<add key="Password" value="[redacted key]"/>'),
        ("<add key='Smtp.ApiKey'  value='{}' />", "<add key='Smtp.ApiKey'  value='[redacted key]' />"),
        ("set -x PASSWORD {}", "set -x PASSWORD [redacted key]"),
        ("set -gx DB_PASSWORD '{}'; and run", "set -gx DB_PASSWORD '[redacted key]'; and run"),
        ("set -Ux GITHUB_TOKEN {}\nls", "set -Ux GITHUB_TOKEN [redacted key]\nls"),
    ],
)  # fmt: skip
def test_a_secret_go_ruby_python_net_or_fish_assigns_goes(text: str, out: str) -> None:
    """Each kept its secret: Go's ``var password string = "…"`` (a type between the name and its ``=``), Ruby's
    ``:password => "…"`` (a symbol's ``=>``; a bare name's is as likely an arrow function's), Python's
    ``password = '''…'''`` (a triple quote opened no value), .NET's ``<add key="Password" value="…"/>`` (the name
    is an attribute's value) and fish's ``set -x PASSWORD …`` (no sign between the name and its value)."""
    for secret in ("Sup3rSecret9", "hunter2"):
        _redacts(text.format(secret), out.format())
        _in_json_text(text.format(secret), out.format())


def test_near_misses_of_go_ruby_python_net_and_fish_assignments_stay() -> None:
    _stays("tokens.map(token => 'Bearer ' + token)\nvar password string = os.Getenv(\"PW\")\n"
           "var token string = \"EOF\"\nx = ''' '''\n<add key=\"Timeout\" value=\"Sup3rSecret9\"/>\n"
           '<add key="Password" value="$(DbPassword)"/>\nset -e PASSWORD\nset -q GITHUB_TOKEN; or exit 1\n'
           "set -gx PASSWORD $PW\nset -x API_TOKEN (cat ~/.token)\nplease set password before you log in\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("headers: {{ Authorization: `Bearer ${{x}}{}` }}", "headers: {{ Authorization: `Bearer ${{x}}[redacted key]` }}"),
        ('{{"c": "Authorization: Bearer <token>{}"}}', '{{"c": "Authorization: Bearer <token>[redacted key]"}}'),
        ("curl -H 'Authorization: Bearer {{{{token}}}}{}' h", "curl -H 'Authorization: Bearer {{{{token}}}}[redacted key]' h"),
    ],
)  # fmt: skip
def test_a_credential_after_a_reference_or_a_placeholder_goes(text: str, out: str) -> None:
    """``Authorization: `Bearer ${x}abc…` `` (a JavaScript template literal) and ``Bearer <token>abc…`` kept the
    token: what follows ``Bearer`` was read as a reference or a placeholder by its first character, and the
    credential's characters had to start there. A reference or placeholder with a credential glued after it
    loses the credential; one alone stays."""
    secret = "abcdefGHIJ0123456789"
    _redacts(text.format(secret), out.format())
    _in_json_text(text.format(secret), out.format())
    _stays("Authorization: `Bearer ${token}`\n{\"c\": \"Authorization: Bearer <token>\"}\nBearer {{token}}.\n")


@pytest.mark.parametrize(
    ("unit", "lines"),
    [("ssh-keygen -N Hunter2pw -f k api_key: Sup3rSecret9 mysqladmin -u root password Abc123xyz x ", False),
     ("ssh-keygen -N Hunter2pw -f k api_key: Sup3rSecret9 mysqladmin -u root password Abc123xyz x", True),
     ("grep -rn token: a b c ", False), ("ldappasswd -x -s Hunter2pw -a Old2pw ", False)],
    ids=["one long command", "one command a line", "a search tool's long line", "one-letter options"],
)  # fmt: skip
def test_the_command_a_key_word_is_in_is_looked_for_in_linear_time(
    monkeypatch: pytest.MonkeyPatch, unit: str, lines: bool
) -> None:
    """A judge that asks which command a match is in (``_search_argument``, ``_keygen_value``, ``_admin_value``)
    looked ``COMMAND_REACH`` bytes back from each match for the command's start and then searched all of that
    command again: a line of many key words had each byte searched some 170 times (``bench/redact.py``). The
    command's start and what was found in it are now kept and searched on from the last question. What is
    searched is counted (``_counted_text``): at most 25 times the text (17, 14, 7 and 1 now;
    some 180 before)."""
    text = (unit + "\n" if lines else unit) * max(1, 60_000 // len(unit))
    expected = Redactor(environ={}, home="/home/ann").text(text)
    counted = _counted_text(monkeypatch, text, 25)  # (before the redactor: it takes the counted patterns)
    assert Redactor(environ={}, home="/home/ann").text(counted) == expected
    assert "Hunter2pw" not in expected and "Sup3rSecret9" not in expected and "Old2pw" not in expected
    assert ("token: a b" in expected) is ("grep" in unit)


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("'password: Eat the red apple' is what he said", "'password: [redacted key]' is what he said"),
        ("msg = 'Your password: Eat the red apple' + suffix", "msg = 'Your password: [redacted key]' + suffix"),
        ("print('password: Eat the red apple') if ok else x", "print('password: [redacted key]') if ok else x"),
        ('{"c": "echo \'passphrase = me and you forever\' | tee notes"}',
         '{"c": "echo \'passphrase = [redacted key]\' | tee notes"}'),
        ("password: don't tell anyone else", "password: [redacted key]"),
        ("Bob's password: the dogs' bowl is red", "Bob's password: [redacted key]"),
        ("'password: rock'n'roll all night' ok", "'password: [redacted key]' ok"),
    ],
)  # fmt: skip
def test_a_passwords_words_end_at_the_single_quote_that_closes_the_string_they_are_in(text: str, out: str) -> None:
    """``'password: Eat the red apple' is what he said`` lost ``' is what he said`` too, and ``print('password: Eat
    the red apple') if ok`` kept ``the red apple`` (the ``)`` after the quote read as code, so only the first word
    went): a password's words ran to the line's end past the single quote that closes the string the key is in.
    They end there now, when a single quote opens that string before the key (after a blank, a bracket, a sign or
    the line's start); an apostrophe inside a word (``don't``, ``rock'n'roll``) or before the key (``Bob's``) ends
    nothing."""
    _redacts(text, out)


@pytest.mark.parametrize(
    "text", ["'password: a b' " * 20000, "x = 'password: a b " + "password: c d " * 20000 + "'"],
    ids=["many strings", "one string of many values"],
)
def test_the_single_quotes_that_end_passwords_words_are_found_in_linear_time(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    """The quote a single-quoted string opened before a key word and the one that closes it are looked for once for
    the values of a line (``_closing_quote``, ``_last_before``), and the line's rest only to that quote: 300 kB of
    such strings, or one string of many values, are searched at most 40 times over (``_counted_text``; 26 and 5
    now, most of it the name each key word ends, looked for 64 bytes back: a bound for each value)."""
    counted = _counted_text(monkeypatch, text, 40)  # (before the redactor: it takes the counted patterns)
    out = Redactor(environ={}, home="/home/ann").text(counted)
    assert "a b" not in out and "c d" not in out


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ('props.setProperty("password", "{}");', 'props.setProperty("password", "[redacted key]");'),
        ("cfg.put('api_key', '{}')", "cfg.put('api_key', '[redacted key]')"),
        ('os.environ.setdefault("db_password", "{}")', 'os.environ.setdefault("db_password", "[redacted key]")'),
        ('let password: &str = "{}";', 'let password: &str = "[redacted key]";'),
        ("static TOKEN: &'static str = \"{}\";", "static TOKEN: &'static str = \"[redacted key]\";"),
        ('setx DB_PASSWORD "{}"', 'setx DB_PASSWORD "[redacted key]"'),
        ("setx /M API_TOKEN {}", "setx /M API_TOKEN [redacted key]"),
        ("setenv DB_PASSWORD {}", "setenv DB_PASSWORD [redacted key]"),
        ("launchctl setenv GITHUB_TOKEN {}", "launchctl setenv GITHUB_TOKEN [redacted key]"),
    ],
)  # fmt: skip
def test_a_secret_a_setter_a_rust_type_or_setx_and_setenv_give_goes(text: str, out: str) -> None:
    """Each kept its secret: a quoted value a setter gives a quoted lower-case name for a secret
    (``props.setProperty("password", "…")``, ``put``, ``setdefault``: after a comma only a constant's name was
    read as a name given a value, as ``s.replace("token", "…")`` is code), Rust's ``let password: &str = "…"`` (a
    type's ``&``), and Windows' ``setx NAME …`` and csh's or launchctl's ``setenv NAME …`` (no sign between)."""
    secret = "Sup3rSecret9"
    _redacts(text.format(secret), out.format())
    _in_json_text(text.format(secret), out.format())


def test_near_misses_of_setters_and_setenv_stay() -> None:
    _stays('s.replace("token", "Sup3rSecret9")\nd.get("password", "")\nsetenv DB_PASSWORD $PW\n'
           "setx PATH C:\\\\bin\nparser.add(\"token\", \"IDENT\")\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ('server.login("bob@example.com", "{}")', 'server.login("[redacted email]", "[redacted key]")'),
        ("ftp.login('anonymous', '{}')", "ftp.login('anonymous', '[redacted key]')"),
        ('requests.get(url, auth=("bob", "{}"))', 'requests.get(url, auth=("bob", "[redacted key]"))'),
        ("HTTPBasicAuth('bob', '{}')", "HTTPBasicAuth('bob', '[redacted key]')"),
        ('await page.fill("#password", "{}")', 'await page.fill("#password", "[redacted key]")'),
    ],
)  # fmt: skip
def test_a_password_a_login_call_takes_after_its_user_goes(text: str, out: str) -> None:
    """Each kept its password: the second argument of a login call (smtplib's, ftplib's, imaplib's ``.login(user,
    pw)``), of requests' ``auth=(user, pw)`` and ``HTTPBasicAuth(user, pw)``, and what a browser test types into a
    field named for a password (``page.fill("#password", …)``) are no value after a key word."""
    secret = "Sup3rSecret9"
    r = Redactor(environ={}, home="/home/ann")
    assert r.text(text.format(secret)) == out.format(), r.text(text.format(secret))
    _in_json_text(text.format(secret), out.format())


def test_a_login_call_s_references_and_prose_stay() -> None:
    _stays('server.login(user, password)\nserver.login("bob", os.environ["PW"])\nauth=("bob", "")\n'
           'page.fill("#search", "Sup3rSecret9")\nlogin("bob", "$PW")\n')


@pytest.mark.parametrize(
    "name", ["GITHUB_PAT", "GH_PAT", "GITLAB_PAT", "AZURE_DEVOPS_PAT", "MY_GITHUB_PAT", "AWS_SECRET_KEY", "OPENAI_API_KEY",
             "AWS_ACCESS_KEY", "STRIPE_SECRET_KEY"],
)  # fmt: skip
def test_a_personal_access_token_s_name_gives_its_value_away(name: str) -> None:
    """``GITHUB_PAT=…`` (GitHub's, GitLab's and Azure DevOps' personal access tokens) kept its token: ``PAT`` was
    no key word. It is one now as the last word of those hosts' names only (``FILE_PAT=*.py`` is a pattern);
    ``*_SECRET_KEY``, ``*_API_KEY`` and ``*_ACCESS_KEY`` went already and still do."""
    secret = "ghx1234567890abcdefAB"
    for text, out in ((f"{name}={secret}", f"{name}={R}"), (f'export {name}="{secret}"', f'export {name}="{R}"')):
        _redacts(text, out)
        _in_json_text(text, out)


def test_names_that_only_end_like_a_token_s_stay() -> None:
    _stays("SORT_KEY=name\nFILE_PAT=src/app.py\nGLOB_PAT=Sup3rSecret9\nGITHUB_PATH=/opt/gh\n")


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ('headers.set("Authorization", "{}");', 'headers.set("Authorization", "[redacted key]");'),
        ("headers['Authorization'] = '{}'", "headers['Authorization'] = '[redacted key]'"),
        ('req.headers["authorization"] = "{}"', 'req.headers["authorization"] = "[redacted key]"'),
        ("res.setHeader('Authorization', '{}')", "res.setHeader('Authorization', '[redacted key]')"),
        ("xhr.setRequestHeader('Authorization', 'Bearer {}')", "xhr.setRequestHeader('Authorization', 'Bearer [redacted key]')"),
    ],
)  # fmt: skip
def test_an_authorization_header_a_setter_or_an_index_gives_goes(text: str, out: str) -> None:
    """``headers.set("Authorization", "…")``, ``headers['Authorization'] = '…'`` and ``setHeader('Authorization',
    …)`` kept a raw token: the header's value was looked for after ``:`` or ``=`` right after its name only."""
    secret = "rawTok3n1234567890"
    _redacts(text.format(secret), out.format())
    _in_json_text(text.format(secret), out.format())


def test_an_authorization_header_s_references_stay() -> None:
    _stays('headers.set("Authorization", authHeaderValue);\nheaders["Authorization"] = token\n'
           "setHeader('Authorization', `Bearer ${token}`)\nheaders.get(\"Authorization\", \"\")\n")


@pytest.mark.parametrize(
    "name", ["gh_pat", "Gh_Pat", "github_pat", "GitHub_Pat", "gitlab_pat", "azure_devops_pat", "my_gh_pat", "ghPat",
             "githubPat", "github-pat", "GH-PAT"],
)  # fmt: skip
def test_a_personal_access_token_s_name_in_lower_or_mixed_case_gives_its_value_away(name: str) -> None:
    """``gh_pat=…``, ``GitHub_Pat=…`` and ``githubPat: …`` kept their token (``GITHUB_PAT`` went): ``PAT`` was a key
    word only after an upper-case host's name. Lower-case ``GH_TOKEN`` went already (``token`` is one in any case)."""
    secret = "ghx1234567890abcdefAB"
    for text, out in ((f"{name}={secret}", f"{name}={R}"), (f'export {name}="{secret}"', f'export {name}="{R}"'),
                      (f"{name}: {secret}", f"{name}: {R}")):  # fmt: skip
        _redacts(text, out)
        _in_json_text(text, out)
    assert Redactor(environ={}, home="/home/ann").walk({name: secret}) == {name: R}


def test_lower_case_names_that_only_end_like_a_token_s_stay() -> None:
    _stays(
        "high_pat=Sup3rSecret9\nfile_pat=src/app.py\nglob_pat=Sup3rSecret9\ngithub_path=/opt/gh\nsigh-pat: Sup3rSecret9\n"
    )


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("mysqlsh -u root -pHunter2pw", f"mysqlsh -u root -p{R}"),
        ("mysqlimport -u root -pHunter2pw db f.csv", f"mysqlimport -u root -p{R} db f.csv"),
        ("mysqlcheck -u root -pHunter2pw --all-databases", f"mysqlcheck -u root -p{R} --all-databases"),
        ("mysqlshow -uroot -p'Hunter2 pw' db", f"mysqlshow -uroot -p'{R}' db"),
        ("mysqlpump -u root -pHunter2pw db", f"mysqlpump -u root -p{R} db"),
        ("mysqlbinlog -u root -pHunter2pw -R bin.000001", f"mysqlbinlog -u root -p{R} -R bin.000001"),
        ("ldapsearch -x -D cn=admin -wHunter2pw -b dc=x", f"ldapsearch -x -D cn=admin -w{R} -b dc=x"),
        ("mongo -u admin -pHunter2pw db", f"mongo -u admin -p{R} db"),
        ("ipmitool -I lanplus -H 10.0.0.5 -U admin -P Hunter2pw chassis status",
         f"ipmitool -I lanplus -H 10.0.0.5 -U admin -P {R} chassis status"),
        ("ipmitool -H h -U admin -PHunter2pw power on", f"ipmitool -H h -U admin -P{R} power on"),
        ("plink -ssh -pw Hunter2pw bob@h", f"plink -ssh -pw {R} bob@h"),
        ("pscp.exe -pw 'Hunter2 pw' f bob@h:/tmp", f"pscp.exe -pw '{R}' f bob@h:/tmp"),
        ("psftp -P 22 -pw Hunter2pw bob@h", f"psftp -P 22 -pw {R} bob@h"),
        ("p4 -u bob -P Hunter2pw sync", f"p4 -u bob -P {R} sync"),
        ("tsql -S h -U sa -P Hunter2pw", f"tsql -S h -U sa -P {R}"),
        ("java -jar jenkins-cli.jar -s https://j -auth bob:Hunter2pw build x",
         f"java -jar jenkins-cli.jar -s https://j -auth bob:{R} build x"),
        ("cargo login Hunter2pwTok3nAbc", f"cargo login {R}"),
        ("cargo login --registry my Hunter2pwTok3nAbc", f"cargo login --registry my {R}"),
        ("snmpwalk -v3 -u bob -l authPriv -a SHA -A Hunter2pw -x AES -X Hunter3pw h",
         f"snmpwalk -v3 -u bob -l authPriv -a SHA -A {R} -x AES -X {R} h"),
        ("dotnet nuget push p.nupkg -k Hunter2pwKey -s https://x", f"dotnet nuget push p.nupkg -k {R} -s https://x"),
    ],
)  # fmt: skip
def test_the_password_more_common_command_lines_take_goes(text: str, out: str) -> None:
    """The MySQL client's other programs (``mysqlsh``, ``mysqlimport``, ``mysqlcheck``, ``mysqlshow``,
    ``mysqlpump``, ``mysqlbinlog``) and the mongo shell kept a password glued to ``-p``, ldapsearch one glued to
    ``-w``; and ipmitool's ``-P``, PuTTY's ``-pw`` (plink, pscp, psftp), Perforce's ``-P``, FreeTDS' ``tsql -P``,
    jenkins-cli's ``-auth user:…``, ``cargo login TOKEN``, SNMPv3's ``-A``/``-X`` passphrases and ``nuget push -k``
    kept theirs."""
    _redacts(text, out, out.count(R))
    _in_json_text(text, out)


def test_those_command_lines_ordinary_arguments_stay() -> None:
    _stays(
        "ssh -p 2222 bob@h\nscp -P 2222 f h:\nmkdir -p /tmp/x\ncp -p a b\ntar -xpf a.tar\ngrep -P '\\d+' f\n"
        "mysqlshow -h db -P 3306 -u root -p db\nplink -P 22 bob@h\np4 -p perforce:1666 sync\nldapsearch -x -W -D x\n"
        "snmpwalk -v3 -a SHA -x AES -l authPriv h\nipmitool -I lanplus -H h -U admin -E chassis status\n"
        "cargo login\ncargo login --registry my\njenkins-cli -auth @creds.txt build x\nmongo --port 27017 db\n"
        'cargo login $CARGO_TOKEN\nipmitool -H h -U admin -P "$IPMI_PW" power on\n'
    )


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("password=$(echo Hunter2pw)", f"password=$(echo {R})"),
        ('password="$(echo -n Hunter2pw)"', f'password="$(echo -n {R})"'),
        ("export DB_PASSWORD=$(echo 'Hunter2 pw' | base64)", f"export DB_PASSWORD=$(echo '{R}' | base64)"),
        ("token: $(printf '%s' Hunter2pw)", f"token: $(printf '%s' {R})"),
        ("api_key=$( printf Hunter2pwKey )", f"api_key=$( printf {R} )"),
        ("password=$(cat <<< Hunter2pw)", f"password=$(cat <<< {R})"),
        ("password=`echo Hunter2pw`", f"password=`{R}`"),
        ("password=${PW:-Hunter2pw}", f"password=${{PW:-{R}}}"),
        ('password="${PW:=Hunter2pw}"', f'password="${{PW:={R}}}"'),
        ("POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-Hunter2pw}", f"POSTGRES_PASSWORD: ${{POSTGRES_PASSWORD:-{R}}}"),
        ("psql -h db -p ${DB_PASSWORD-Hunter2pw}", f"psql -h db -p ${{DB_PASSWORD-{R}}}"),
        ("echo ${TOKEN:-Hunter2pw}", f"echo ${{TOKEN:-{R}}}"),
        ("password=$'Hunter2 pw'", f"password=$'{R}'"),
        ('secret: $"Hunter2 pw"', f'secret: $"{R}"'),
        ('password = f"Hunter2pw"', f'password = f"{R}"'),
    ],
)  # fmt: skip
def test_a_secret_a_substitution_a_default_or_a_shell_quote_gives_a_key_goes(text: str, out: str) -> None:
    """``password=$(echo PW)`` (``"$(echo -n PW)"``, ``$(printf '%s' PW)``, ``$(cat <<< PW)``) kept the password: a
    value after a key word that starts with ``$`` was taken for a reference, and so was ``${PW:-PW}``'s default (also
    under a variable named for a secret: ``${DB_PASSWORD-PW}``) and bash's ``$'…'`` and ``$"…"`` quotes; and an
    f-string without a ``{`` is a literal, no code. What substitutes, a reference's name and the quotes stay
    (``${TOKEN:-PW}`` lost its ``-`` too, taken for the value after ``TOKEN:``)."""
    _redacts(text, out)
    _in_json_text(text, out)


def test_substitutions_references_and_defaults_that_hold_no_secret_stay() -> None:
    _stays(
        'password=$(cat /run/secrets/db)\npassword=$(openssl rand -hex 16)\npassword="$(pass show db/root)"\n'
        'password=$(echo $PW)\npassword=$(echo "$PW")\npassword=${PW}\npassword=${PW:-$DEFAULT}\n'
        "password=${PW:?required}\nTOKEN_TTL=${TOKEN_TTL:-3600}\nAPI_KEY=${API_KEY:-}\nx=${PASSWORD_FILE:-/run/pw}\n"
        'token = f"{prefix}{x}"\npassword=$(get_password)\necho ${TOKEN:?set TOKEN first}\n'
    )


# a shell word's pieces, glued (``_glued_end``): single-quoted (anything but ``'`` in it), double-quoted (no ``"`` or
# backslash in it), a quote a backslash escapes, and unquoted characters; the secret's characters are capitals and
# digits, which nothing else of the text holds after its key
SECRET_CHARS = string.ascii_uppercase + string.digits
_PIECES = st.one_of(
    st.text(alphabet=SECRET_CHARS + ' "', min_size=1, max_size=6).map(lambda t: f"'{t}'"),
    st.text(alphabet=SECRET_CHARS + " '", min_size=1, max_size=6).map(lambda t: f'"{t}"'),
    st.just("\\'"),
    st.text(alphabet=SECRET_CHARS, min_size=1, max_size=6),
)
# (its first piece may start with a blank or a quote, inside its quotes or not: ``password=" my pw"``; but a
# string's prefix glued to a quote, ``B'0'``, is code's literal, which its own judge reads)
GLUED_WORDS = (
    st.lists(_PIECES, min_size=2, max_size=5)
    .filter(lambda p: any(x[:1] in "'\"" for x in p))
    .map("".join)
    .filter(lambda w: re.match(r"(?i:[rbuf]{1,2})['\"]", w) is None)
)
GLUED_KEYS = st.sampled_from(
    ["password=", "export DB_PASSWORD=", "TOKEN=", "api_key: ", "secret = ", "token: ", "--password ",
     "deploy --api-key ", "psk="]
)  # fmt: skip


@settings(max_examples=CASES * 3, deadline=None)
@given(key=GLUED_KEYS, word=GLUED_WORDS, after=st.sampled_from(["", " done", "\nuser: bob", "; ls"]))
@example(key="password=", word="'a'\"B C\"", after=" done")
@example(key="password=", word="'IT'\\''S SECRET'", after=" done")
@example(key="TOKEN=", word="'AB'CD", after=" done")
@example(key="token: ", word="AB'C D'", after=" done")
@example(key="password=", word="\" MY\"'PW'", after=" done")
@example(key="--password ", word="' A\"'B", after="")
def test_a_word_of_quoted_and_unquoted_pieces_after_a_key_goes_whole(key: str, word: str, after: str) -> None:
    """A value of two quoted pieces side by side (``password='a'"b c"``, the shell's ``'it'\\''s secret'``) went
    only as far as its first piece's closing quote: the rest came out. A shell reads adjacent quoted and unquoted
    pieces as one word, and so does redaction now, as written and as JSON text writes it (a tool call's
    arguments): nothing of the word is left after the key."""
    text = key + word + after
    r = Redactor(environ={}, home="/home/ann")
    out = r.text(text)
    assert out.startswith(key) and not any(c in SECRET_CHARS for c in out[len(key) :]), out
    assert "[redacted key]" in out
    wrapped = r.text(orjson.dumps({"command": text}).decode())
    inner = orjson.loads(wrapped)["command"]
    assert inner.startswith(key) and not any(c in SECRET_CHARS for c in inner[len(key) :]), inner


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('password=" my secret"', "my secret"),
        ('token: " Abc123xyz"', "Abc123xyz"),
        ('--password " Abc123xyz"', "Abc123xyz"),
        ("password='\" Abc123xyz'", "Abc123xyz"),
        ('api_key: "\' Abc123xyz" done', "Abc123xyz"),
        ("password='  Abc def'", "Abc def"),
    ],
)
def test_a_quoted_value_that_starts_with_a_blank_or_a_quote_goes_whole(text: str, secret: str) -> None:
    """A quoted value whose first character is a blank or the other quote (``password=" my secret"``) was read as no
    value at all: the whole secret stayed. It goes whole now, as written and as JSON text writes it."""
    r = Redactor(environ={}, home="/home/ann")
    for written in (text, orjson.dumps({"command": text}).decode()):
        out = r.text(written)
        assert "[redacted key]" in out and secret not in out, out
        assert not any(word in out for word in secret.split()), out
