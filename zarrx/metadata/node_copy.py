"""Copying the objects of a node and of everything below it to a free place in the same store
(the first half of a move: :func:`zarrx.metadata.nodes.move_node`).

The data goes first and the documents last, deepest first and the one making each node last
of all, so a copy stopped part way leaves no node at the destination missing data. On a store
with conditional writes every object is created only while its key is absent: of two moves
into one place at once (or a move and a creation there), the one that finds a key taken
removes what it copied, each object only at the generation it wrote, and raises, so a node
there never mixes the objects of two sources. A copy whose source loses a node document while
it is copied (deleted or moved away meanwhile: a delete removes the documents first) removes
what it copied too and raises, rather than leave the data without its node.
"""
from __future__ import annotations

from collections.abc import Hashable

from zarrx.errors import ConflictError, NodeExistsError, NodeNotFoundError, ZarrError
from zarrx.metadata.node_read import DOCUMENT_NAMES, V3_KEY
from zarrx.store.base import ABSENT, Store

__all__ = ["NODE_KEYS", "copy_below", "documents_last"]

NODE_KEYS = (V3_KEY, ".zarray", ".zgroup")    # the documents whose presence makes a node


def documents_last(key: str) -> tuple[bool, int, bool, str]:
    """The order of a copy: the data, then the documents, deepest first, those making a node
    after the others of their folder."""
    name = key.rpartition("/")[2]
    doc = name in DOCUMENT_NAMES
    return doc, -key.count("/") if doc else 0, name in NODE_KEYS, key


def copy_below(store: Store, src: str, dst: str) -> None:
    """Copy every object below ``src`` to the same name below ``dst``, where nothing may be
    stored yet (see the module)."""
    prefix, to = src + "/", dst + "/"
    exclusive = store.supports_conditional_writes
    written: list[tuple[str, Hashable]] = []
    taken = next(iter(store.list_prefix(to)), None)
    if taken is not None:           # (it would otherwise read as part of the node moved)
        raise _taken(store, src, dst, taken)
    checked = False
    try:
        for key in sorted(store.list_prefix(prefix), key=documents_last):
            if exclusive and not checked and documents_last(key)[0]:
                checked = True
                _check_kept(store, src, dst, written)
            value = store.get(key)
            target = to + key[len(prefix):]
            if value is None:
                if key.rpartition("/")[2] in NODE_KEYS:
                    raise NodeNotFoundError(
                        f"{store!r}: cannot move {src!r} to {dst!r}: {key!r} was removed while "
                        f"it was copied (the node was deleted or moved meanwhile); nothing was "
                        f"moved")
                continue                        # a chunk removed meanwhile: the fill value
            if not exclusive:
                store.set(target, value)
                continue
            try:
                written.append((target, store.set_if(target, value, ABSENT)))
            except ConflictError:
                raise _taken(store, src, dst, target) from None
    except BaseException:
        _undo(store, written)
        raise


def _taken(store: Store, src: str, dst: str, key: str) -> NodeExistsError:
    return NodeExistsError(
        f"{store!r}: cannot move {src!r} to {dst!r}: an object is stored at {key!r} already "
        f"(another writer made or moved a node there meanwhile, or a delete or a move stopped "
        f"part way left it: `zarrx check --repair --remove-strays` removes such objects); "
        f"nothing was moved")


def _check_kept(store: Store, src: str, dst: str, written: list[tuple[str, Hashable]]) -> None:
    """Before the documents: every object copied is still there (another writer creating a
    node at ``dst`` removes the chunks it finds without a node document there as what a
    stopped delete left: see :mod:`zarrx.metadata.leftovers`)."""
    listed = set(store.list_prefix(dst + "/"))
    gone = [key for key, _ in written if key not in listed]
    if gone:
        raise NodeExistsError(
            f"{store!r}: cannot move {src!r} to {dst!r}: {gone[0]!r} (and {len(gone) - 1} "
            f"more) copied there was removed by another writer making a node there meanwhile; "
            f"nothing was moved")


def _undo(store: Store, written: list[tuple[str, Hashable]]) -> None:
    """Remove the objects a stopped copy created, each only at the generation it wrote (what
    another writer stored over one since stays), the documents first."""
    for key, generation in reversed(written):
        try:
            store.delete_if(key, generation)
        except ZarrError:
            pass                    # rewritten meanwhile, or the store failing: left there
