"""No import cycle in the code, counting the imports written inside functions (a cycle
closed only at call time is still a cycle: the two modules cannot be understood, tested or
split apart) and the registries that import their package's modules by name."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGES = ("app", "investigations", "collectors")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    """Every module of the packages by name; a compiled extension (its C source: it may not
    be built here) counts as a module that imports nothing."""
    found = {
        _module_name(path): path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
    }
    for package in PACKAGES:
        for source in (ROOT / package).rglob("*.c"):
            found.setdefault(_module_name(source), source)
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(tree: ast.AST):
    """Every node, at any depth (functions included), but not what only a type checker
    imports."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                yield child
                yield from _walk(child)
            continue
        yield node
        yield from _walk(node)


def _set_constants(tree: ast.Module) -> dict[str, set[str]]:
    """Module-level NAME = {"a", "b"} (a registry's list of modules to leave out)."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Set | ast.Tuple | ast.List):
            values = {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = values
    return found


def _string_constants(tree: ast.Module) -> dict[str, str]:
    return {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def _registry_imports(name: str, path: Path, tree: ast.Module, modules: dict) -> set[str]:
    """A registry that imports a package's modules by computed name
    (importlib.import_module(f"{package}.{module.name}") over pkgutil.iter_modules): an edge
    to each of them, less those it names as left out (`if module.name not in LEFT_OUT`)."""
    own = name if path.name == "__init__.py" else name.rpartition(".")[0]
    sets, strings = _set_constants(tree), _string_constants(tree)
    bound = _bound_packages(tree, strings)
    packages: set[str] = set()
    left_out: set[str] = set()
    lazy: set[str] = set()
    for node in _walk(tree):
        if isinstance(node, ast.Compare) and any(isinstance(op, ast.NotIn) for op in node.ops):
            for comparator in node.comparators:
                if isinstance(comparator, ast.Name) and comparator.id in sets:
                    left_out |= sets[comparator.id]
        if not (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and not isinstance(node.args[0], ast.Constant)
        ):
            continue
        argument = node.args[0]
        head = argument.values[0] if isinstance(argument, ast.JoinedStr) else argument
        if isinstance(head, ast.FormattedValue):
            head = head.value
        if isinstance(head, ast.Name) and head.id == "__name__":
            packages.add(own)
        elif isinstance(head, ast.Name) and head.id in strings:
            packages.add(strings[head.id])
        elif (
            isinstance(head, ast.Attribute)
            and head.attr == "__name__"
            and isinstance(head.value, ast.Name)
            and head.value.id in bound
        ):
            packages.add(bound[head.value.id])
        elif named := _module_names_written(tree, modules):
            lazy |= named  # a lazy attribute table: {"package.module": (names...)}
        else:
            raise AssertionError(
                f"{name}:{node.lineno}: a computed import this test cannot follow; name its "
                "package in a module-level constant (PACKAGE = '...') or use __name__"
            )
    return lazy | {
        other
        for package in packages
        for other in modules
        if other.rpartition(".")[0] == package and other.rpartition(".")[2] not in left_out
    }


def _module_names_written(tree: ast.Module, modules: dict) -> set[str]:
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in modules
    }


def _bound_packages(tree: ast.Module, strings: dict[str, str]) -> dict[str, str]:
    """package = import_module("a.b") (or of a constant): the name, bound to "a.b"."""
    bound = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute | ast.Name)
            and getattr(node.value.func, "attr", getattr(node.value.func, "id", ""))
            == "import_module"
            and node.value.args
        ):
            argument = node.value.args[0]
            if isinstance(argument, ast.Constant):
                value = argument.value
            elif isinstance(argument, ast.Name) and argument.id in strings:
                value = strings[argument.id]
            else:
                continue
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound[target.id] = value
    return bound


def _imports(name: str, path: Path, modules: dict) -> set[str]:
    if path.suffix != ".py":
        return set()
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in _walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in modules else base)
    found |= _registry_imports(name, path, tree, modules)
    return {target for target in found if target in modules and target != name}


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_imports_inside_functions_and_the_registries():
    graph = import_graph()

    # Inside a function body (the task's own service), and the registries' computed names.
    assert "investigations.services.ladder_results" in graph["investigations.tasks"]
    assert "investigations.kinds.facts" in graph["investigations.kinds.loader"]
    assert "investigations.runs.facts" in graph["investigations.kinds.facts"]
    assert "investigations.services.targets" in graph["investigations.jobs.sweeper"]
    assert "investigations.views.ladders" in graph["investigations.apps"]
    assert "collectors.stacks.folded" in graph["collectors.stacks"]


def test_a_cycle_is_found_however_long():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_the_code():
    found = cycles(import_graph())

    assert found == [], "Import cycles (each a group of modules that import each other):\n" + (
        "\n".join(" <-> ".join(group) for group in found)
    )
