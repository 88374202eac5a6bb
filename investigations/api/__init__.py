from investigations.api.root import api

__all__ = ["api"]
