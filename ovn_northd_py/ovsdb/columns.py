"""Helpers reading IDL column values (no knowledge of any particular table)."""

from __future__ import annotations

from typing import Any


def opt(v: Any) -> Any:
    """The value of an optional IDL column (a 0- or 1-element list), or None."""
    if isinstance(v, list):
        return v[0] if v else None
    return v
