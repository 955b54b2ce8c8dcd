"""How numbers leave trainlint: JSON has no NaN, so non-finite values travel as strings."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any


def as_double(v: int | float) -> float:
    """A number JSON gave as a double: an integer past a double's range is an infinity, as float() reads its digits
    (and the CSV and text readers read the same number), where float() of the int json.loads makes raises
    OverflowError (one such value made the whole log unreadable)."""
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def json_number(v: float | None) -> float | str | None:
    if v is None:
        return None
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def json_step(v: float | None) -> int | float | None:
    if v is None or not math.isfinite(v):
        return None
    return int(v) if float(v).is_integer() else v


def fmt_value(v: float) -> str:
    """Short, exact-enough text for a measured value (never rounds a value to look different)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.6g}"


def fmt_step(v: float | None) -> str:
    if v is None:
        return "?"
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def clean(obj: Any) -> Any:
    """Recursively replace non-finite floats so json.dumps(allow_nan=False) succeeds."""
    if isinstance(obj, float):
        return json_number(obj)
    if isinstance(obj, dict):
        return {k: clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [clean(v) for v in obj]
    return obj
