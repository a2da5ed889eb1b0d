"""test_api_doc.py - clients/python/API.txt, the API reference pydoc makes
from the docstrings (scripts/python_api.py, `make python-api`), is what the
docstrings give now, and documents every operation of protocol/openapi.json
with its method and path."""
import importlib.util
import json
import os

from conftest import ROOT

API = os.path.join(ROOT, "clients", "python", "API.txt")


def generated():
    spec = importlib.util.spec_from_file_location("python_api", os.path.join(ROOT, "scripts", "python_api.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.render()


def test_api_reference_is_up_to_date():
    with open(API) as f:
        have = f.read()
    want = generated()
    if have != want:
        a, b = have.splitlines(), want.splitlines()
        k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        raise AssertionError("clients/python/API.txt is out of date with the docstrings (run `make python-api`): "
                             "first difference at line %d:\n  file:      %r\n  docstrings: %r"
                             % (k + 1, a[k] if k < len(a) else "<end>", b[k] if k < len(b) else "<end>"))


def test_api_reference_documents_every_operation():
    with open(API) as f:
        text = f.read()
    spec = json.load(open(os.path.join(ROOT, "protocol", "openapi.json")))
    ops = [(m.upper(), p, o["operationId"]) for p, v in spec["paths"].items() for m, o in v.items()]
    assert len(ops) >= 20
    for m, p, oid in ops:
        i = text.find("\n |  %s(self" % oid)
        assert i >= 0, "%s has no entry in API.txt" % oid
        assert text[i:i + 400].find("%s %s" % (m, p)) >= 0, "%s's entry does not name %s %s" % (oid, m, p)
    for name in ("class Stream", "class Frame", "class Recording", "class FluidError", "particles(self",
                 "stream(self"):
        assert name in text, name
