"""refchecker._spacy: spaCy (and lemminflect, which imports it) loaded without torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def test_the_local_checks_parse_without_importing_torch_and_torch_still_imports():
    code = (
        "import json, sys\n"
        "from truthguard.refchecker._lemmas import lemmas\n"
        "from truthguard.refchecker.structure import parse\n"
        "found = dict(lemmas('wrote'))\n"
        "doc = parse('The bridge was not finished in 1932.')\n"
        "loaded = 'torch' in sys.modules\n"
        "import thinc.compat\n"
        "import torch\n"
        "print(json.dumps([found, [t.dep_ for t in doc], loaded, thinc.compat.has_torch,"
        " torch.ones(2).sum().item()]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=dict(os.environ), capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    found, deps, loaded, thinc_torch, two = json.loads(out.stdout.strip().splitlines()[-1])
    assert found == {"VERB": ["write"]} and "neg" in deps
    assert loaded is False and thinc_torch is False  # torch was never imported for spaCy
    assert two == 2.0  # and stays importable for anything else


def test_spacy_uses_torch_when_the_process_loaded_it_first():
    code = (
        "import json, torch\n"
        "from truthguard.refchecker.structure import parse\n"
        "parse('The bridge opened in 1932.')\n"
        "import thinc.compat\n"
        "print(json.dumps(thinc.compat.has_torch))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=dict(os.environ), capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) is True
