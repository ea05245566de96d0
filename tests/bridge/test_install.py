"""``tapedeck bridge install/remove/status`` on DSH homes: line-level patch edits that keep the user's rows."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.bridge.files import packaged_fingerprint, packaged_version, plugin_fingerprint
from core.bridge.install import (
    BEGIN,
    END,
    PATCH_FILE,
    PLUGIN_FILE,
    BridgeInstallError,
    install,
    installed_name,
    packaged_plugin,
    remove,
    status,
)
from core.cli import main

USER_PATCH = """# my settings
- id: llm-deepseek
  config:
    baseURL: http://127.0.0.1:9  # local
- insert:
    - id: other
      name: ./other.mjs
"""


def _profile(home: Path, profile: str = "web") -> Path:
    return home / "profiles" / profile


def _tree(root: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() else None for p in sorted(root.rglob("*"))
    }


def test_install_on_a_home_dsh_never_booted_and_remove_leaves_it_as_it_was(tmp_path: Path) -> None:
    home = tmp_path / "dsh"
    home.mkdir()
    change = install(home)
    assert (change.plugin, change.patch) == ("copied", "added")
    web = _profile(home)
    assert (web / PLUGIN_FILE).read_bytes() == packaged_plugin().read_bytes()
    text = (web / PATCH_FILE).read_text()
    assert text.startswith(BEGIN) and text.rstrip().endswith(END)
    assert f'- id: tapedeck-bridge\n      name: "./tapedeck-bridge.mjs?v={packaged_fingerprint()}"' in text
    change = remove(home)
    assert (change.plugin, change.patch) == ("removed", "removed")
    assert _tree(home) == {}


@pytest.mark.parametrize("order", [("web", "headless"), ("headless", "web")])
def test_two_profiles_installed_on_a_home_never_booted_and_removed_in_any_order_leave_it_as_it_was(
    tmp_path: Path, order: tuple[str, str]
) -> None:
    """The first install made ``profiles/``; whichever profile goes last takes it with it (not before: the other
    profile's files are still there)."""
    home = tmp_path / "dsh"
    home.mkdir()
    install(home, "web")
    install(home, "headless")
    remove(home, order[0])
    assert _tree(_profile(home, order[1])) != {}
    remove(home, order[1])
    assert _tree(home) == {}


def test_install_keeps_the_users_rows_and_remove_restores_the_file_byte_for_byte(tmp_path: Path) -> None:
    web = _profile(tmp_path)
    web.mkdir(parents=True)
    (web / PATCH_FILE).write_text(USER_PATCH)
    os.chmod(web / PATCH_FILE, 0o640)
    install(tmp_path, "web")
    text = (web / PATCH_FILE).read_text()
    assert text.startswith(USER_PATCH) and text.count("- id: tapedeck-bridge") == 1
    assert (web / PATCH_FILE).stat().st_mode & 0o777 == 0o640
    remove(tmp_path, "web")
    assert (web / PATCH_FILE).read_text() == USER_PATCH and not (web / PLUGIN_FILE).exists()


DSH_SEED = """# Your patch layer for this dsh profile, applied after every bundle layer:
# a top-level YAML array of loader patch entries (id-targeted config
# overrides, disables, and insert lists; `!!js` expressions allowed).
[]
"""  # what DSH rc.8 writes into a profile's cordis.patch.yml at its first start


def test_the_empty_list_dsh_seeds_the_file_with_makes_way_for_the_row_and_comes_back(tmp_path: Path) -> None:
    web = _profile(tmp_path)
    web.mkdir(parents=True)
    (web / PATCH_FILE).write_text(DSH_SEED)
    install(tmp_path)
    text = (web / PATCH_FILE).read_text()
    assert text.startswith(DSH_SEED.removesuffix("[]\n") + BEGIN) and "\n[]" not in text
    assert "- id: tapedeck-bridge" in text and text.endswith(END + "\n")
    remove(tmp_path)
    assert (web / PATCH_FILE).read_text() == DSH_SEED


def test_install_twice_writes_nothing_the_second_time(tmp_path: Path) -> None:
    install(tmp_path, "headless")
    files = [_profile(tmp_path, "headless") / n for n in (PATCH_FILE, PLUGIN_FILE)]
    before = [(f.read_bytes(), f.stat().st_mtime_ns, f.stat().st_ino) for f in files]
    change = install(tmp_path, "headless")
    assert (change.plugin, change.patch) == ("unchanged", "unchanged")
    assert [(f.read_bytes(), f.stat().st_mtime_ns, f.stat().st_ino) for f in files] == before


def test_an_outdated_plugin_copy_and_row_are_brought_up_to_date(tmp_path: Path) -> None:
    install(tmp_path)
    web = _profile(tmp_path)
    (web / PLUGIN_FILE).write_text("// an older bridge, tapedeck-bridge/0.0.1\n")
    (web / PATCH_FILE).write_text((web / PATCH_FILE).read_text().replace("config: {}", "config: {old: 1}"))
    [found] = [s.to_dict() for s in status(tmp_path)]
    stale = found.pop("stale")
    assert found == {"profile": "web", "plugin": "0.0.1", "fingerprint": plugin_fingerprint((web / PLUGIN_FILE).read_bytes()),
                     "current": False, "newer": False, "row": "managed", "problem": None}  # fmt: skip
    assert (
        stale.startswith("an older copy")
        and f"`tapedeck bridge install {tmp_path.resolve()} --profile web`" in stale
    )
    change = install(tmp_path)
    assert (change.plugin, change.patch) == ("updated", "updated")
    assert "config: {}" in (web / PATCH_FILE).read_text()
    assert status(tmp_path)[0].current is True and status(tmp_path)[0].stale is None


def test_a_copy_a_newer_tapedeck_installed_is_not_called_older(tmp_path: Path) -> None:
    """Every copy other than the packaged plugin was 'an older copy' that install 'upgrades', one of a newer version
    too (a newer tapedeck installed it), which install would put back to this older one."""
    install(tmp_path)
    copy = _profile(tmp_path) / PLUGIN_FILE
    copy.write_bytes(re.sub(rb'const VERSION = "[^"]*"', b'const VERSION = "9.9.9"', packaged_plugin().read_bytes()))
    [newer] = status(tmp_path)
    assert newer.plugin == "9.9.9" and newer.stale is not None
    assert newer.stale.startswith("a newer copy (9.9.9) than the packaged plugin") and "upgrade" not in newer.stale


def test_a_copy_naming_a_version_of_more_digits_than_int_takes_is_newer_and_named_cut(tmp_path: Path, capsys) -> None:
    """A profile's copy whose VERSION is 5,000 nines: comparing it with the packaged version raised ValueError (int()
    takes at most 4,300 digits) out of ``bridge status`` and ``bridge install``. It is newer than any release, and
    the messages name it cut."""
    install(tmp_path)
    huge = b"9" * 5000
    copy = _profile(tmp_path) / PLUGIN_FILE
    copy.write_bytes(re.sub(rb'const VERSION = "[^"]*"', b'const VERSION = "' + huge + b'"', packaged_plugin().read_bytes()))
    [newer] = status(tmp_path)
    assert newer.newer is True and newer.stale is not None and newer.stale.startswith("a newer copy (999")
    assert main(["bridge", "status", str(tmp_path)]) == 0
    assert main(["bridge", "install", str(tmp_path)]) == 2
    said = capsys.readouterr()
    assert "newer copy" in said.err and huge.decode() not in said.out + said.err, said.err[:300]


def test_install_refuses_to_put_an_older_plugin_over_a_newer_copy_unless_forced(tmp_path: Path, capsys) -> None:
    """A copy a newer tapedeck installed (and the row naming it) was replaced by this tapedeck's older plugin
    without a word. Install now refuses it, naming both versions and leaving the home untouched, until ``--force``;
    status says which one is newer."""
    install(tmp_path)
    web = _profile(tmp_path)
    packaged = packaged_plugin().read_bytes()
    newer = re.sub(rb'const VERSION = "[^"]*"', b'const VERSION = "9.9.9"', packaged)
    (web / PLUGIN_FILE).write_bytes(newer)
    patch = (web / PATCH_FILE).read_text()
    (web / PATCH_FILE).write_text(patch.replace(installed_name(packaged), installed_name(newer)))
    before = _tree(tmp_path)
    assert main(["bridge", "install", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "9.9.9" in err and f"({packaged_version()})" in err and "--force" in err, err
    assert _tree(tmp_path) == before
    assert main(["bridge", "status", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "plugin 9.9.9 (" in out and ", newer than the packaged one); row installed" in out
    assert f"  NEWER: a newer copy (9.9.9) than the packaged plugin ({packaged_version()})" in out
    assert main(["bridge", "status", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["profiles"][0]["newer"] is True
    assert main(["bridge", "install", str(tmp_path), "--force"]) == 0
    assert "updated the plugin in" in capsys.readouterr().out
    assert (web / PLUGIN_FILE).read_bytes() == packaged and status(tmp_path)[0].stale is None


def test_install_renames_the_row_of_an_upgraded_copy_so_that_a_running_dsh_loads_it(
    tmp_path: Path, capsys
) -> None:
    """DSH imports a plugin again only when its row's name changes: a copy replaced under an unchanged row keeps
    the old module running. The row names the copy's fingerprint, so an upgrade changes it; a current copy under a
    row that names another (an install from before fingerprints) is stale too."""
    install(tmp_path)
    web = _profile(tmp_path)
    patch = web / PATCH_FILE
    packaged = packaged_plugin().read_bytes()
    earlier = patch.read_text().replace(f"?v={packaged_fingerprint()}", "")  # what earlier installs wrote
    older = packaged.replace(b"if (FINGERPRINT) body.fingerprint = FINGERPRINT;", b"")
    (web / PLUGIN_FILE).write_bytes(older)
    patch.write_text(earlier)
    assert main(["bridge", "status", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"({plugin_fingerprint(older)}, not the packaged one)" in out
    assert (
        f"  STALE: an older copy than the packaged plugin, which a DSH with this profile runs: `tapedeck bridge install {tmp_path.resolve()} --profile web`"
        in out
    )
    assert install(tmp_path).to_dict()["patch"] == "updated"
    assert f'name: "./tapedeck-bridge.mjs?v={packaged_fingerprint()}"' in patch.read_text()
    assert status(tmp_path)[0].stale is None
    patch.write_text(earlier)  # the packaged copy, under the row of an earlier install
    [found] = status(tmp_path)
    assert (
        found.current is True
        and found.stale is not None
        and found.stale.startswith("the row does not name this copy")
    )
    change = install(tmp_path)
    assert (change.plugin, change.patch) == ("unchanged", "updated")
    assert status(tmp_path)[0].stale is None


def test_the_row_takes_the_indent_of_an_indented_list_and_a_missing_final_newline_comes_back(
    tmp_path: Path,
) -> None:
    web = _profile(tmp_path)
    web.mkdir(parents=True)
    original = "  - id: shell\n    config: {timeoutMs: 5}"
    (web / PATCH_FILE).write_text(original)
    install(tmp_path)
    text = (web / PATCH_FILE).read_text()
    assert "\n  - insert:\n      - id: tapedeck-bridge\n" in text
    remove(tmp_path)
    assert (web / PATCH_FILE).read_text() == original


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("plugins:\n  - x\n", "not a YAML list"),
        ("- id: a\nkey: 1\n", "not a YAML list"),
        ("[{id: a}]\n", "flow style"),
        ("- id: a\n\t- id: b\n", "tab in the indentation"),
        (f"{BEGIN}\n- insert: []\n", "damaged"),
        ("- insert:\n    - {id: tapedeck-bridge, name: ./mine.mjs}\n", "tapedeck did not add"),
        (b"- id: \xff\n", "not UTF-8"),
        ("- id: a\n---\n- id: b\n", "document marker"),
    ],
)
def test_a_patch_file_tapedeck_cannot_edit_safely_is_refused_untouched(
    tmp_path: Path, content, message
) -> None:
    web = _profile(tmp_path)
    web.mkdir(parents=True)
    raw = content if isinstance(content, bytes) else content.encode()
    (web / PATCH_FILE).write_bytes(raw)
    with pytest.raises(BridgeInstallError, match=message):
        install(tmp_path)
    assert (web / PATCH_FILE).read_bytes() == raw and not (web / PLUGIN_FILE).exists()


def test_links_in_the_way_are_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "target.yml").write_text(USER_PATCH)
    home = tmp_path / "home"
    web = _profile(home)
    web.mkdir(parents=True)
    (web / PATCH_FILE).symlink_to(elsewhere / "target.yml")
    with pytest.raises(BridgeInstallError, match="symbolic link"):
        install(home)
    assert (elsewhere / "target.yml").read_text() == USER_PATCH
    (web / PATCH_FILE).unlink()
    (web / PLUGIN_FILE).symlink_to(elsewhere / "target.yml")
    with pytest.raises(BridgeInstallError, match="symbolic link"):
        install(home)
    linked = tmp_path / "home2"
    (linked / "profiles").mkdir(parents=True)
    (linked / "profiles" / "web").symlink_to(elsewhere)
    with pytest.raises(BridgeInstallError, match="symbolic link is in the way"):
        install(linked)
    assert sorted(p.name for p in elsewhere.iterdir()) == ["target.yml"]


def test_status_names_a_row_in_the_home_layer_every_profile_loads(tmp_path: Path) -> None:
    (tmp_path / PATCH_FILE).write_text("- insert:\n    - id: tapedeck-bridge\n      name: /opt/tb.mjs\n")
    assert [s.to_dict() for s in status(tmp_path)] == [
        {
            "profile": "(home layer)",
            "plugin": None,
            "fingerprint": None,
            "current": None,
            "newer": None,
            "row": "foreign",
            "stale": None,
            "problem": None,
        }
    ]


def test_a_missing_home_or_a_bad_profile_name_is_a_clear_error(tmp_path: Path, capsys) -> None:
    assert main(["bridge", "install", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "file").write_text("")
    assert main(["bridge", "install", str(tmp_path / "file")]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert main(["bridge", "install", str(tmp_path), "--profile", "../x"]) == 2
    assert "profile name" in capsys.readouterr().err


@pytest.mark.skipif(
    os.geteuid() == 0, reason="root writes through any mode: an unwritable home needs a normal user"
)
def test_an_unwritable_home_is_a_clear_error(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o500)
    try:
        with pytest.raises(BridgeInstallError, match="permission denied"):
            install(tmp_path)
    finally:
        os.chmod(tmp_path, 0o700)


def test_cli_install_status_remove_and_print_patch(tmp_path: Path, capsys, monkeypatch) -> None:
    assert main(["bridge", "install", str(tmp_path), "--profile", "headless", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "profileDir": str(tmp_path.resolve() / "profiles" / "headless"), "plugin": "copied", "patch": "added",
        "othersRan": [],
    }  # fmt: skip
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    assert main(["bridge", "status"]) == 0
    out = capsys.readouterr().out
    assert "profile headless: plugin" in out and "same as packaged" in out and "row installed" in out
    assert "unknown" not in out  # the packaged plugin names its version
    assert main(["bridge", "remove", "--profile", "headless"]) == 0
    assert "took the tapedeck-bridge row out" in capsys.readouterr().out
    assert main(["bridge", "status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["profiles"] == []
    assert main(["bridge", "install", "--print-patch"]) == 0
    patch = capsys.readouterr().out
    assert f'name: "{packaged_plugin().resolve()}"' in patch and "- id: tapedeck-bridge" in patch


def test_install_into_a_profile_dsh_never_ran_beside_ones_it_did_says_so(tmp_path: Path, capsys) -> None:
    """'bridge install --profile webb' (a typo for web) made profiles/webb and said only that a DSH with this
    profile loads it, so no DSH ever did and nothing said why (found in qa2's walkthrough). Installing into a
    profile whose directory it makes, in a home where DSH has run other profiles (their cordis.yml), notes which;
    a profile DSH ran, or a home DSH never ran, gets no note."""
    for ran in ("web", "headless"):
        _profile(tmp_path, ran).mkdir(parents=True)
        (_profile(tmp_path, ran) / "cordis.yml").write_text("plugins: {}\n")
    assert main(["bridge", "install", str(tmp_path), "--profile", "webb"]) == 0
    assert ('note: DSH has never run with profile webb in this home (it ran headless, web): only a DSH started '
            "with --profile webb loads the bridge") in capsys.readouterr().out  # fmt: skip
    assert main(["bridge", "install", str(tmp_path), "--profile", "webb"]) == 0  # the directory was there
    assert main(["bridge", "install", str(tmp_path)]) == 0
    assert main(["bridge", "install", str(tmp_path / "x"), "--profile", "web"]) == 2  # no such home
    (tmp_path / "never").mkdir()
    assert main(["bridge", "install", str(tmp_path / "never")]) == 0
    assert "note:" not in capsys.readouterr().out
    assert main(["bridge", "install", str(tmp_path), "--profile", "wbe", "--json"]) == 0  # a script is told too
    assert json.loads(capsys.readouterr().out)["othersRan"] == ["headless", "web"]


def test_the_note_names_a_profile_that_is_not_utf8_as_every_path_is_named(tmp_path: Path, capsys) -> None:
    """The note named the profiles DSH ran through quoted(), so a profile directory whose name is not UTF-8 read
    'pr\\udcff' where every other text and --json name it 'pr\\xff' (docs/cli.md: a name that is not UTF-8 is written
    one way wherever tapedeck writes it); they are directory names, written as quoted_path writes them."""
    for ran in (b"web", b"pr\xff\x1b[2J"):
        profile = os.path.join(os.fsencode(tmp_path), b"profiles", ran)
        os.makedirs(profile)
        with open(os.path.join(profile, b"cordis.yml"), "wb") as f:
            f.write(b"plugins: {}\n")
    assert main(["bridge", "install", str(tmp_path), "--profile", "webb"]) == 0
    out = capsys.readouterr().out
    assert "(it ran pr\\xff\\u001b[2J, web)" in out and "\\udcff" not in out and "\x1b" not in out, out


ITEM = st.sampled_from(
    ["- id: a\n  config: {x: 1}\n", "- insert:\n    - id: b\n      name: ./b.mjs\n", "# a comment\n", "\n",
     "- id: c  # trailing\n", "- !!js 'x'\n"]
)  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(
    items=st.lists(ITEM, max_size=6) | st.sampled_from([["[]\n"], ["# c\n", "[]\n", "# d\n"], [DSH_SEED]]),
    start=st.sampled_from(["", "---\n", "# head\n---\n"]),
    cut_newline=st.booleans(),
)
def test_install_then_remove_gives_back_any_list_byte_for_byte(
    tmp_path_factory, items, start, cut_newline
) -> None:
    home = tmp_path_factory.mktemp("home")
    web = _profile(home)
    web.mkdir(parents=True)
    original = start + "".join(items)
    if cut_newline:
        original = original.rstrip("\n")
    (web / PATCH_FILE).write_text(original)
    install(home)
    if "[]" not in original:
        assert (web / PATCH_FILE).read_text().startswith(original)
    remove(home)
    assert (web / PATCH_FILE).read_text() == original


def test_a_row_left_without_its_plugin_file_is_named_as_what_stops_dsh(tmp_path: Path, capsys) -> None:
    """DSH refuses to start a profile whose patch row names a module that is not there (checked with the real DSH
    rc.8: ERR_MODULE_NOT_FOUND at boot), so status says so and how to mend it; install puts the file back."""
    install(tmp_path)
    (_profile(tmp_path) / PLUGIN_FILE).unlink()
    [found] = status(tmp_path)
    assert found.problem is not None and "DSH does not start with this profile" in found.problem
    assert f"`tapedeck bridge install {tmp_path.resolve()} --profile web`" in found.problem
    assert main(["bridge", "status", str(tmp_path)]) == 0
    assert f"profile web: {found.problem}" in capsys.readouterr().out
    assert install(tmp_path).to_dict()["plugin"] == "copied"
    assert status(tmp_path)[0].problem is None


def test_what_install_remove_and_status_print_names_the_home_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """install's and remove's lines and status's named the DSH home as it is: a home whose name holds a newline and
    an escape sequence printed forged lines and the raw escape on stdout. They name it as the CLI's messages name a
    path (core.shared.text.quoted_path), and status's suggested command shell-quotes it too."""
    home = tmp_path / "h\x1b]0;t\x07\nforged"
    home.mkdir()
    named = str(home).replace("\x1b", "\\u001b").replace("\x07", "\\u0007").replace("\n", "\\n")
    for argv, said in (
        (["install"], [f"copied the plugin to {named}/profiles/web",
                       f"added the tapedeck-bridge row to {named}/profiles/web/cordis.patch.yml"]),
        (["remove"], [f"removed the plugin from {named}/profiles/web",
                      f"took the tapedeck-bridge row out of {named}/profiles/web/cordis.patch.yml"]),
        (["status"], [f"{named}: no profile holds the bridge (`tapedeck bridge install '{named}'`)"]),
    ):  # fmt: skip
        assert main(["bridge", *argv, str(home)]) == 0
        out = capsys.readouterr().out
        assert all(line in out.splitlines() for line in said) and "\x1b" not in out, out
        assert not any(line.startswith("forged") for line in out.splitlines()), out


# SIGKILL (a kill nothing can take: the OOM killer, kill -9) once half the plugin is written into its new file.
_KILLED_WHILE_WRITING = """
import os, signal, sys
import core.bridge.install as install
def write_all(fd, data):
    os.write(fd, data[: len(data) // 2])
    os.kill(os.getpid(), signal.SIGKILL)
install.write_all = write_all
install.install(sys.argv[1])
"""


def test_an_install_killed_while_it_writes_leaves_nothing_in_the_profile(tmp_path: Path) -> None:
    """The plugin and the patch file were written into '.NAME.PID.tmp' in the DSH profile and renamed over NAME:
    an install killed meanwhile left that file there for good. They are written into a file with no name now,
    named only once whole, so a kill leaves the profile as it was."""
    import subprocess
    import sys

    home = tmp_path / "dsh"
    home.mkdir()
    before = _tree(home)
    done = subprocess.run([sys.executable, "-c", _KILLED_WHILE_WRITING, str(home)], capture_output=True,
                          cwd=Path(__file__).resolve().parents[2], timeout=60)  # fmt: skip
    assert done.returncode == -9, done.stderr
    left = {name: kind for name, kind in _tree(home).items() if name not in before and kind is not None}
    assert left == {}


def test_an_install_killed_or_failing_in_a_new_profile_leaves_no_directory_for_good(tmp_path: Path, monkeypatch) -> None:
    """install made profiles/ and profiles/<profile> before writing into them: killed meanwhile (or failing: a full
    disk) it left them behind, and the next install, finding them there, took them for the user's, so remove left
    them for good. They are built under a name of their own and named only once whole; one a killed install left is
    removed by the next install, and one that fails removes its own."""
    import subprocess
    import sys

    import core.bridge.install as module

    home = tmp_path / "dsh"
    home.mkdir()
    done = subprocess.run([sys.executable, "-c", _KILLED_WHILE_WRITING, str(home)], capture_output=True,
                          cwd=Path(__file__).resolve().parents[2], timeout=60)  # fmt: skip
    assert done.returncode == -9, done.stderr
    assert not (home / "profiles").exists()
    install(home)
    assert sorted(p.name for p in home.iterdir()) == ["profiles"]
    remove(home)
    assert _tree(home) == {}

    def full(fd: int, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(module, "write_all", full)
    with pytest.raises(BridgeInstallError, match="No space left on device"):
        install(home)
    assert _tree(home) == {}
    (home / "profiles").mkdir()
    with pytest.raises(BridgeInstallError, match="No space left on device"):
        install(home)
    assert _tree(home) == {"profiles": None}


def test_what_a_killed_install_left_is_removed_by_the_next_install_or_remove_wherever_it_is(tmp_path: Path) -> None:
    """A killed install's directory being built (under profiles/, for a new profile) was removed only by an install
    that itself built one there: remove, or an install into a profile already there, left it."""
    import subprocess
    import sys

    home = tmp_path / "dsh"
    (home / "profiles" / "web").mkdir(parents=True)

    def killed() -> None:
        done = subprocess.run([sys.executable, "-c", _KILLED_WHILE_WRITING.replace("install.install(sys.argv[1])",
                               "install.install(sys.argv[1], 'other')"), str(home)],
                              capture_output=True, cwd=Path(__file__).resolve().parents[2], timeout=60)  # fmt: skip
        assert done.returncode == -9, done.stderr
        assert [p.name for p in (home / "profiles").iterdir() if p.name.startswith(".")]  # being built when killed

    killed()
    install(home)  # into profiles/web, which is there
    assert sorted(p.name for p in (home / "profiles").iterdir()) == ["web"]
    killed()
    remove(home)
    assert sorted(p.name for p in (home / "profiles").iterdir()) == ["web"]
