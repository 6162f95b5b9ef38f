"""Plain words where people read: editor failures with a way out, readable elision, dotted names as a tree."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.controller import AppController
from desktop.main_window import MainWindow
from tests.desktop.helpers import Recorder


def test_an_editor_that_fails_offers_to_choose_one_and_opens_the_note_with_it(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], recorder: Recorder, tmp_path: Path
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "Plan.md").write_text("# Plan\n\nline two\n", encoding="utf-8")
    controller = make_controller()
    window = make_window(controller)
    recorder.start_ok = False  # the configured editor does not start
    assert controller.actions.open_in_editor(str(notes), "Plan.md", 2, "nosuch-editor {path}") is False
    box = window.editor_choice.box
    assert box is not None and box.isVisible() and "Could not start the editor 'nosuch-editor'" in box.text()
    assert "nosuch-editor" in window.status.note.toolTip()  # said in the status line too
    recorder.start_ok = True
    window.editor_choice.choose = lambda: "/opt/My Editor/bin/edit"  # what the file dialog returns
    window.editor_choice.choose_button.click()
    assert controller.settings.editor_command == '"/opt/My Editor/bin/edit" {path}'
    assert controller.store.load().editor_command == controller.settings.editor_command  # kept in Settings
    assert recorder.started[-1] == ["/opt/My Editor/bin/edit", str(notes / "Plan.md")]


def test_no_application_for_the_note_is_a_failure_with_the_same_way_out(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], tmp_path: Path
) -> None:
    from desktop.actions import HitActions

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "Plan.md").write_text("# Plan\n", encoding="utf-8")
    controller = make_controller(actions=HitActions(open_url=lambda url: False, set_clipboard=lambda t: None, start_detached=lambda argv: True))
    window = make_window(controller)
    assert controller.actions.open_in_editor(str(notes), "Plan.md") is False  # no editor command: the system's default
    box = window.editor_choice.box
    assert box is not None and "no application" in box.text()
    window.editor_choice.choose = lambda: ""  # the dialog was cancelled: nothing changes
    window.editor_choice.choose_button.click()
    assert controller.settings.editor_command == ""


def test_heading_and_path_are_shortened_at_folders_and_words_never_mid_word() -> None:
    from desktop.elide import elide_where

    trail, path = "Updating › Syncing", "Docs/Guides/Advanced/Sync/Updating and syncing.md"
    assert elide_where(trail, path, 200, len) == f"{trail}  ·  {path}"  # room: nothing is cut
    assert elide_where(trail, path, 70, len) == "Updating › Syncing  ·  Docs/…/Advanced/Sync/Updating and syncing.md"
    assert elide_where(trail, path, 60, len) == "Updating › Syncing  ·  Docs/…/Sync/Updating and syncing.md"
    assert elide_where(trail, path, 50, len) == "Updating › Syncing  ·  …/Updating and syncing.md"
    assert elide_where(trail, path, 47, len) == "Updating › Syncing  ·  Updating and syncing.md"
    assert elide_where(trail, path, 40, len) == "Updating…  ·  Updating and syncing.md"  # then the trail, by words
    assert elide_where(trail, path, 30, len) == "Updating and syncing.md"
    assert elide_where(trail, path, 12, len) == "Updating an…"  # only the name's end is ever cut
    for width in range(12, 90):
        shown = elide_where(trail, path, width, len)
        assert len(shown) <= width and "ncing.md" not in shown.replace("syncing.md", ""), shown


def test_dotted_names_become_a_hierarchy_where_most_names_are_dotted() -> None:
    from desktop.dotted_names import dotted_nodes, mostly_dotted

    files = ["dendron.md", "dendron.topic.md", "dendron.topic.publish.md", "dendron.topic.publish.config.md", "root.md", "notes/Plain one.md"]
    assert mostly_dotted(files[:5]) and not mostly_dotted(["a.md", "b.md", "c.d.md"])
    nodes = {n.prefix: (n.label, n.parent_prefix, n.count) for n in dotted_nodes(files)}
    assert nodes == {
        "dendron.": ("dendron", "", 4),
        "dendron.topic.": ("topic", "dendron.", 3),
        "dendron.topic.publish.": ("publish", "dendron.topic.", 2),
    }
    assert all(f.startswith(p) for p in nodes for f in files if f.startswith(p))  # the count is what the scope finds
    assert sum(f.startswith("dendron.topic.") for f in files) == nodes["dendron.topic."][2]


def test_the_tree_shows_a_dendron_vault_as_a_hierarchy_and_a_node_scopes_the_search(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], tmp_path: Path
) -> None:
    from dataclasses import replace

    from desktop.models import PrefixRole
    from tests.desktop.helpers import index_vault, search_and_wait

    vault = tmp_path / "dendron"
    vault.mkdir()
    for name in ("dendron.md", "dendron.topic.md", "dendron.topic.publish.md", "dendron.topic.config.md", "other.cook.md", "root.md"):
        (vault / name).write_text(f"# {name}\n\nshared words about publishing {name}\n", encoding="utf-8")
    controller = make_controller()
    window = make_window(controller)
    index_vault(qtbot, controller, vault)
    tree = window.tree.model
    top = tree.item(0)
    labels = {top.child(i).text() for i in range(top.rowCount())}
    assert labels == {"dendron  (4)", "other  (1)"}  # not six notes at the root
    window.tree.select("dendron", "dendron.topic.")
    assert controller.scope is not None and controller.scope.prefix == "dendron.topic." and controller.scope.label() == "dendron/dendron.topic.*"
    search_and_wait(qtbot, window, "publishing")
    assert {h.chunk.rel_path for h in controller.response.hits} == {"dendron.topic.md", "dendron.topic.publish.md", "dendron.topic.config.md"}
    controller.apply_settings(replace(controller.settings, dotted_hierarchy=False), controller.engine.config)  # the option
    qtbot.waitUntil(lambda: not any(tree.item(0).child(i).data(PrefixRole) for i in range(tree.item(0).rowCount())))
