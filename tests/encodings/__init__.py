

def count_item_calls(monkeypatch, owner, name: str) -> list:
    """Replace ``owner.name(items)`` (a class's static method or a module's function) by one
    that records ``len(items)`` of every call, then calls the real one; the list of lengths
    is returned."""
    calls: list = []
    real = getattr(owner, name)

    def counting(items):
        calls.append(len(items))
        return real(items)

    monkeypatch.setattr(owner, name, staticmethod(counting) if isinstance(owner, type) else counting)
    return calls
