"""Write a JSON file so a reader sees either the old file or the whole new one."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_json_atomic(path: str | Path, obj: Any, indent: int = 2) -> None:
    """Serialise ``obj`` first, write it beside ``path`` and rename it into place.

    A process killed mid-write (a session's end, the OOM killer) leaves at most a
    ``.tmp`` file; an object that is not JSON leaves ``path`` untouched.
    """
    path = Path(path)
    text = json.dumps(obj, indent=indent) + "\n"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
