"""The one-line traffic path: what it reads, and where and why it stops reading."""

import pytest

from investigations.analysis.pathtext import (
    KIND_ALIASES,
    MAX_NODES,
    EdgeSpec,
    NodeSpec,
    PathSyntaxError,
    guess_kind,
    parse_path,
)
from investigations.choices import ConnectionReuse, PathNodeKind, Protocol

KINDS = ", ".join(sorted(KIND_ALIASES))
PROTOCOLS = "http, https, grpc, tcp, mysql, postgresql, redis, amqp, other"


def labels(text: str) -> list[str]:
    return [node.label for node in parse_path(text).nodes]


def joins(text: str) -> list[tuple[str, str]]:
    return [(edge.source, edge.target) for edge in parse_path(text).edges]


def the_edge(text: str) -> EdgeSpec:
    (edge,) = parse_path(text).edges
    return edge


def refusal(text: str) -> tuple[int, str]:
    with pytest.raises(PathSyntaxError) as raised:
        parse_path(text)
    error = raised.value
    # The message a person reads starts with the column the error object carries.
    prefix = f"Column {error.column}: "
    assert str(error).startswith(prefix)
    return error.column, str(error)[len(prefix) :]


# --- good lines ---------------------------------------------------------------------------


def test_a_plain_line_gives_its_nodes_in_order_and_the_edges_between_them():
    spec = parse_path("loadgen -> lb -> gateway -> app -> mysql")

    assert spec.nodes == [
        NodeSpec("loadgen", PathNodeKind.LOAD_GENERATOR),
        NodeSpec("lb", PathNodeKind.LOAD_BALANCER),
        NodeSpec("gateway", PathNodeKind.GATEWAY),
        NodeSpec("app", PathNodeKind.SERVICE),
        NodeSpec("mysql", PathNodeKind.DATABASE),
    ]
    assert spec.edges == [
        EdgeSpec("loadgen", "lb"),
        EdgeSpec("lb", "gateway"),
        EdgeSpec("gateway", "app"),
        EdgeSpec("app", "mysql"),
    ]


def test_a_plain_edge_knows_nothing_about_its_connection():
    edge = the_edge("a -> b")

    assert (edge.protocol, edge.port, edge.tls, edge.reuse) == (
        Protocol.OTHER,
        None,
        False,
        ConnectionReuse.UNKNOWN,
    )


@pytest.mark.parametrize(("alias", "kind"), sorted(KIND_ALIASES.items()))
def test_every_kind_alias_names_its_kind(alias, kind):
    assert parse_path(f"{alias}:first -> second").nodes[0] == NodeSpec("first", kind)


@pytest.mark.parametrize("alias", ["LB", "Db", "LoadGen", "MQ"])
def test_a_kind_is_read_whatever_its_case(alias):
    assert parse_path(f"{alias}:x -> y").nodes[0].kind == KIND_ALIASES[alias.lower()]


def test_a_written_kind_wins_over_the_guess_from_the_label():
    assert parse_path("cache:mysql -> other:redis").nodes == [
        NodeSpec("mysql", PathNodeKind.CACHE),
        NodeSpec("redis", PathNodeKind.OTHER),
    ]


def test_spaces_after_the_kind_colon_are_free():
    assert parse_path("db:  orders main -> app").nodes[0] == NodeSpec(
        "orders main", PathNodeKind.DATABASE
    )


def test_labels_may_have_several_words():
    assert labels("load gen box -> order api -> db:orders primary") == [
        "load gen box",
        "order api",
        "orders primary",
    ]


def test_labels_may_hold_a_dash_inside():
    assert labels("order-api -> my-sql-db -> x-1") == ["order-api", "my-sql-db", "x-1"]


def test_a_dash_inside_a_label_does_not_hide_an_arrow_written_without_spaces():
    assert joins("order-api->db-main-[mysql:3306]->cache-1") == [
        ("order-api", "db-main"),
        ("db-main", "cache-1"),
    ]
    assert the_edge("a-b-[tcp]->c").source == "a-b"


def test_labels_keep_their_unicode_and_punctuation():
    assert labels("网关 -> 容器 app -> svc.v2@eu") == ["网关", "容器 app", "svc.v2@eu"]


def test_an_edge_says_its_protocol_port_tls_and_reuse():
    edge = the_edge("lb -[https:443, tls, short]-> app")

    assert (edge.source, edge.target) == ("lb", "app")
    assert (edge.protocol, edge.port, edge.tls, edge.reuse) == (
        Protocol.HTTPS,
        443,
        True,
        ConnectionReuse.SHORT_LIVED,
    )


