"""A small stand-in for ``dataclasses`` on the start-up path of ``trainlint check``.

``import dataclasses`` pulls in ``inspect`` (ast, dis, tokenize, …): about 20 ms on the machines
this project is measured on, a third of trainproof's whole run on a small log. ``record`` covers
what trainlint's data classes use — fields with defaults or factories, ``frozen``, ``eq`` — and
nothing else: generated ``__init__``, ``__repr__``, ``__eq__`` and, for frozen records, ``__hash__``.
"""

from __future__ import annotations

_MISSING = object()
_FIELDS = "__record_fields__"


class Field:
    __slots__ = ("default", "default_factory", "name")

    def __init__(self, default: object = _MISSING, default_factory: object = _MISSING) -> None:
        self.name = ""
        self.default = default
        self.default_factory = default_factory


def field(*, default: object = _MISSING, default_factory: object = _MISSING) -> object:
    return Field(default, default_factory)


def fields(cls_or_obj: object) -> tuple[Field, ...]:
    return getattr(cls_or_obj, _FIELDS)


def _annotations(cls: type) -> list[str]:
    ann = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 - inspect is what we avoid
    return [n for n, a in ann.items() if not str(a).startswith(("ClassVar", "typing.ClassVar"))]


def record(cls: type | None = None, *, frozen: bool = False, eq: bool = True, slots: bool = False):
    """Decorate a class with annotated fields (``slots`` is accepted and ignored)."""

    def wrap(c: type) -> type:
        names = _annotations(c)
        flds: list[Field] = []
        globs: dict[str, object] = {"_MISSING": _MISSING, "_set": object.__setattr__}
        params, body = [], []
        seen_default = False
        for name in names:
            value = c.__dict__.get(name, _MISSING)
            f = value if isinstance(value, Field) else Field(default=value)
            f.name = name
            flds.append(f)
            if f.default is not _MISSING:
                globs[f"_d_{name}"] = f.default
                params.append(f"{name}=_d_{name}")
                seen_default = True
            elif f.default_factory is not _MISSING:
                globs[f"_f_{name}"] = f.default_factory
                params.append(f"{name}=_MISSING")
                seen_default = True
            else:
                if seen_default:
                    raise TypeError(f"non-default field {name!r} follows a default field in {c.__name__}")
                params.append(name)
            if isinstance(value, Field):
                if f.default is not _MISSING:
                    setattr(c, name, f.default)
                else:
                    delattr(c, name)
            expr = f"_f_{name}() if {name} is _MISSING else {name}" if f.default_factory is not _MISSING else name
            body.append(f"    _set(self, {name!r}, {expr})" if frozen else f"    self.{name} = {expr}")
        src = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass")
        if names:
            src += "\n    _post = getattr(self, '__post_init__', None)\n    _post and _post()"
        ns: dict[str, object] = {}
        exec(src, globs, ns)
        init = ns["__init__"]
        init.__qualname__ = f"{c.__qualname__}.__init__"  # type: ignore[attr-defined]
        c.__init__ = init  # type: ignore[misc]
        setattr(c, _FIELDS, tuple(flds))

        def __repr__(self: object) -> str:
            inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
            return f"{type(self).__name__}({inner})"

        c.__repr__ = __repr__  # type: ignore[method-assign]
        if eq:
            def __eq__(self: object, other: object) -> bool:
                if other.__class__ is not self.__class__:
                    return NotImplemented
                return all(getattr(self, n) == getattr(other, n) for n in names)

            c.__eq__ = __eq__  # type: ignore[method-assign,assignment]
            if frozen:
                c.__hash__ = lambda self: hash(tuple(getattr(self, n) for n in names))  # type: ignore[method-assign]
            else:
                c.__hash__ = None  # type: ignore[assignment]
        if frozen:
            def __setattr__(self: object, name: str, value: object) -> None:
                raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")

            c.__setattr__ = __setattr__  # type: ignore[method-assign,assignment]
        return c

    return wrap if cls is None else wrap(cls)
