"""Where the workbench reads and writes its data: one function, `data_dir`.

Records (`runs/`), explorer state (`explorer/`) and calibrated targets
(`targets/`) go to, in this order:
1. `$WORKBENCH_DATA` when set (tests and the browser driver point it at a
   temporary folder, so an explicit setting wins);
2. `data/` of the checkout of this project that holds the current directory
   (a folder with this project's pyproject.toml, the current one or a parent:
   a notebook runs in `notebooks/`);
3. the user data directory (`~/.local/share/candidate-workbench`, or the
   platform's equivalent).
Never into the installed package's tree: an installed package has no
pyproject.toml beside it. `shipped_data_dir()` is the read-only `data/` that
comes with a checkout (the datasheet targets).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PROJECT = "candidate-workbench"


def _is_checkout(folder: Path) -> bool:
    try:
        text = (folder / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return False
    return f'name = "{PROJECT}"' in text


def checkout_root(start: Path | None = None) -> Path | None:
    """The checkout of this project holding `start` (default: the current
    directory), or None."""
    here = (start or Path.cwd()).resolve()
    return next((p for p in (here, *here.parents) if _is_checkout(p)), None)


def user_data_dir() -> Path:
    """The platform's per-user data folder for the workbench."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / PROJECT


def data_dir() -> Path:
    """Where records, explorer state and calibrations go (see the module)."""
    env = os.environ.get("WORKBENCH_DATA")
    if env:
        return Path(env)
    root = checkout_root()
    return root / "data" if root is not None else user_data_dir()


def shipped_data_dir() -> Path:
    """The `data/` of the checkout this package was loaded from (may not
    exist for an installed package)."""
    return Path(__file__).resolve().parents[1] / "data"


def write_atomic(path: Path, text: str, prefix: str | None = None) -> Path:
    """Write `text` to `path` whole or not at all: a temporary file beside
    it, then a rename, so a reader never sees half a file and a failed
    write leaves nothing behind."""
    import tempfile
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=prefix or path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


__all__ = ["checkout_root", "data_dir", "shipped_data_dir", "user_data_dir", "write_atomic"]
