"""Flame graphs as data (investigations/analysis/flame.py): the layout's arithmetic, the
small frames merged into "[other]", a huge profile kept to a few thousand bars, and the
differential view of two sides. Hand-made stacks: no database."""

import json
import random

import pytest

from collectors.stacks import FoldedProfile, merge_small_frames
from investigations.analysis.flame import MAX_NODES, diff_tree, flame_tree
from tests.budget import within_a_second

# A web server's profile in miniature: 1000 samples, weights by period (x 1000).
SERVER = {
    "nginx;main;accept": 100,
    "nginx;main;handle;parse": 250,
    "nginx;main;handle;ssl_write;p256_point_mul": 400,
    "nginx;main;handle": 50,
    "nginx;main;log": 9,
    "nginx;main;log;write": 1,
    "kworker;do_idle": 190,
}
SAMPLES = dict(SERVER)
WEIGHTS = {stack: count * 1000 for stack, count in SERVER.items()}


def by_path(tree: dict) -> dict[str, dict]:
    """The nodes by their stack ("all" for the root)."""
    nodes, paths = tree["nodes"], []
    for node in nodes:
        parent = node["parent"]
        paths.append(
            "all" if parent < 0 else f"{paths[parent]};{node['name']}".removeprefix("all;")
        )
    return dict(zip(paths, nodes, strict=True))


def own_weights(tree: dict) -> dict[str, int | float]:
    """The folded stacks the graph draws: each frame's weight less its children's."""
    paths = by_path(tree)
    below = dict.fromkeys(paths, 0)
    for path, node in paths.items():
        if node["parent"] >= 0:
            below[path.rpartition(";")[0] or "all"] += node["weight"]
    return {
        path: node["weight"] - below[path]
        for path, node in paths.items()
        if path != "all" and node["weight"] - below[path]
    }


def random_stacks(count: int, seed: int, deepest: int = 60) -> dict[str, int]:
    """`count` distinct stacks 3 to `deepest` frames deep over 5,000 functions, the deeper
    the more varied (as real stacks fan out towards the leaves), weights by period."""
    rng = random.Random(seed)
    functions = [f"fn_{i}" for i in range(5000)]
    stacks: dict[str, int] = {}
    while len(stacks) < count:
        frames = ["app"]
        for depth in range(rng.randint(3, deepest)):
            spread = int(rng.paretovariate(1.0 + depth * 0.05)) * (depth + 1)
            frames.append(functions[min(spread, len(functions)) - 1])
        stacks[";".join(frames)] = rng.randint(1, 1000) * 10_007
    return stacks


def test_the_root_spans_the_profile_and_children_are_sorted_by_name_left_to_right():
    tree = flame_tree(WEIGHTS, SAMPLES, threshold=0)
    nodes = by_path(tree)
    assert tree["total_weight"] == 1_000_000
    assert tree["total_samples"] == 1000
    assert tree["merged"] == 0
    assert nodes["all"] == {
        "name": "all",
        "depth": 0,
        "start": 0.0,
        "width": 100.0,
        "self": 0.0,
        "samples": 1000,
        "weight": 1_000_000,
        "parent": -1,
    }
    # flamegraph.pl's order: kworker before nginx, accept < handle < log.
    assert [n["name"] for n in tree["nodes"] if n["depth"] == 1] == ["kworker", "nginx"]
    assert nodes["kworker"]["start"] == 0.0 and nodes["kworker"]["width"] == 19.0
    assert nodes["nginx"]["start"] == 19.0 and nodes["nginx"]["width"] == 81.0
    assert [(n["name"], n["start"], n["width"]) for n in tree["nodes"] if n["depth"] == 3] == [
        ("accept", 19.0, 10.0),
        ("handle", 29.0, 70.0),
        ("log", 99.0, 1.0),
    ]
    handle = nodes["nginx;main;handle"]
    assert handle["self"] == 5.0
    assert handle["samples"] == 700
    assert handle["weight"] == 700_000
    leaf = nodes["nginx;main;handle;ssl_write;p256_point_mul"]
    assert leaf["depth"] == 5
    assert leaf["self"] == leaf["width"] == 40.0


