"""The vault walk: which files are notes, which are ignored, and why a file is skipped."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from core.base.models import SkippedFile, SkipReason
from core.vault.scanner import ScanEntry, Scanner, normalise_rel_path, read_note_bytes

needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt", reason="needs POSIX symlinks")


def write(root: Path, rel: str, data: str | bytes = "# note\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def rel_paths(root: Path, **kwargs: object) -> list[str]:
    return [e.rel_path for e in Scanner(root, **kwargs).scan().entries]  # type: ignore[arg-type]


def skipped(root: Path, **kwargs: object) -> dict[str, SkipReason]:
    return {s.rel_path: s.reason for s in Scanner(root, **kwargs).scan().skipped}  # type: ignore[arg-type]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    return root


# -- what counts as a note -------------------------------------------------------------------


def test_scan_is_recursive_and_sorted_with_posix_rel_paths(vault: Path) -> None:
    write(vault, "z.md")
    write(vault, "a/b/c/deep.md")
    write(vault, "a/top.md")
    assert rel_paths(vault) == ["a/b/c/deep.md", "a/top.md", "z.md"]


def test_md_and_markdown_suffixes_match_case_insensitively(vault: Path) -> None:
    for name in ("one.md", "two.MD", "three.markdown", "four.Markdown", "five.txt", "six.mdx", "seven.md.bak", "md", "eight.PDF", "nine.docx", "ten.xlsx"):
        write(vault, name)
    # Plain text, PDFs, Word... are attachments: indexed too (core.vault.kinds); a spreadsheet is not.
    assert rel_paths(vault) == ["eight.PDF", "five.txt", "four.Markdown", "nine.docx", "one.md", "three.markdown", "two.MD"]


def test_entries_carry_size_mtime_and_an_openable_path(vault: Path) -> None:
    path = write(vault, "n.md", "hello\n")
    (entry,) = Scanner(vault).scan().entries
    st = path.stat()
    assert (entry.size, entry.mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert entry.path.read_bytes() == b"hello\n"


def test_folder_named_like_a_note_is_walked_not_read(vault: Path) -> None:
    write(vault, "weird.md/inside.md")
    assert rel_paths(vault) == ["weird.md/inside.md"]


# -- ignore rules ----------------------------------------------------------------------------


@pytest.mark.parametrize("folder", [".git", ".obsidian", ".trash"])
def test_tool_folders_are_always_ignored_at_any_depth(vault: Path, folder: str) -> None:
    write(vault, f"{folder}/x.md")
    write(vault, f"sub/{folder}/y.md")
    write(vault, "kept.md")
    result = Scanner(vault).scan()
    assert [e.rel_path for e in result.entries] == ["kept.md"]
    assert result.skipped == ()  # ignored files are not "skipped": the user asked for it


def test_gitignore_patterns_exclude_files_and_folders(vault: Path) -> None:
    write(vault, ".gitignore", "drafts/\n*.tmp.md\n# a comment\n")
    write(vault, "drafts/wip.md")
    write(vault, "deep/drafts/wip.md")
    write(vault, "scratch.tmp.md")
    write(vault, "keep.md")
    assert rel_paths(vault) == ["keep.md"]


def test_cairnignore_patterns_are_honoured_alongside_gitignore(vault: Path) -> None:
    write(vault, ".gitignore", "a.md\n")
    write(vault, ".cairnignore", "Private/\nsecret-*.md\n")
    for rel in ("a.md", "b.md", "Private/p.md", "secret-1.md", "notes/secret-2.md"):
        write(vault, rel)
    assert rel_paths(vault) == ["b.md"]


def test_negated_ignore_pattern_keeps_a_file(vault: Path) -> None:
    write(vault, ".cairnignore", "*.md\n!keep.md\n")
    write(vault, "drop.md")
    write(vault, "keep.md")
    assert rel_paths(vault) == ["keep.md"]


def test_extra_ignores_from_the_vault_config_apply(vault: Path) -> None:
    write(vault, "Archive/old.md")
    write(vault, "new.md")
    assert rel_paths(vault, extra_ignores=("Archive/",)) == ["new.md"]


def test_classify_agrees_with_scan_on_ignored_and_non_note_paths(vault: Path) -> None:
    write(vault, ".gitignore", "drafts/\n")
    write(vault, "drafts/wip.md")
    write(vault, ".obsidian/workspace.md")
    write(vault, "image.png", b"\x89PNG")
    write(vault, "Note.md")
    scanner = Scanner(vault)
    assert scanner.classify("drafts/wip.md") is None
    assert scanner.classify(".obsidian/workspace.md") is None
    assert scanner.classify("image.png") is None
    found = scanner.classify("Note.md")
    assert isinstance(found, ScanEntry) and found.rel_path == "Note.md"


def test_classify_of_a_missing_note_returns_none(vault: Path) -> None:
    assert Scanner(vault).classify("gone.md") is None


# -- rel_path normalisation ------------------------------------------------------------------


def test_rel_path_is_nfc_even_when_the_name_on_disk_is_nfd(vault: Path) -> None:
    nfd = unicodedata.normalize("NFD", "Café.md")
    assert nfd != "Café.md"
    (vault / nfd).write_bytes(b"# Caf\xc3\xa9\n")
    (entry,) = Scanner(vault).scan().entries
    assert entry.rel_path == unicodedata.normalize("NFC", "Café.md")
    assert entry.path.read_bytes() == b"# Caf\xc3\xa9\n"  # the path still opens the real file


@pytest.mark.parametrize("form", ["NFC", "NFD"])
def test_classify_finds_a_note_whose_name_on_disk_is_nfd(vault: Path, form: str) -> None:
    folder = unicodedata.normalize("NFD", "Réunions")
    write(vault, f"{folder}/{unicodedata.normalize('NFD', 'Café.md')}", "# café\n")
    found = Scanner(vault).classify(unicodedata.normalize(form, "Réunions/Café.md"))
    assert isinstance(found, ScanEntry)
    assert found.rel_path == unicodedata.normalize("NFC", "Réunions/Café.md")
    assert read_note_bytes(found) == "# café\n".encode()


def test_normalise_rel_path_uses_forward_slashes_and_nfc() -> None:
    assert normalise_rel_path("a\\b\\" + unicodedata.normalize("NFD", "é.md")) == "a/b/é.md"


# -- skip reasons ----------------------------------------------------------------------------


def test_file_over_max_bytes_is_skipped_as_too_large(vault: Path) -> None:
    write(vault, "big.md", "x" * 101)
    write(vault, "fits.md", "x" * 100)
    result = Scanner(vault, max_bytes=100).scan()
    assert [e.rel_path for e in result.entries] == ["fits.md"]
    (skip,) = result.skipped
    assert (skip.rel_path, skip.reason) == ("big.md", SkipReason.TOO_LARGE)
    assert "101" in skip.detail


def test_default_size_limit_is_ten_megabytes(vault: Path) -> None:
    path = write(vault, "huge.md", "# big\n")
    with path.open("r+b") as fh:
        fh.truncate(10 * 1024 * 1024 + 1)
    write(vault, "small.md")
    assert skipped(vault) == {"huge.md": SkipReason.TOO_LARGE}


def test_read_note_bytes_returns_the_raw_bytes(vault: Path) -> None:
    write(vault, "n.md", b"\xef\xbb\xbf# hi\r\n")
    (entry,) = Scanner(vault).scan().entries
    assert read_note_bytes(entry) == b"\xef\xbb\xbf# hi\r\n"


def test_file_with_nul_bytes_is_skipped_as_binary(vault: Path) -> None:
    write(vault, "blob.md", b"# looks like markdown\n\x00\x01\x02")
    (entry,) = Scanner(vault).scan().entries
    result = read_note_bytes(entry)
    assert isinstance(result, SkippedFile)
    assert (result.rel_path, result.reason) == ("blob.md", SkipReason.BINARY)


def test_file_that_grew_past_the_limit_after_the_scan_is_too_large(vault: Path) -> None:
    path = write(vault, "n.md", "small")
    (entry,) = Scanner(vault, max_bytes=10).scan().entries
    path.write_text("now much larger than ten bytes")
    result = read_note_bytes(entry, max_bytes=10)
    assert isinstance(result, SkippedFile) and result.reason is SkipReason.TOO_LARGE


def _stat_saying(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """`os.fstat` reports `size` bytes: the file changed between the reader's `fstat` and its reads."""
    real = os.fstat

    def fstat(fd: int) -> os.stat_result:
        st = real(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, size, *st[7:10]))

    monkeypatch.setattr(os, "fstat", fstat)


