"""Names of the tree's nodes in other namespaces (xarray variables and groups, Zarr paths),
one-to-one: keys that differ only in type (`1` and `'1'`, `True` and `'True'`), or that are
empty, `.`, `/`, `~`, are different keys, and never become one name. A name already taken, or
not allowed where it goes, is renamed (a suffix `_1`, `_2`, ...), and a warning lists every
rename."""

import warnings


def escape(key):
    """A key as a JSON pointer token (`~` as `~0`, `/` as `~1`); keys that are not strings by
    their text (`1`, `True`)."""
    text = key if isinstance(key, str) else str(key)
    return text.replace("~", "~0").replace("/", "~1")


def describe(keys):
    """A path of keys as Python indexing (`tree[1]['a']`): it tells `1` and `'1'` apart."""
    return "tree" + "".join(f"[{k!r}]" for k in keys)


def children(f, pointer):
    """`[(key, token)]` of the mapping at `pointer`, or `[(i, i)]` of the sequence there, or
    `[]`; with the node's kind."""
    kind, _tag, payload = f._native.node(pointer)
    if kind == "map":
        # A key given twice (by a merge key `<<` and the mapping itself) is one key, as in the
        # dict Python asdf reads: the later token wins.
        return kind, list(dict(payload).items())
    if kind == "seq":
        return kind, [(i, i) for i in range(payload)]
    return kind, []


class Namer:
    """Gives each candidate a name not given before in this namespace: the candidate itself
    when free (and allowed), else the candidate (or `fallback` for an empty one) with the first
    free suffix `_1`, `_2`, .... Renames are kept for one warning."""

    def __init__(self, allowed=None, fallback="data", fix=None):
        self._taken = set()
        self._allowed = allowed or (lambda name: True)
        self._fix = fix or (lambda c: fallback if c == "" else f"_{c}_")
        self.renamed = []

    def name(self, candidate, what):
        """`candidate`'s name here; `what` describes the node (for the warning)."""
        base = candidate if self._allowed(candidate) else self._fix(candidate)
        name, n = base, 0
        while name in self._taken or not self._allowed(name):
            n += 1
            name = f"{base}_{n}"
        self._taken.add(name)
        if name != candidate:
            self.renamed.append((what, candidate, name))
        return name


def warn_renamed(renamed, namespace, stacklevel=3):
    """One warning listing every rename (`what`: the node, by its keys)."""
    if renamed:
        warnings.warn(
            f"{len(renamed)} {namespace} renamed (their keys' names were taken by other keys, "
            "or are not allowed there): "
            + "; ".join(f"{what}: {old!r} -> {new!r}" for what, old, new in renamed),
            stacklevel=stacklevel,
        )