def test_children_fit_inside_their_parent_and_widths_add_up_to_the_parent():
    tree = flame_tree(random_stacks(500, seed=7), {}, threshold=0)
    nodes = tree["nodes"]
    children: dict[int, list[dict]] = {}
    for index, node in enumerate(nodes):
        if index:
            parent = nodes[node["parent"]]
            # Parents come first, one level down, and hold their children.
            assert node["parent"] < index
            assert node["depth"] == parent["depth"] + 1
            # (Give or take the rounding to a millionth of a percent.)
            assert node["start"] >= parent["start"] - 1e-5
            assert node["start"] + node["width"] <= parent["start"] + parent["width"] + 1e-5
        children.setdefault(node["parent"], []).append(node)
    for index, node in enumerate(nodes):
        below = children.get(index, [])
        # Side by side, no gap, no overlap; what is left is the frame's own share.
        position = node["start"]
        for child in below:
            assert child["start"] == pytest.approx(position, abs=1e-5)
            position += child["width"]
        assert node["self"] + sum(c["width"] for c in below) == pytest.approx(
            node["width"], abs=1e-5
        )
        assert node["weight"] >= sum(c["weight"] for c in below)


def test_a_profile_with_weights_only_has_no_sample_counts():
    tree = flame_tree({"main;work": 0.75, "main;idle": 0.25}, {}, threshold=0)
    assert tree["total_samples"] is None
    assert {n["samples"] for n in tree["nodes"]} == {None}
    assert by_path(tree)["main;work"]["width"] == 75.0


def test_frames_narrower_than_the_threshold_are_merged_into_one_other_per_parent():
    # log (1 %) and its child stay at 1 %; at 2 % they go, and so does nothing else.
    assert "nginx;main;log" in by_path(flame_tree(WEIGHTS, SAMPLES, threshold=1))
    tree = flame_tree(WEIGHTS, SAMPLES, threshold=2)
    nodes = by_path(tree)
    assert "nginx;main;log" not in nodes
    other = nodes["nginx;main;[other]"]
    assert (other["width"], other["self"], other["samples"], other["weight"]) == (
        1.0,
        1.0,
        10,
        10_000,
    )
    # Among its siblings by name ("[" sorts before lower case letters, as in Perl).
    assert [n["name"] for n in tree["nodes"] if n["depth"] == 3] == ["[other]", "accept", "handle"]
    assert tree["merged"] == 1
    assert nodes["nginx;main"]["width"] == 81.0  # the parent keeps its width


def test_two_small_frames_under_one_parent_make_one_other():
    weights = {"main;a": 970, "main;b": 6, "main;c": 4, "main;c;d": 20}
    tree = flame_tree(weights, {}, threshold=1.5)
    nodes = by_path(tree)
    assert [n["name"] for n in tree["nodes"] if n["depth"] == 2] == ["[other]", "a", "c"]
    assert nodes["main;[other]"]["width"] == pytest.approx(0.6)
    assert nodes["main;c;d"]["width"] == pytest.approx(2.0)
    assert tree["merged"] == 1
    tree = flame_tree(weights, {}, threshold=3)
    assert [n["name"] for n in tree["nodes"] if n["depth"] == 2] == ["[other]", "a"]
    assert by_path(tree)["main;[other]"]["weight"] == 30
    assert tree["merged"] == 2  # b and c (with d, which c called)


@pytest.mark.parametrize("threshold", [0, 0.5, 1, 2, 10, 50])
def test_the_graph_cuts_what_merge_small_frames_cuts(threshold):
    # The graph grows its own tree, but draws the very stacks the folded export writes.
    # (Few and short enough to stay below MAX_NODES even when every frame is drawn.)
    for weights in (WEIGHTS, random_stacks(200, seed=3, deepest=8)):
        profile = FoldedProfile(weights=weights, samples={})
        merged = merge_small_frames(profile, percent=threshold)
        assert own_weights(flame_tree(weights, {}, threshold=threshold)) == merged.weights