@pytest.mark.parametrize("said", [0, 3, 70_000, 10 * 1024 * 1024])
def test_a_note_is_read_whole_whatever_size_fstat_said(vault: Path, monkeypatch: pytest.MonkeyPatch, said: int) -> None:
    """The reader asks for the size `fstat` gives (a 10 MB buffer a note was most of reading short
    notes); a note that grew or shrank since is still read to its end, as one read of the limit did."""
    body = bytes(range(1, 256)) * 1200  # ~300 KB, over the 64 KiB later reads ask for
    write(vault, "n.md", body)
    (entry,) = Scanner(vault).scan().entries
    _stat_saying(said, monkeypatch)
    assert read_note_bytes(entry) == body
    result = read_note_bytes(entry, max_bytes=len(body) - 1)
    assert isinstance(result, SkippedFile) and result.reason is SkipReason.TOO_LARGE
    assert read_note_bytes(entry, max_bytes=len(body)) == body


def test_an_empty_note_reads_as_no_bytes(vault: Path) -> None:
    write(vault, "empty.md", b"")
    (entry,) = Scanner(vault).scan().entries
    assert read_note_bytes(entry) == b""


def test_file_that_vanished_before_it_was_read_is_unreadable(vault: Path) -> None:
    path = write(vault, "gone.md")
    (entry,) = Scanner(vault).scan().entries
    path.unlink()
    result = read_note_bytes(entry)
    assert isinstance(result, SkippedFile)
    assert (result.rel_path, result.reason) == ("gone.md", SkipReason.UNREADABLE)
    assert "vanished" in result.detail


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads files whatever their mode; chmod 000 cannot block it"
)
def test_file_without_read_permission_is_unreadable(vault: Path) -> None:
    path = write(vault, "locked.md")
    (entry,) = Scanner(vault).scan().entries
    path.chmod(0)
    try:
        result = read_note_bytes(entry)
    finally:
        path.chmod(0o644)
    assert isinstance(result, SkippedFile) and result.reason is SkipReason.UNREADABLE


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root lists folders whatever their mode; chmod 000 cannot block it"
)
def test_folder_that_cannot_be_listed_is_reported_not_fatal(vault: Path) -> None:
    write(vault, "locked/n.md")
    write(vault, "ok.md")
    (vault / "locked").chmod(0)
    try:
        result = Scanner(vault).scan()
    finally:
        (vault / "locked").chmod(0o755)
    assert [e.rel_path for e in result.entries] == ["ok.md"]
    assert [(s.rel_path, s.reason) for s in result.skipped] == [("locked", SkipReason.UNREADABLE)]


