"""The README's screenshots are the snapshot tests' own SVGs, so they show the screens as they are now.

A snapshot updated with ``--snapshot-update`` leaves its README copy stale; this test names the copy to refresh
(``cp SNAPSHOT docs/screenshots/NAME``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "docs" / "screenshots"
SNAPSHOT_OF = {  # README screenshot -> the snapshot it is a copy of
    "fleet-80x24.svg": "tests/fleet/__snapshots__/test_fleet_tui/test_fleet_at_80x24.svg",
    "fleet-dsh-bridge.svg": "tests/snapshot/__snapshots__/test_bridge/test_fleet_with_bridged_and_plain_dsh_sessions.svg",
    "folds.svg": "tests/snapshot/__snapshots__/test_policy_screens/test_folds_folded_expanded_and_pruned_rows.svg",
    "main-fold-beside-original.svg": "tests/snapshot/__snapshots__/test_main_screens/test_folded_result_beside_its_original.svg",
    "main-streaming-row.svg": "tests/snapshot/__snapshots__/test_sizes/test_screen_fits[main-streaming-expanded-160x45].svg",
    "request-diff.svg": "tests/snapshot/__snapshots__/test_timetravel/test_request_diff_names_the_compaction.svg",
    "rewind-preview.svg": "tests/snapshot/__snapshots__/test_policy_screens/test_checkpoints_rewind_preview.svg",
    "surface-tape-entry.svg": "tests/snapshot/__snapshots__/test_main_screens/test_surface_view_tape_entry_expanded.svg",
    "time-travel.svg": "tests/snapshot/__snapshots__/test_timetravel/test_time_travel_surface_before_the_compaction.svg",
}


@pytest.mark.parametrize("name", sorted(SNAPSHOT_OF))
def test_screenshot_is_its_snapshot(name: str) -> None:
    snapshot = ROOT / SNAPSHOT_OF[name]
    assert snapshot.is_file(), f"{name} is a copy of {SNAPSHOT_OF[name]}, which no longer exists"
    assert (SHOTS / name).read_bytes() == snapshot.read_bytes(), (
        f"docs/screenshots/{name} is stale: cp '{SNAPSHOT_OF[name]}' docs/screenshots/{name}"
    )


def test_readme_shows_every_screenshot_and_only_existing_ones() -> None:
    shown = set(re.findall(r"\]\(docs/screenshots/([^)]+)\)", (ROOT / "README.md").read_text(encoding="utf-8")))
    on_disk = {path.name for path in SHOTS.iterdir()}
    assert shown <= on_disk, f"README shows missing screenshots: {sorted(shown - on_disk)}"
    assert on_disk <= shown, f"screenshots the README does not show: {sorted(on_disk - shown)}"
    assert {name for name in on_disk if name.endswith(".svg")} == set(SNAPSHOT_OF)