def test_twenty_thousand_stacks_give_a_few_thousand_nodes_quickly():
    weights = random_stacks(20_000, seed=1)
    samples = {stack: weight // 10_007 for stack, weight in weights.items()}
    # About 0.2 s of CPU here; CPU time, which a busy machine does not stretch as it does
    # the clock's.
    with within_a_second("20,000 stacks into a flame tree", budget=5.0):
        tree = flame_tree(weights, samples)
    assert len(tree["nodes"]) <= MAX_NODES
    assert tree["merged"] > 1000
    assert tree["nodes"][0]["samples"] == sum(samples.values())
    assert sum(n["self"] for n in tree["nodes"]) == pytest.approx(100.0)
    assert len(json.dumps(tree)) < 2_000_000


def test_asking_for_every_frame_raises_the_threshold_to_fit_the_browser():
    weights = random_stacks(20_000, seed=2)
    tree = flame_tree(weights, {}, threshold=0)
    assert len(tree["nodes"]) <= MAX_NODES
    assert tree["threshold"] > 0
    # The frames kept are the widest: none narrower than the threshold it reports.
    kept = [n for n in tree["nodes"] if n["name"] != "[other]"]
    assert min(n["width"] for n in kept) >= tree["threshold"] - 1e-6
    assert sum(n["self"] for n in tree["nodes"]) == pytest.approx(100.0)


def test_an_empty_profile_is_a_root_alone():
    tree = flame_tree({}, {})
    assert tree["nodes"] == [
        {
            "name": "all",
            "depth": 0,
            "start": 0.0,
            "width": 0.0,
            "self": 0.0,
            "samples": 0,
            "weight": 0,
            "parent": -1,
        }
    ]
    with pytest.raises(ValueError, match="threshold"):
        flame_tree(WEIGHTS, SAMPLES, threshold=-1)


# Side A spends 61 % in p256_point_mul (a slow crypto build), B 0.4 % and the rest elsewhere.
SIDE_A = {
    "nginx;handle;ssl_write;p256_point_mul": 610,
    "nginx;handle;parse": 190,
    "nginx;handle;ssl_write": 200,
}
SIDE_B = {
    "nginx;handle;ssl_write;p256_point_mul": 8,
    "nginx;handle;ssl_write;p256_point_mul_nistz256": 1192,
    "nginx;handle;parse": 800,
}


def test_the_diff_normalises_each_side_and_gives_the_delta_in_points():
    tree = diff_tree(SIDE_A, SIDE_B, threshold=0)
    nodes = by_path(tree)
    assert (tree["total_a"], tree["total_b"]) == (1000, 2000)
    assert tree["nodes"][0] | {"width": 100.0} == {
        "name": "all",
        "depth": 0,
        "start": 0.0,
        "width": 100.0,
        "parent": -1,
        "a": 100.0,
        "b": 100.0,
        "delta": 0.0,
        "only": None,
    }
    mul = nodes["nginx;handle;ssl_write;p256_point_mul"]
    assert (mul["a"], mul["b"], mul["delta"], mul["only"]) == (61.0, 0.4, -60.6, None)
    # Both shapes, averaged: (61 + 0.4) / 2.
    assert mul["width"] == pytest.approx(30.7)
    parse = nodes["nginx;handle;parse"]
    assert (parse["a"], parse["b"], parse["delta"]) == (19.0, 40.0, 21.0)
    assert nodes["nginx;handle"]["width"] == 100.0
    assert tree["missing"] == []


def test_frames_on_one_side_only_say_which():
    tree = diff_tree(SIDE_A, SIDE_B, threshold=0)
    nistz = by_path(tree)["nginx;handle;ssl_write;p256_point_mul_nistz256"]
    assert (nistz["a"], nistz["b"], nistz["only"]) == (0.0, 59.6, "b")
    only_a = by_path(diff_tree({"x;y": 1, "x;z": 1}, {"x;y": 1}, threshold=0))["x;z"]
    assert (only_a["a"], only_a["b"], only_a["delta"], only_a["only"]) == (50.0, 0.0, -50.0, "a")


def test_the_self_measure_compares_what_each_frame_ran_itself():
    nodes = by_path(diff_tree(SIDE_A, SIDE_B, threshold=0, measure="self"))
    write = nodes["nginx;handle;ssl_write"]
    assert (write["a"], write["b"], write["delta"]) == (20.0, 0.0, -20.0)
    # The frame is on both sides, only its own time is not.
    assert write["only"] is None
    assert nodes["nginx;handle"]["a"] == 0.0
    # The shape is the same whatever is measured.
    assert (
        write["width"]
        == by_path(diff_tree(SIDE_A, SIDE_B, threshold=0))["nginx;handle;ssl_write"]["width"]
    )


def test_one_sides_shape_lists_the_frames_it_lacks_instead_of_drawing_them():
    tree = diff_tree(SIDE_A, SIDE_B, threshold=0, shape="a")
    nodes = by_path(tree)
    assert "nginx;handle;ssl_write;p256_point_mul_nistz256" not in nodes
    assert nodes["nginx;handle;ssl_write;p256_point_mul"]["width"] == 61.0
    # B's numbers still count all of B: ssl_write is 60 % of B, nistz256 included.
    assert nodes["nginx;handle;ssl_write"]["b"] == 60.0
    assert tree["missing"] == [
        {
            "name": "p256_point_mul_nistz256",
            "stack": "nginx;handle;ssl_write;p256_point_mul_nistz256",
            "depth": 4,
            "share": 59.6,
        }
    ]
    assert tree["missing_rest"] == {"frames": 0, "share": 0.0}
    # In B's shape nothing is missing: every frame of A is also in B.
    shaped_b = diff_tree(SIDE_A, SIDE_B, threshold=0, shape="b")
    assert shaped_b["missing"] == []
    assert by_path(shaped_b)["nginx;handle;parse"]["width"] == 40.0
    assert sum(n["width"] for n in shaped_b["nodes"] if n["depth"] == 4) == 60.0


def test_missing_frames_below_the_threshold_are_only_counted():
    a = {"main;work": 1000}
    b = {"main;work": 900, "main;gc": 95, "main;jit": 5}
    tree = diff_tree(a, b, threshold=1, shape="a")
    assert [m["name"] for m in tree["missing"]] == ["gc"]
    assert tree["missing_rest"] == {"frames": 1, "share": 0.5}


def test_the_diff_merges_frames_narrow_in_the_shape_and_adds_up_both_sides():
    a = {"main;hot": 990, "main;cold1": 6, "main;cold2": 4}
    b = {"main;hot": 960, "main;cold1": 10, "main;cold3": 30}
    tree = diff_tree(a, b, threshold=1)
    nodes = by_path(tree)
    # cold1 (0.8 % in the mean shape) and cold2 (0.2 %) go; cold3 (1.5 %) stays.
    other = nodes["main;[other]"]
    assert (other["a"], other["b"], other["width"], other["delta"]) == (1.0, 1.0, 1.0, 0.0)
    assert other["only"] is None
    assert nodes["main;cold3"]["only"] == "b"
    assert tree["merged"] == 2


def test_a_diff_of_twenty_thousand_stacks_a_side_stays_small_and_quick():
    a, b = random_stacks(20_000, seed=1), random_stacks(20_000, seed=2)
    with within_a_second("a diff of 20,000 stacks a side", budget=10.0):
        tree = diff_tree(a, b)
    assert len(tree["nodes"]) <= MAX_NODES
    for node in tree["nodes"]:
        assert node["delta"] == pytest.approx(node["b"] - node["a"], abs=1e-5)
    assert tree["nodes"][0]["a"] == tree["nodes"][0]["b"] == 100.0


def test_the_diff_refuses_unknown_options():
    with pytest.raises(ValueError, match="shape"):
        diff_tree(SIDE_A, SIDE_B, shape="c")
    with pytest.raises(ValueError, match="measure"):
        diff_tree(SIDE_A, SIDE_B, measure="samples")
    with pytest.raises(ValueError, match="threshold"):
        diff_tree(SIDE_A, SIDE_B, threshold=-0.1)