def test_edge_attributes_are_read_whatever_their_spacing_and_case():
    edge = the_edge("a -[  GRPC:50051 ,TLS,   Long ]-> b")

    assert (edge.protocol, edge.port, edge.tls, edge.reuse) == (
        Protocol.GRPC,
        50051,
        True,
        ConnectionReuse.LONG_LIVED,
    )


@pytest.mark.parametrize("protocol", Protocol.values)
def test_every_protocol_may_be_named_on_an_edge(protocol):
    edge = the_edge(f"a -[{protocol}]-> b")

    assert (edge.protocol, edge.port) == (protocol, None)
    # Only HTTPS says TLS by itself.
    assert edge.tls is (protocol == Protocol.HTTPS)


@pytest.mark.parametrize(("alias", "protocol"), [("postgres", "postgresql"), ("pg", "postgresql")])
def test_protocol_aliases_name_their_protocol(alias, protocol):
    assert the_edge(f"app -[{alias}:5432]-> db").protocol == protocol


@pytest.mark.parametrize(
    ("word", "reuse"),
    [
        ("long", ConnectionReuse.LONG_LIVED),
        ("long-lived", ConnectionReuse.LONG_LIVED),
        ("long_lived", ConnectionReuse.LONG_LIVED),
        ("keepalive", ConnectionReuse.LONG_LIVED),
        ("short", ConnectionReuse.SHORT_LIVED),
        ("short-lived", ConnectionReuse.SHORT_LIVED),
        ("short_lived", ConnectionReuse.SHORT_LIVED),
    ],
)
def test_every_reuse_word_is_understood(word, reuse):
    edge = the_edge(f"a -[tcp, {word}]-> b")

    assert (edge.protocol, edge.reuse) == (Protocol.TCP, reuse)


def test_tls_alone_keeps_the_protocol_unknown():
    edge = the_edge("a -[tls]-> b")

    assert (edge.protocol, edge.tls) == (Protocol.OTHER, True)


@pytest.mark.parametrize("port", [1, 80, 65535])
def test_ports_at_the_ends_of_the_range_are_accepted(port):
    assert the_edge(f"a -[tcp:{port}]-> b").port == port


def test_a_node_named_again_is_the_same_node():
    spec = parse_path("gateway -> app -> mysql -> app -> redis")

    assert [n.label for n in spec.nodes] == ["gateway", "app", "mysql", "redis"]
    assert [(e.source, e.target) for e in spec.edges] == [
        ("gateway", "app"),
        ("app", "mysql"),
        ("mysql", "app"),
        ("app", "redis"),
    ]


def test_the_first_kind_written_for_a_node_is_kept():
    assert parse_path("lb:edge -> app -> db:edge").nodes[0] == NodeSpec(
        "edge", PathNodeKind.LOAD_BALANCER
    )


def test_a_cycle_gives_an_edge_each_way():
    spec = parse_path("a -> b -> a")

    assert [n.label for n in spec.nodes] == ["a", "b"]
    assert [(e.source, e.target) for e in spec.edges] == [("a", "b"), ("b", "a")]


def test_spaces_tabs_and_newlines_around_tokens_are_free():
    text = "\n  loadgen\t->\n\n lb   -[ http:80 ]->\tapp  \n"

    assert labels(text) == ["loadgen", "lb", "app"]
    assert joins(text) == [("loadgen", "lb"), ("lb", "app")]


def test_windows_line_ends_are_whitespace_too():
    assert joins("loadgen ->\r\nlb ->\r\napp\r\n") == [("loadgen", "lb"), ("lb", "app")]


def test_arrows_need_no_spaces_around_them():
    assert joins("a->b-[http]->c") == [("a", "b"), ("b", "c")]


def test_a_path_of_fifty_nodes_is_accepted():
    names = [f"n{i}" for i in range(MAX_NODES)]

    assert labels(" -> ".join(names)) == names


# --- bad lines: the column where the text stops making sense, and why ----------------------


@pytest.mark.parametrize("text", ["", "   ", "\n\t \n"])
def test_an_empty_line_asks_for_a_path(text):
    assert refusal(text) == (1, "write a path such as: loadgen -> lb -> app -> mysql")


def test_a_single_node_asks_for_a_second_one_after_the_text():
    assert refusal("app") == (4, "a path needs at least two nodes joined by '->'")


def test_a_line_that_starts_with_an_arrow_asks_for_a_node_at_its_start():
    assert refusal("-> b") == (1, "expected a node name")


def test_a_line_that_ends_with_an_arrow_asks_for_a_node_at_its_end():
    assert refusal("a ->") == (5, "expected a node name")
    assert refusal("a -> b ->  ") == (10, "expected a node name")


