"""Finding and opening libdirmn.

The library is looked up, in this order, in

1. the environment variable ``DIRMN_LIBRARY_PATH``: the library file itself,
   or a directory holding it (an install prefix works too: its ``lib``,
   ``lib64`` and ``lib/x86_64-linux-gnu`` are searched);
2. ``pkg-config --variable=libdir dirmn``;
3. the standard install locations (``/usr/local/lib`` ...) and the dynamic
   loader's own search path (:func:`ctypes.util.find_library`);
4. the build folders of the source tree this package sits in
   (``build/release``, ``build``, ``build/debug``).

An explicit ``DIRMN_LIBRARY_PATH`` that names nothing usable is an error
rather than a hint: silently loading another library would hide the mistake.
"""

import ctypes
import ctypes.util
import os
import shutil
import subprocess
import sys

_NAMES = {
    "darwin": ("libdirmn.0.dylib", "libdirmn.dylib"),
    "win32": ("dirmn.dll", "libdirmn.dll"),
}.get(sys.platform, ("libdirmn.so.0", "libdirmn.so"))

_SUBDIRS = ("", "lib", "lib64", os.path.join("lib", "x86_64-linux-gnu"))

_INSTALL_DIRS = ("/usr/local/lib", "/usr/local/lib64", "/usr/local/lib/x86_64-linux-gnu",
                 "/usr/lib", "/usr/lib64", "/usr/lib/x86_64-linux-gnu")

# bindings/python/dirmn/_lib.py -> the repository root.
_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
_BUILD_DIRS = tuple(os.path.join(_REPO, d) for d in ("build/release", "build", "build/debug"))


class DirmnLibraryNotFound(ImportError):
    """libdirmn could not be found or opened.

    The message lists every place that was tried. Install dirmn
    (``cmake --install``), or set ``DIRMN_LIBRARY_PATH`` to the library file or
    to the directory (or install prefix) holding it.
    """


def _in_dir(directory, tried):
    for sub in _SUBDIRS:
        for name in _NAMES:
            path = os.path.join(directory, sub, name)
            tried.append(path)
            if os.path.isfile(path):
                return path
    return None


def _pkg_config_libdir():
    exe = shutil.which("pkg-config")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "--variable=libdir", "dirmn"], capture_output=True,
                             text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    libdir = out.stdout.strip()
    return libdir if out.returncode == 0 and libdir else None


def candidates():
    """Where the library is looked for, as ``(description, path or None)`` pairs.

    Returns
    -------
    list of tuple
        In search order; a path of ``None`` means the source gave nothing
        (``pkg-config`` without a ``dirmn`` entry, for example).
    """
    out = []
    env = os.environ.get("DIRMN_LIBRARY_PATH", "")
    if env:
        out.append(("DIRMN_LIBRARY_PATH", env))
        return out
    out.append(("pkg-config --variable=libdir dirmn", _pkg_config_libdir()))
    for d in _INSTALL_DIRS:
        out.append(("install location", d))
    out.append(("ctypes.util.find_library('dirmn')", ctypes.util.find_library("dirmn")))
    for d in _BUILD_DIRS:
        out.append(("source tree build", d))
    return out


def find_library():
    """The path of the libdirmn to load.

    Returns
    -------
    str
        A path to the shared library (or, from ``ctypes.util.find_library``,
        a name the dynamic loader resolves).

    Raises
    ------
    DirmnLibraryNotFound
        When no candidate holds the library; the message lists them all.
    """
    tried = []
    env = os.environ.get("DIRMN_LIBRARY_PATH", "")
    for source, where in candidates():
        if where is None:
            tried.append("%s: nothing" % source)
            continue
        if source.startswith("ctypes.util"):
            # A bare soname that the loader itself resolves.
            return where
        # Absolute: a relative DIRMN_LIBRARY_PATH names the same file from
        # every working directory a later chdir or subprocess has.
        if os.path.isfile(where):
            return os.path.abspath(where)
        if os.path.isdir(where):
            found = _in_dir(where, tried)
            if found:
                return os.path.abspath(found)
        else:
            tried.append(where + " (does not exist)")
    hint = ("DIRMN_LIBRARY_PATH=%s is neither libdirmn nor a directory holding %s"
            % (env, " or ".join(_NAMES))) if env else "cannot find libdirmn"
    raise DirmnLibraryNotFound(
        "dirmn: %s. Tried:\n  %s\nInstall dirmn (cmake --install), or set "
        "DIRMN_LIBRARY_PATH to the library file or its directory."
        % (hint, "\n  ".join(tried)))


def load_library(path=None):
    """Opens libdirmn.

    Parameters
    ----------
    path : str, optional
        The library to open; by default :func:`find_library`'s.

    Returns
    -------
    tuple of (ctypes.CDLL, str)
        The opened library and its path.

    Raises
    ------
    DirmnLibraryNotFound
        When nothing is found, or the file cannot be opened (the loader's
        message is included).
    """
    path = path or find_library()
    try:
        return ctypes.CDLL(path), path
    except OSError as err:
        raise DirmnLibraryNotFound("dirmn: cannot open %s: %s" % (path, err)) from err
