"""The docstrings carried into the stubs (for IDEs) are the runtime's: every docstring of a
module, class, function or method in ``tfrec/*.pyi`` must equal the docstring of the object it
describes, as ``inspect.getdoc`` cleans both, so a docstring edited in one place and not the
other fails here. Objects whose runtime lookup fails (the torch classes without PyTorch) are
left out and counted.

    python python/typing/check_stub_docs.py [STUB_DIR]
"""

import ast
import importlib
import inspect
import pathlib
import sys


def documented(tree):
    """``(dotted name, docstring)`` of the module and every class and function with one."""
    doc = ast.get_docstring(tree)
    if doc:
        yield "", doc

    def walk(body, prefix):
        for node in body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + node.name
                doc = ast.get_docstring(node)
                if doc and not any(
                    isinstance(d, ast.Name) and d.id == "overload" or isinstance(d, ast.Attribute) and d.attr == "overload"
                    for d in node.decorator_list
                ):
                    yield name, doc
                if isinstance(node, ast.ClassDef):
                    yield from walk(node.body, name + ".")

    yield from walk(tree.body, "")


def lookup(module, dotted):
    obj = module
    for part in filter(None, dotted.split(".")):
        obj = inspect.getattr_static(obj, part) if inspect.isclass(obj) else getattr(obj, part)
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if isinstance(obj, property):
            obj = obj.fget
    return obj


def main(argv):
    here = pathlib.Path(__file__).resolve().parents[2]
    stub_dir = pathlib.Path(argv[1]) if len(argv) > 1 else here / "crates" / "tfrec-py" / "python" / "tfrec"
    checked, skipped, wrong = 0, 0, []
    for stub in sorted(stub_dir.glob("*.pyi")):
        name = "tfrec" if stub.stem == "__init__" else f"tfrec.{stub.stem}"
        module = importlib.import_module(name)
        for dotted, doc in documented(ast.parse(stub.read_text(), str(stub))):
            try:
                obj = lookup(module, dotted)
            except (AttributeError, ImportError):
                skipped += 1
                continue
            runtime = inspect.getdoc(obj) if dotted else inspect.cleandoc(module.__doc__ or "")
            checked += 1
            if (runtime or "").strip() != inspect.cleandoc(doc).strip():
                wrong.append(f"{name}.{dotted}".rstrip("."))
    for w in wrong:
        print(f"stub docstring differs from the runtime's: {w}", file=sys.stderr)
    status = "ok" if not wrong else f"{len(wrong)} differ"
    print(f"Success: {checked} docstrings equal the runtime's ({skipped} not found at run time)" if not wrong
          else f"stub docstrings: {status} of {checked}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