def test_two_arrows_in_a_row_ask_for_a_node_at_the_second():
    assert refusal("a -> -> b") == (6, "expected a node name")


def test_an_unknown_kind_is_named_with_the_kinds_there_are():
    assert refusal("lb -> foo:bar") == (7, f"unknown kind 'foo'; use one of {KINDS}")


def test_a_kind_with_no_label_after_it_asks_for_one():
    assert refusal("db: -> x") == (5, "expected a node name after 'db:'")


def test_an_unknown_edge_attribute_is_named_at_its_column():
    assert refusal("a -[http, quic]-> b") == (
        11,
        f"unknown edge attribute 'quic': a protocol ({PROTOCOLS}), "
        "protocol:port, tls, long or short",
    )


def test_an_empty_edge_attribute_is_refused():
    assert refusal("a -[]-> b") == (5, "empty edge attribute")
    assert refusal("a -[http,]-> b") == (10, "empty edge attribute")


@pytest.mark.parametrize("port", ["0", "65536", "x", "-1", "80.5"])
def test_a_port_outside_1_to_65535_is_refused(port):
    assert refusal(f"a -[tcp:{port}]-> b") == (5, f"the port must be 1-65535, not {port!r}")


def test_an_edge_opened_with_a_bracket_must_be_closed():
    assert refusal("a -[http b") == (5, "an edge opened with '-[' needs ']->'")
    assert refusal("a -[http]- b") == (5, "an edge opened with '-[' needs ']->'")


def test_a_node_cannot_lead_to_itself_and_the_column_is_that_of_the_repeated_node():
    assert refusal("a -> a") == (6, "'a' cannot lead to itself")
    assert refusal("lb -> app -> app") == (14, "'app' cannot lead to itself")


def test_more_than_fifty_nodes_are_refused_at_the_fifty_first():
    names = [f"n{i}" for i in range(MAX_NODES + 1)]
    text = " -> ".join(names)

    assert refusal(text) == (text.index("n50") + 1, f"at most {MAX_NODES} nodes in one path")


def test_a_fat_arrow_is_refused_where_it_starts():
    assert refusal("a => b") == (3, "expected '->' between two nodes")


@pytest.mark.parametrize(("text", "column"), [("a > b", 3), ("a - b", 3), ("a]->b", 2)])
def test_a_broken_arrow_is_refused_where_it_starts(text, column):
    assert refusal(text) == (column, "expected '->' between two nodes")


def test_columns_count_from_the_start_of_the_whole_text_across_lines():
    assert refusal("a ->\n-> b") == (6, "expected a node name")


def test_the_error_is_a_value_error_that_names_its_column():
    with pytest.raises(ValueError, match=r"^Column 6: expected a node name$"):
        parse_path("a -> -> b")


# --- guessing a kind from a label -----------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "kind"),
    [
        ("wrk", PathNodeKind.LOAD_GENERATOR),
        ("k6-runner", PathNodeKind.LOAD_GENERATOR),
        ("JMeter client", PathNodeKind.LOAD_GENERATOR),
        ("internal DNS", PathNodeKind.DNS),
        ("cdn edge", PathNodeKind.CDN),
        ("public-slb", PathNodeKind.LOAD_BALANCER),
        ("haproxy", PathNodeKind.LOAD_BALANCER),
        ("snat gateway ip", PathNodeKind.NAT),
        ("nginx-ingress", PathNodeKind.GATEWAY),
        ("envoy", PathNodeKind.GATEWAY),
        ("orders-mysql", PathNodeKind.DATABASE),
        ("pg primary", PathNodeKind.DATABASE),
        ("TiDB", PathNodeKind.DATABASE),
        ("redis", PathNodeKind.CACHE),
        ("session memcached", PathNodeKind.CACHE),
        ("kafka", PathNodeKind.MESSAGE_QUEUE),
        ("rabbitmq-1", PathNodeKind.MESSAGE_QUEUE),
        ("minio", PathNodeKind.OBJECT_STORAGE),
        ("s3 bucket", PathNodeKind.OBJECT_STORAGE),
        ("partner payments", PathNodeKind.EXTERNAL_API),
        ("checkout", PathNodeKind.SERVICE),
        ("order-api", PathNodeKind.SERVICE),
        ("网关", PathNodeKind.SERVICE),
    ],
)
def test_the_kind_is_guessed_from_typical_labels(label, kind):
    assert guess_kind(label) == kind


def test_a_guess_looks_at_whole_words_only():
    # 'dbserver' and 'albums' begin with the hints 'db' and 'alb' but are other words.
    assert guess_kind("dbserver") == PathNodeKind.SERVICE
    assert guess_kind("albums") == PathNodeKind.SERVICE
