

def count_item_calls(monkeypatch, cls, name: str) -> list:
    """Replace the static method ``cls.name(items)`` by one that records ``len(items)`` of
    every call, then calls the real one; the list of lengths is returned."""
    calls: list = []
    real = getattr(cls, name)

    def counting(items):
        calls.append(len(items))
        return real(items)

    monkeypatch.setattr(cls, name, staticmethod(counting))
    return calls
