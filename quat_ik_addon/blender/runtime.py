"""App handlers (live and per-frame solving). Registered once, removed on unregister."""


def register() -> None:
    """Install the persistent handlers (none yet)."""


def unregister() -> None:
    """Remove every handler register() installed."""