def test_os_error_while_reading_is_unreadable_even_for_root(vault: Path) -> None:
    (vault / "folder.md").mkdir()  # opening a folder fails with an OSError other than "not found"
    entry = ScanEntry("folder.md", vault / "folder.md", 0, 0)
    result = read_note_bytes(entry)
    assert isinstance(result, SkippedFile) and result.reason is SkipReason.UNREADABLE
    assert result.detail.startswith("cannot read file")


def test_folder_listing_error_is_unreadable_even_for_root(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(vault, "locked/n.md")
    write(vault, "ok.md")
    real_scandir = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = Scanner(vault).scan()
    assert [e.rel_path for e in result.entries] == ["ok.md"]
    assert [(s.rel_path, s.reason, s.detail) for s in result.skipped] == [
        ("locked", SkipReason.UNREADABLE, "cannot list folder: Permission denied")
    ]


# -- symbolic links --------------------------------------------------------------------------


@needs_symlinks
def test_file_symlink_inside_the_vault_is_indexed_under_the_link_name(vault: Path) -> None:
    write(vault, "real/target.md", "# target\n")
    (vault / "alias.md").symlink_to(Path("real/target.md"))
    result = Scanner(vault).scan()
    assert [e.rel_path for e in result.entries] == ["alias.md", "real/target.md"]
    assert read_note_bytes(result.entries[0]) == b"# target\n"
    assert result.skipped == ()


@needs_symlinks
def test_file_symlink_to_outside_the_vault_is_symlink_escape(vault: Path, tmp_path: Path) -> None:
    outside = write(tmp_path, "outside/secret.md", "# not yours\n")
    (vault / "escape.md").symlink_to(outside)
    result = Scanner(vault).scan()
    assert result.entries == ()
    assert [(s.rel_path, s.reason) for s in result.skipped] == [("escape.md", SkipReason.SYMLINK_ESCAPE)]


@needs_symlinks
def test_relative_symlink_climbing_out_of_the_vault_is_symlink_escape(vault: Path, tmp_path: Path) -> None:
    write(tmp_path, "sibling.md")
    (vault / "up.md").symlink_to(Path("../sibling.md"))
    assert skipped(vault) == {"up.md": SkipReason.SYMLINK_ESCAPE}


@needs_symlinks
def test_folder_symlink_to_outside_the_vault_is_symlink_escape_and_not_walked(vault: Path, tmp_path: Path) -> None:
    write(tmp_path, "elsewhere/n.md")
    (vault / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    result = Scanner(vault).scan()
    assert result.entries == ()
    assert [(s.rel_path, s.reason) for s in result.skipped] == [("linked", SkipReason.SYMLINK_ESCAPE)]


@needs_symlinks
def test_symlink_loop_between_two_links_is_symlink_loop(vault: Path) -> None:
    (vault / "a.md").symlink_to("b.md")
    (vault / "b.md").symlink_to("a.md")
    (vault / "self.md").symlink_to("self.md")
    assert skipped(vault) == {"a.md": SkipReason.SYMLINK_LOOP, "b.md": SkipReason.SYMLINK_LOOP, "self.md": SkipReason.SYMLINK_LOOP}


@needs_symlinks
def test_folder_symlink_back_to_an_ancestor_is_symlink_loop_and_the_walk_ends(vault: Path) -> None:
    write(vault, "a/b/n.md")
    (vault / "a" / "b" / "up").symlink_to(Path("../.."), target_is_directory=True)
    (vault / "a" / "parent").symlink_to(Path(".."), target_is_directory=True)
    result = Scanner(vault).scan()
    assert [e.rel_path for e in result.entries] == ["a/b/n.md"]
    assert {s.rel_path: s.reason for s in result.skipped} == {
        "a/b/up": SkipReason.SYMLINK_LOOP,
        "a/parent": SkipReason.SYMLINK_LOOP,
    }


@needs_symlinks
def test_folder_symlink_to_a_sibling_never_shadows_the_real_folder(vault: Path) -> None:
    # The link sorts before the folder it points at; the notes must still keep their real paths.
    write(vault, "Projects/plan.md")
    (vault / "Archive").symlink_to(Path("Projects"), target_is_directory=True)
    result = Scanner(vault).scan()
    assert [e.rel_path for e in result.entries] == ["Projects/plan.md"]
    assert [(s.rel_path, s.reason) for s in result.skipped] == [("Archive", SkipReason.SYMLINK_LOOP)]


@needs_symlinks
def test_folder_symlink_to_a_folder_not_otherwise_walked_is_followed(vault: Path) -> None:
    write(vault, ".cairnignore", "store/\n")
    write(vault, "store/kept.md")
    (vault / "view").symlink_to(Path("store"), target_is_directory=True)
    assert rel_paths(vault) == ["view/kept.md"]


@needs_symlinks
def test_a_folder_below_a_folder_link_is_known_by_its_real_path(vault: Path) -> None:
    """A walked folder's real path is its folder's real path and its name: below a followed link
    that is the link's target, so a second link to the same folder is still a loop."""
    write(vault, ".cairnignore", "store/\n")
    write(vault, "store/sub/n.md")
    (vault / "store" / "again").symlink_to(Path("sub"), target_is_directory=True)
    (vault / "view").symlink_to(Path("store"), target_is_directory=True)
    result = Scanner(vault).scan()
    assert [e.rel_path for e in result.entries] == ["view/sub/n.md"]
    assert [(s.rel_path, s.reason) for s in result.skipped] == [("view/again", SkipReason.SYMLINK_LOOP)]


@needs_symlinks
def test_a_vault_given_through_a_link_still_sees_a_loop_in_a_subfolder(vault: Path, tmp_path: Path) -> None:
    write(vault, "sub/n.md")
    (vault / "sub" / "here").symlink_to(Path("."), target_is_directory=True)
    link = tmp_path / "vault-link"
    link.symlink_to(vault, target_is_directory=True)
    result = Scanner(link).scan()
    assert [e.rel_path for e in result.entries] == ["sub/n.md"]
    assert [(s.rel_path, s.reason) for s in result.skipped] == [("sub/here", SkipReason.SYMLINK_LOOP)]


@needs_symlinks
def test_dangling_symlink_is_reported_not_fatal(vault: Path) -> None:
    (vault / "dangling.md").symlink_to("missing.md")
    write(vault, "ok.md")
    result = Scanner(vault).scan()
    assert [e.rel_path for e in result.entries] == ["ok.md"]
    assert [(s.rel_path, s.reason) for s in result.skipped] == [("dangling.md", SkipReason.UNREADABLE)]


@needs_symlinks
def test_vault_root_given_through_a_symlink_scans_normally(vault: Path, tmp_path: Path) -> None:
    write(vault, "n.md")
    (vault / "alias.md").symlink_to("n.md")
    link = tmp_path / "vault-link"
    link.symlink_to(vault, target_is_directory=True)
    result = Scanner(link).scan()
    assert [e.rel_path for e in result.entries] == ["alias.md", "n.md"]
    assert result.skipped == ()


@needs_symlinks
def test_classify_reports_symlink_escape_like_scan(vault: Path, tmp_path: Path) -> None:
    outside = write(tmp_path, "outside.md")
    (vault / "escape.md").symlink_to(outside)
    found = Scanner(vault).classify("escape.md")
    assert isinstance(found, SkippedFile) and found.reason is SkipReason.SYMLINK_ESCAPE


@pytest.mark.parametrize("rel", ["../outside.md", "sub/../../outside.md", "/abs/outside.md", "./n.md", "sub//n.md"])
def test_classify_refuses_paths_that_are_not_plainly_inside_the_vault(vault: Path, tmp_path: Path, rel: str) -> None:
    write(tmp_path, "outside.md")
    write(vault, "n.md")
    write(vault, "sub/n.md")
    target = rel if not rel.startswith("/abs") else str(tmp_path / "outside.md")
    assert Scanner(vault).classify(target) is None


def test_pdf_size_limit_is_its_own(vault: Path) -> None:
    write(vault, "big.pdf", b"%PDF" + b" " * 3000)
    write(vault, "big.md", "x" * 3000)
    write(vault, "huge.pdf", b"%PDF" + b" " * 9000)
    assert rel_paths(vault, max_bytes=1000, max_attachment_bytes=5000) == ["big.pdf"]
    assert skipped(vault, max_bytes=1000, max_attachment_bytes=5000) == {"big.md": SkipReason.TOO_LARGE, "huge.pdf": SkipReason.TOO_LARGE}


# -- `*.suffix` rules without pathspec (core.vault.ignore_suffixes) ----------------------------


def test_suffix_rules_match_exactly_as_pathspec_does(vault: Path) -> None:
    import random

    import pathspec

    from core.vault.scanner import IgnoreRules

    rng = random.Random(27)
    suffixes = ["*.png", "*.jpg", "*.JPG", "*.", "*..", "*-x", "*_", "*.tar.gz", "*md", "*.md", "", "# *.md", "#x"]
    parts = ["a", "b.png", ".png", "x.PNG", "c.jpg", "d.tar.gz", "tar.gz", "e.md", "\n", "f\n.png", ".", "..", "g.png\n", " ", "-x", "_"]
    for _ in range(300):
        lines = rng.sample(suffixes, rng.randint(0, 4))
        write(vault, ".cairnignore", "\n".join(lines) + "\n")
        rules = IgnoreRules(vault)
        assert rules._suffixes is not None
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        for _ in range(40):
            rel = "/".join(rng.choice(parts) for _ in range(rng.randint(1, 4)))
            for is_dir in (False, True):
                want = spec.match_file(rel + "/" if is_dir else rel) or any(p in {".git", ".obsidian", ".trash"} for p in rel.split("/"))
                assert rules.ignores(rel, is_dir) == want, (lines, rel, is_dir)


def test_other_rules_still_go_to_pathspec(vault: Path) -> None:
    from core.vault.scanner import IgnoreRules

    write(vault, ".gitignore", "*.png\ndrafts/\n")
    rules = IgnoreRules(vault, ("*.jpg",))
    assert rules._suffixes is None
    assert rules.ignores("a/drafts", is_dir=True) and rules.ignores("x.png") and rules.ignores("y.jpg") and not rules.ignores("z.md")


def test_a_default_scan_does_not_import_pathspec(vault: Path) -> None:
    import subprocess
    import sys

    write(vault, "a.md")
    write(vault, "pic.png", b"\x89PNG")
    code = (
        "import sys; from pathlib import Path; from core.vault.scanner import Scanner; "
        f"r = Scanner(Path({str(vault)!r})).scan(); print([e.rel_path for e in r.entries], 'pathspec' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert out.stdout.strip() == "['a.md'] False"
