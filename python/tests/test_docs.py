"""docs/python.md's examples run as they are: every ```python block, in order, in one
namespace (as an analyst would paste them into a notebook), against a Chrome profile laid
out from testdata/idb/values/ in a temporary home, with the damaged directory and the table
the examples name beside it. And they leave the profile as it was."""

import re
import shutil

from conftest import REPO, TESTDATA, dir_state

DOC = REPO / "docs" / "python.md"


def blocks():
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def lay_out(tmp_path):
    """HOME/.config/chromium/Default as Chrome lays it out, and the working directory the
    examples' relative paths are in (damaged-dir, 000123.ldb; Default/ there too)."""
    home = tmp_path / "home"
    cwd = home / ".config" / "chromium"
    profile = cwd / "Default"
    values = TESTDATA / "idb" / "values"
    shutil.copytree(values / "IndexedDB", profile / "IndexedDB")
    shutil.copytree(values / "local_storage", profile / "Local Storage" / "leveldb")
    shutil.copytree(values / "session_storage", profile / "Session Storage")
    damaged = cwd / "damaged-dir"
    shutil.copytree(TESTDATA / "db" / "basic", damaged)
    table = damaged / "000005.ldb"
    data = bytearray(table.read_bytes())
    data[20] ^= 0x40
    table.write_bytes(bytes(data))
    shutil.copy(TESTDATA / "db" / "basic" / "000005.ldb", cwd / "000123.ldb")
    return home, cwd, profile


def test_the_examples_run(tmp_path, monkeypatch, capsys):
    code = blocks()
    assert len(code) >= 8
    home, cwd, profile = lay_out(tmp_path)
    before = dir_state(profile)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    namespace = {"__name__": "__docs__"}
    for i, block in enumerate(code):
        try:
            exec(compile(block, f"docs/python.md block {i + 1}", "exec"), namespace)
        except Exception as e:  # say which block failed
            raise AssertionError(f"docs/python.md block {i + 1} raised {e!r}:\n{block}") from e
    out = capsys.readouterr().out
    # What the blocks printed comes from the profile: a localStorage item, an IndexedDB
    # record of each database, a deleted record, the damage with its file and offset.
    assert "http://127.0.0.1:55229 'ascii' 'value'" in out
    assert "corpusdb records" in out and "second large" in out
    assert re.search(r"^deleted \d{6}\.(log|ldb) \d+ \d+ b'", out, flags=re.M)
    assert "ChecksumMismatch 000005.ldb 0 ('data', 0," in out
    # Blobs the page stored were copied out.
    assert list(cwd.glob("recovered-*"))
    assert namespace["before"] and namespace["lost"]
    assert dir_state(profile) == before
