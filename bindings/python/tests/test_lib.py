"""Finding the library: DIRMN_LIBRARY_PATH as a file or a directory, and an
ImportError listing every place tried when nothing is there."""

import os
import subprocess
import sys

import dirmn


def _import(env_path, tmp_path):
    env = dict(os.environ, DIRMN_LIBRARY_PATH=env_path,
               PYTHONPATH=os.path.dirname(os.path.dirname(dirmn.__file__)))
    code = ("import dirmn\n"
            "print(dirmn.library_path(), dirmn.library_version())\n")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, cwd=str(tmp_path))


def test_file_and_directory(tmp_path):
    path = dirmn.library_path()
    r = _import(path, tmp_path)
    assert r.returncode == 0 and r.stdout.split() == [path, dirmn.library_version()]
    r = _import(os.path.dirname(path), tmp_path)
    assert r.returncode == 0 and r.stdout.startswith(os.path.dirname(path))


def test_not_found_lists_what_was_tried(tmp_path):
    missing = str(tmp_path / "nowhere")
    r = _import(missing, tmp_path)
    assert r.returncode != 0 and r.stdout == ""
    assert "DirmnLibraryNotFound" in r.stderr and missing in r.stderr
    (tmp_path / "empty").mkdir()
    r = _import(str(tmp_path / "empty"), tmp_path)
    assert "DirmnLibraryNotFound" in r.stderr
    for sub in ("", "lib", "lib64"):
        assert os.path.join(str(tmp_path / "empty"), sub, "libdirmn.so") in r.stderr


def test_search_order_without_env(monkeypatch):
    from dirmn import _lib
    monkeypatch.delenv("DIRMN_LIBRARY_PATH", raising=False)
    sources = [s for s, _ in _lib.candidates()]
    assert sources[0].startswith("pkg-config") and "/usr/local/lib" in [
        w for _, w in _lib.candidates()]
    assert sources[-1] == "source tree build"
