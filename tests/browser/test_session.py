"""Parts of pagelens.browser.session that need no browser (its answers are tested through the
MCP server and the shell, in tests/fronts)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from pagelens.browser.session import free_path, safe_file_name


@given(st.text(max_size=400))
def test_a_downloaded_files_name_is_a_plain_name_whatever_the_page_says(suggested):
    name = safe_file_name(suggested)
    assert name and len(name) <= 200
    assert "/" not in name and "\\" not in name and "\x00" not in name
    assert not name.startswith((".", "-")) and name == name.strip()
    name.encode("utf-8")  # no lone surrogate: the file system takes it
    assert all(c.isprintable() for c in name)
    assert "[" not in name and "]" not in name  # printed as it is: a bracket could read as an id


def test_a_plain_name_is_kept():
    assert safe_file_name("report 2026.csv") == "report 2026.csv"
    assert safe_file_name("../../etc/passwd") == "passwd"
    assert safe_file_name("..") == "download" and safe_file_name("") == "download"
    assert safe_file_name("invoice [3].pdf") == "invoice (3).pdf"


def test_a_taken_name_is_not_overwritten(tmp_path: Path):
    (tmp_path / "a.txt").write_text("kept")
    second = free_path(tmp_path, "a.txt")
    third = free_path(tmp_path, "a.txt")
    assert (second.name, third.name) == ("a (2).txt", "a (3).txt")
    assert (tmp_path / "a.txt").read_text() == "kept" and second.exists() and third.exists()
    assert free_path(tmp_path, "noext").name == "noext" and free_path(tmp_path, "noext").name == "noext (2)"
