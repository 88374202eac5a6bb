"""A remote command's output streamed into a temporary file as it arrives, its size and
sha256 counted on the way, so that the artifact is never held whole in memory nor read
twice to hash it. The service that stores the evidence keeps the file as an Artifact."""

import hashlib
import tempfile
from dataclasses import dataclass, field


class HashingFile:
    """Write-through sha256 and size; `on_data` sees every chunk too (to count packets as
    they come, say)."""

    def __init__(self, file, on_data=None):
        self.file, self.sha256, self.size = file, hashlib.sha256(), 0
        self.on_data = on_data

    def write(self, data: bytes) -> int:
        self.sha256.update(data)
        self.size += len(data)
        if self.on_data is not None:
            self.on_data(data)
        return self.file.write(data)


@dataclass
class Captured:
    name: str
    file: object = field(repr=False)  # a temporary file, open, holding the output
    size: int
    sha256: str
    truncated: bool
    exit_status: int | None
    stderr: str = ""  # what the command said on its standard error (capped)

    def read(self) -> bytes:
        self.file.seek(0)
        return self.file.read()

    def close(self) -> None:
        self.file.close()


def capture(
    connection, argv, *, name: str, stdin: bytes, timeout: float, max_bytes: int, on_data=None
):
    """Run `argv` on the connection, its stdout (at most max_bytes) into a Captured."""
    file = tempfile.TemporaryFile()
    try:
        sink = HashingFile(file, on_data)
        result = connection.run(argv, sink=sink, stdin=stdin, timeout=timeout, max_bytes=max_bytes)
    except BaseException:
        file.close()
        raise
    return Captured(
        name=name,
        file=file,
        size=sink.size,
        sha256=sink.sha256.hexdigest(),
        truncated=result.truncated,
        exit_status=result.exit_status,
        stderr=result.stderr,
    )
