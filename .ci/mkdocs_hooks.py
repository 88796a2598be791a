"""MkDocs hooks: read the house docstrings' ``Example:`` sections as examples.

The style guide writes one ``Example:`` block per public class; griffe's Google parser knows only
``Examples:`` and would render the doctest lines as Markdown (``>>>`` as block quotes).
"""

from griffe._internal.docstrings import google
from griffe._internal.enumerations import DocstringSectionKind

google._section_kind.setdefault("example", DocstringSectionKind.examples)
