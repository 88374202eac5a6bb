"""What can go wrong when reaching a host, each with a message a person can act on."""


class CollectorError(Exception):
    """Base class. `transient` errors may succeed on retry; the others will not.
    `settings_fault` errors come from how the host is set up here, not from the host."""

    transient = False
    settings_fault = False

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class Unreachable(CollectorError):
    transient = True


class HostKeyNotTrusted(CollectorError):
    settings_fault = True


class HostKeyChanged(CollectorError):
    pass


class AuthenticationFailed(CollectorError):
    pass


class CommandTimedOut(CollectorError):
    pass
