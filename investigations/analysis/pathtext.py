"""The one-line traffic path: `loadgen -> lb -> gateway -> app -> mysql`.

Grammar (spaces around tokens are free):

    path  := node ( arrow node )+
    node  := [ kind ":" ] label
    arrow := "->" | "-[" edge "]->"
    edge  := word ( "," word )*      e.g. -[https:443, tls, short]->

A kind is one of PathNodeKind or a common alias (lb, db, mq, ...); without one the kind is
guessed from the label. An edge word is a protocol (optionally `:port`), `tls`, `long` or
`short`. Errors name the column (1-based) where the text stops making sense.
"""

import re
from dataclasses import dataclass, field

from django.utils.translation import gettext_noop

from collectors.phrase import Phrase
from investigations.choices import ConnectionReuse, PathNodeKind, Protocol

KIND_ALIASES = {
    "loadgen": PathNodeKind.LOAD_GENERATOR,
    "load_generator": PathNodeKind.LOAD_GENERATOR,
    "dns": PathNodeKind.DNS,
    "cdn": PathNodeKind.CDN,
    "lb": PathNodeKind.LOAD_BALANCER,
    "slb": PathNodeKind.LOAD_BALANCER,
    "elb": PathNodeKind.LOAD_BALANCER,
    "load_balancer": PathNodeKind.LOAD_BALANCER,
    "nat": PathNodeKind.NAT,
    "eip": PathNodeKind.NAT,
    "gateway": PathNodeKind.GATEWAY,
    "gw": PathNodeKind.GATEWAY,
    "ingress": PathNodeKind.GATEWAY,
    "service": PathNodeKind.SERVICE,
    "app": PathNodeKind.SERVICE,
    "db": PathNodeKind.DATABASE,
    "database": PathNodeKind.DATABASE,
    "cache": PathNodeKind.CACHE,
    "mq": PathNodeKind.MESSAGE_QUEUE,
    "message_queue": PathNodeKind.MESSAGE_QUEUE,
    "queue": PathNodeKind.MESSAGE_QUEUE,
    "s3": PathNodeKind.OBJECT_STORAGE,
    "oss": PathNodeKind.OBJECT_STORAGE,
    "object_storage": PathNodeKind.OBJECT_STORAGE,
    "api": PathNodeKind.EXTERNAL_API,
    "external_api": PathNodeKind.EXTERNAL_API,
    "other": PathNodeKind.OTHER,
}

# Words in a label that give its kind away when none is written.
_GUESSES = [
    (("loadgen", "wrk", "jmeter", "locust", "k6", "client"), PathNodeKind.LOAD_GENERATOR),
    (("dns",), PathNodeKind.DNS),
    (("cdn",), PathNodeKind.CDN),
    (("lb", "slb", "elb", "alb", "nlb", "haproxy", "balancer"), PathNodeKind.LOAD_BALANCER),
    (("nat", "eip", "snat"), PathNodeKind.NAT),
    (("gateway", "gw", "ingress", "nginx", "envoy", "kong"), PathNodeKind.GATEWAY),
    (
        ("mysql", "postgres", "postgresql", "pg", "db", "oracle", "mongo", "tidb"),
        PathNodeKind.DATABASE,
    ),
    (("redis", "memcached", "cache"), PathNodeKind.CACHE),
    (("kafka", "rabbitmq", "rocketmq", "mq", "queue", "nats"), PathNodeKind.MESSAGE_QUEUE),
    (("s3", "oss", "cos", "minio", "bucket"), PathNodeKind.OBJECT_STORAGE),
    (("external", "partner", "thirdparty"), PathNodeKind.EXTERNAL_API),
]

PROTOCOL_ALIASES = {p.value: p for p in Protocol} | {
    "postgres": Protocol.POSTGRESQL,
    "pg": Protocol.POSTGRESQL,
}
# Words of a label may hold '-' inside (order-api) but not start or end with it, so that
# '->' and '-[' always end a label.
_WORD = r"[^\s\[\]>:,=-](?:[^\s\[\]>:,=]*[^\s\[\]>:,=-])?"
_LABEL = re.compile(rf"{_WORD}(?: {_WORD})*")
MAX_NODES = 50
MAX_LABEL = 200


class PathSyntaxError(ValueError):
    """Where the text goes wrong (`column`, 1-based) and what was expected (`phrase`, read in
    each person's language)."""

    def __init__(self, column: int, message: Phrase):
        self.phrase = Phrase(
            gettext_noop("Column %(column)s: %(message)s"), column=column, message=message
        )
        super().__init__(str(self.phrase))
        self.column = column


@dataclass(frozen=True)
class NodeSpec:
    label: str
    kind: str


@dataclass(frozen=True)
class EdgeSpec:
    source: str
    target: str
    protocol: str = Protocol.OTHER
    port: int | None = None
    tls: bool = False
    reuse: str = ConnectionReuse.UNKNOWN


@dataclass
class PathSpec:
    nodes: list[NodeSpec] = field(default_factory=list)
    edges: list[EdgeSpec] = field(default_factory=list)


def guess_kind(label: str) -> str:
    words = set(re.split(r"[^a-z0-9]+", label.lower()))
    for hints, kind in _GUESSES:
        if words & set(hints):
            return kind
    return PathNodeKind.SERVICE


