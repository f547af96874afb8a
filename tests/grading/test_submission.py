"""Mapping uploaded files onto the files students submit."""

import doctest
import os

import pytest

from tinygrad_course.grading import submission
from tinygrad_course.grading.submission import map_paths, map_submission, normalize_name

MANIFEST = ["pkg/__init__.py", "pkg/eager/engine.py", "pkg/ops/nn.py", "pkg/nn/layers.py"]


def test_doctests():
    assert doctest.testmod(submission).failed == 0


def test_a_whole_repository_at_any_depth():
    uploaded = ["me/repo/pkg/__init__.py", "me/repo/pkg/eager/__init__.py",
                "me/repo/pkg/eager/engine.py", "me/repo/pkg/ops/__init__.py",
                "me/repo/pkg/ops/nn.py", "me/repo/pkg/nn/__init__.py",
                "me/repo/pkg/nn/layers.py", "me/repo/tests/test_x.py",
                "me/repo/build/lib/pkg/ops/nn.py"]  # fmt: skip
    notes = []
    used = map_paths(uploaded, MANIFEST, notes)
    assert used == {m: "me/repo/" + m for m in MANIFEST}  # no __init__.py lands elsewhere
    text = "\n".join(notes)
    assert "ignored me/repo/build/lib/pkg/ops/nn.py" in text  # the shallowest copy wins
    assert "Ignored 5 file(s)" in text


def test_single_files_and_partial_paths():
    notes = []
    used = map_paths(["engine.py", "nn/layers.py", "nn.py"], MANIFEST, notes)
    assert used == {"pkg/eager/engine.py": "engine.py", "pkg/nn/layers.py": "nn/layers.py",
                    "pkg/ops/nn.py": "nn.py"}  # fmt: skip
    assert not any(n.startswith("Problem") for n in notes)


def test_ambiguity_uses_nothing_and_says_so():
    notes = []
    used = map_paths(["a/pkg/ops/nn.py", "b/pkg/ops/nn.py", "x/engine.py", "y/engine.py"],
                     MANIFEST, notes)  # fmt: skip
    assert used == {}
    assert "2 files could be pkg/ops/nn.py" in notes[0]
    assert "2 files could be pkg/eager/engine.py (by their names)" in notes[1]


def test_renamed_copies_are_used_and_reported():
    notes = []
    used = map_paths(["downloads/engine (1).py", "layers copy.py"], MANIFEST, notes)
    assert used == {"pkg/eager/engine.py": "downloads/engine (1).py",
                    "pkg/nn/layers.py": "layers copy.py"}  # fmt: skip
    assert any("renamed copy of engine.py. Name it engine.py" in n for n in notes)
    assert normalize_name("Copy of layers.py") == "layers.py"
    assert normalize_name("conv2d.py") == "conv2d.py"


def test_files_are_read_safely(tmp_path):
    root = tmp_path / "sub"
    (root / "pkg" / "ops").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("x = 1\n", encoding="utf-8")
    (root / "pkg" / "ops" / "nn.py").write_bytes(b"\xff\xfe bad")
    (root / "layers.py").write_bytes(b"# big\n" + b"x" * (submission.MAX_FILE_BYTES + 10))
    secret = tmp_path / "secret.py"
    secret.write_text("SECRET = 1\n")
    os.symlink(secret, root / "engine.py")
    (root / "__MACOSX").mkdir()
    (root / "__MACOSX" / "engine.py").write_text("junk")
    mapping = map_submission(root, MANIFEST)
    assert mapping.texts == {"pkg/__init__.py": "x = 1\n"}
    report = mapping.report()
    assert "engine.py is a link" in report and "SECRET" not in report
    assert "pkg/ops/nn.py is not UTF-8" in report
    assert "layers.py is larger than" in report
    assert "Not submitted" in report and "pkg/eager/engine.py" in report
    assert "pkg/__init__.py  <-  pkg/__init__.py" in report


def test_a_linked_folder_is_not_followed(tmp_path):
    secret = tmp_path / "reference" / "pkg" / "eager"  # say /autograder/source/reference
    secret.mkdir(parents=True)
    (secret / "engine.py").write_text("SECRET = 1\n")
    root = tmp_path / "sub" / "repo"
    root.mkdir(parents=True)
    os.symlink(tmp_path / "reference" / "pkg", root / "pkg", target_is_directory=True)
    mapping = map_submission(tmp_path / "sub", MANIFEST)
    assert mapping.texts == {} and "SECRET" not in mapping.report()
    assert "repo/pkg is a link; links are not followed" in mapping.report()


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_utf8_with_or_without_bom(tmp_path, bom):
    (tmp_path / "engine.py").write_bytes(bom + "y = 'é'\n".encode())
    assert map_submission(tmp_path, MANIFEST).texts["pkg/eager/engine.py"] == "y = 'é'\n"


def test_a_renamed_file_beats_an_unchanged_starter_copy(tmp_path):
    """A whole repository with sgd.py saved as 'sgd (1).py' next to a build/lib starter copy
    graded the starter copy (#26): the file that differs from the starter code wins."""
    starter = "def step():\n    raise NotImplementedError\n"
    mine = "def step():\n    return 1\n"
    files = {
        "repo/pkg/eager/engine.py": "x = 1\n",
        "repo/pkg/optim/sgd (1).py": mine,
        "repo/build/lib/pkg/optim/sgd.py": starter,
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    manifest = ["pkg/eager/engine.py", "pkg/optim/sgd.py"]
    plain = map_submission(tmp_path, manifest)
    assert plain.used["pkg/optim/sgd.py"] == "repo/build/lib/pkg/optim/sgd.py"  # no starter given
    m = map_submission(tmp_path, manifest, starter={"pkg/optim/sgd.py": starter})
    assert m.used["pkg/optim/sgd.py"] == "repo/pkg/optim/sgd (1).py"
    assert m.texts["pkg/optim/sgd.py"] == mine
    note = next(n for n in m.notes if "sgd (1).py" in n and "starter code unchanged" in n)
    assert "build/lib/pkg/optim/sgd.py" in note
