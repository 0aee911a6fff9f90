

def counted_calls(monkeypatch, owner: object, name: str) -> list[int]:
    """``owner.name`` replaced by a wrapper counting its calls: the list's one item is the count."""
    calls = [0]
    original = getattr(owner, name)

    def counting(*args, **kwargs):
        calls[0] += 1
        return original(*args, **kwargs)
    monkeypatch.setattr(owner, name, counting)
    return calls