class _Reader:
    def __init__(self, text: str):
        self.text, self.at = text, 0

    def skip_spaces(self) -> None:
        while self.at < len(self.text) and self.text[self.at] == " ":
            self.at += 1

    def fail(self, message: Phrase):
        raise PathSyntaxError(self.at + 1, message)

    def done(self) -> bool:
        self.skip_spaces()
        return self.at >= len(self.text)

    def take(self, literal: str) -> bool:
        self.skip_spaces()
        if self.text.startswith(literal, self.at):
            self.at += len(literal)
            return True
        return False

    def node(self) -> NodeSpec:
        self.skip_spaces()
        self.node_start = self.at
        match = _LABEL.match(self.text, self.at)
        if not match:
            self.fail("expected a node name")
        first = match.group(0)
        self.at = match.end()
        if not self.take(":"):
            self._check_length(first, match.start())
            return NodeSpec(first, guess_kind(first))
        kind = KIND_ALIASES.get(first.lower())
        if kind is None:
            raise PathSyntaxError(
                match.start() + 1,
                Phrase(
                    gettext_noop("unknown kind %(kind)s; use one of %(kinds)s"),
                    kind=repr(first),
                    kinds=", ".join(sorted(KIND_ALIASES)),
                ),
            )
        self.skip_spaces()
        label = _LABEL.match(self.text, self.at)
        if not label:
            self.fail(Phrase(gettext_noop("expected a node name after '%(kind)s:'"), kind=first))
        self._check_length(label.group(0), label.start())
        self.at = label.end()
        return NodeSpec(label.group(0), kind)

    def _check_length(self, label: str, start: int) -> None:
        if len(label) > MAX_LABEL:
            raise PathSyntaxError(
                start + 1,
                Phrase(
                    gettext_noop("a node name has at most %(count)s characters"), count=MAX_LABEL
                ),
            )

    def arrow(self) -> dict:
        if self.take("->"):
            return {}
        if not self.take("-["):
            self.fail(Phrase(gettext_noop("expected '->' between two nodes")))
        start = self.at
        end = self.text.find("]->", start)
        if end == -1:
            self.fail(Phrase(gettext_noop("an edge opened with '-[' needs ']->'")))
        attributes = self._edge_words(self.text[start:end], start)
        self.at = end + 3
        return attributes

    def _edge_words(self, body: str, offset: int) -> dict:
        attributes: dict = {}
        position = offset
        for word in body.split(","):
            column = position + len(word) - len(word.lstrip()) + 1
            position += len(word) + 1
            word = word.strip().lower()
            if not word:
                raise PathSyntaxError(column, Phrase(gettext_noop("empty edge attribute")))
            if word == "tls":
                attributes["tls"] = True
            elif word in ("long", "long-lived", "long_lived", "keepalive"):
                attributes["reuse"] = ConnectionReuse.LONG_LIVED
            elif word in ("short", "short-lived", "short_lived"):
                attributes["reuse"] = ConnectionReuse.SHORT_LIVED
            else:
                name, _, port = word.partition(":")
                if name not in PROTOCOL_ALIASES:
                    raise PathSyntaxError(
                        column,
                        Phrase(
                            gettext_noop(
                                "unknown edge attribute %(word)s: a protocol (%(protocols)s), "
                                "protocol:port, tls, long or short"
                            ),
                            word=repr(word),
                            protocols=", ".join(Protocol.values),
                        ),
                    )
                attributes["protocol"] = PROTOCOL_ALIASES[name]
                if port:
                    if not port.isdigit() or not 1 <= int(port) <= 65535:
                        raise PathSyntaxError(
                            column,
                            Phrase(
                                gettext_noop("the port must be 1-65535, not %(port)s"),
                                port=repr(port),
                            ),
                        )
                    attributes["port"] = int(port)
                if name == "https":
                    attributes["tls"] = True
        return attributes


def parse_path(text: str) -> PathSpec:
    """Nodes in order of first appearance and the edges between them."""
    # Every whitespace character becomes one space, so that columns stay where they were.
    text = re.sub(r"\s", " ", text).rstrip()
    reader = _Reader(text)
    if reader.done():
        raise PathSyntaxError(
            1, Phrase(gettext_noop("write a path such as: loadgen -> lb -> app -> mysql"))
        )
    spec = PathSpec()
    seen: dict[str, NodeSpec] = {}

    def add(node: NodeSpec) -> NodeSpec:
        known = seen.get(node.label)
        if known is None:
            seen[node.label] = node
            spec.nodes.append(node)
            return node
        return known

    previous = add(reader.node())
    while not reader.done():
        attributes = reader.arrow()
        current = add(reader.node())
        if len(spec.nodes) > MAX_NODES:
            raise PathSyntaxError(
                reader.node_start + 1,
                Phrase(gettext_noop("at most %(count)s nodes in one path"), count=MAX_NODES),
            )
        if current.label == previous.label:
            raise PathSyntaxError(
                reader.node_start + 1,
                Phrase(gettext_noop("%(node)s cannot lead to itself"), node=repr(current.label)),
            )
        spec.edges.append(EdgeSpec(previous.label, current.label, **attributes))
        previous = current
    if not spec.edges:
        raise PathSyntaxError(
            len(text) + 1, Phrase(gettext_noop("a path needs at least two nodes joined by '->'"))
        )
    return spec
