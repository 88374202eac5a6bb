"""What can go wrong when reaching a host, each with a message a person can act on."""

from collectors.phrase import Phrase, as_phrase


class CollectorError(Exception):
    """Base class. `transient` errors may succeed on retry; the others will not.
    `settings_fault` errors come from how the host is set up here, not from the host.
    `phrase` is the message to store (read in each person's language), `message` its
    English."""

    transient = False
    settings_fault = False

    def __init__(self, message: "str | Phrase"):
        self.phrase = as_phrase(message)
        self.message = str(self.phrase)
        super().__init__(self.message)


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
