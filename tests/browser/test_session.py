"""Parts of pagelens.browser.session that need no browser (its answers are tested through the
MCP server and the shell, in tests/fronts)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from pagelens.browser.session import free_path, safe_file_name
from pagelens.serving import storage_state_problem


@given(st.text(max_size=400))
def test_a_downloaded_files_name_is_a_plain_name_whatever_the_page_says(suggested):
    name = safe_file_name(suggested)
    assert name and len(name.encode()) <= 255 - len(" (9999)")  # room for a taken name's number
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


def test_a_long_name_is_cut_to_the_file_systems_bytes_at_a_character():
    """255 bytes is the usual limit, not 255 characters: a long name in Greek or emoji is cut at
    a character's boundary (no half of one), its extension kept, and can be created."""
    import tempfile

    for word in ("ά", "📄", "a", "日本"):
        name = safe_file_name(word * 300 + ".pdf")
        assert name.endswith(".pdf") and len(name.encode()) <= 248, name
        assert name[:-4] == name[:-4].rstrip() and word[0] in name
        with tempfile.TemporaryDirectory() as folder:
            assert free_path(Path(folder), name).exists()
            assert free_path(Path(folder), name).name.endswith("(2).pdf")


_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8)),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "cookies",
                    "origins",
                    "name",
                    "value",
                    "domain",
                    "path",
                    "expires",
                    "httpOnly",
                    "secure",
                    "sameSite",
                    "origin",
                    "localStorage",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=30,
)


@given(_json)
def test_a_state_of_any_shape_is_said_to_be_one_or_not_in_words(state):
    problem = storage_state_problem(state)
    assert problem is None or (isinstance(problem, str) and "\n" not in problem and problem)


def test_a_saved_state_is_a_state():
    state = {
        "cookies": [
            {
                "name": "member",
                "value": "ada",
                "domain": "127.0.0.1",
                "path": "/",
                "expires": -1,
                "httpOnly": False,
                "secure": False,
                "sameSite": "Lax",
            }
        ],
        "origins": [{"origin": "http://127.0.0.1:8000", "localStorage": [{"name": "k", "value": "v"}]}],
    }
    assert storage_state_problem(state) is None
    assert storage_state_problem({}) is None  # nothing kept is a state too
    state["cookies"][0]["expires"] = "never"
    assert storage_state_problem(state) == "cookie 0's expires is not a number"
