"""The plans by kind: each plan module registers its class here when it is imported
(runs/__init__.py imports them all), so that the plans import this small module and not
the package that imports them."""

PLANS: dict = {}


def register(cls):
    """Class decorator: make the plan the one for its kind."""
    PLANS[cls.kind] = cls()
    return cls
