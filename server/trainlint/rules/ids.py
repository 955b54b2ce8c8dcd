"""Rule IDs a user names in ``select`` / ``ignore``: each must be an ID or the prefix of one.

A typo (``TP-DIVERG``) or a blank entry selected nothing (the editor showed no diagnostic and the status bar "no
findings") or, blank, ignored everything; an unknown entry is now named, with the closest IDs, and dropped.
"""

from __future__ import annotations

import difflib


def known_ids() -> list[str]:
    from . import RULES  # start-up: the registry imports every rule module; ids is imported without it

    return sorted(RULES)


def unknown(entry: str, ids: list[str] | None = None) -> str | None:
    """Why ``entry`` names no rule (a sentence), or None when it is an ID or the prefix of one."""
    ids = ids if ids is not None else known_ids()
    if entry and any(i == entry or i.startswith(entry) for i in ids):
        return None
    close = difflib.get_close_matches(entry, ids, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else "; an ID such as TP-NAN, or a prefix such as TP or TL"
    return f"{entry!r} is not a rule ID or the prefix of one{hint}"


def validate(key: str, entries: list[str]) -> tuple[list[str], list[tuple[int, str]]]:
    """(the entries that name rules, [(index, message)] for the others)."""
    ids = known_ids()
    kept, bad = [], []
    for i, e in enumerate(entries):
        why = unknown(e, ids)
        if why is None:
            kept.append(e)
        else:
            bad.append((i, f"{key}: {why}; it was ignored"))
    return kept, bad
